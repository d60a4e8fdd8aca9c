#!/usr/bin/python3
"""Compares the logits kiln computed for a token sequence (test_llm_import logits: JSON
{"n_vocab": V, "logits": [[...V], ...]}, a row per token) with the torch llama of
tests/llm/llama_torch.py in float64 on the same GGUF file and, with --oracle, with llama.cpp's
(oracle.mjs logits). Prints the largest absolute differences as JSON and fails when one is
above its tolerance.

    /usr/bin/python3 tests/llm/compare_logits.py KILN.json MODEL.gguf --tokens 1,2,3 [--oracle]
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_model  # noqa: E402
import gguf_read  # noqa: E402
import llama_torch  # noqa: E402


def main():
    p = argparse.ArgumentParser()
    p.add_argument("kiln")
    p.add_argument("model")
    p.add_argument("--tokens", required=True)
    p.add_argument("--oracle", action="store_true", help="also compare with llama.cpp (oracle.mjs)")
    p.add_argument("--torch-tolerance", type=float, default=1e-3)
    # llama.cpp keeps its KV cache in f16, so its logits differ from exact ones by about 1e-3.
    p.add_argument("--oracle-tolerance", type=float, default=1e-2)
    args = p.parse_args()
    ids = [int(t) for t in args.tokens.split(",")]
    ours = np.array(json.load(open(args.kiln))["logits"], dtype=np.float64)
    meta, tensors = gguf_read.read(args.model)
    arch = meta["general.architecture"]
    if meta.get(arch + ".rope.scaling.type") == "linear":
        # llama.cpp's linear RoPE scaling: every angle of position p is that of p / factor.
        factor, tables = meta[arch + ".rope.scaling.factor"], llama_torch.rope_tables
        llama_torch.rope_tables = lambda hd, pos, base: tables(hd, pos.double() / factor, base)
    model = check_model.torch_model(meta, tensors).double()
    with torch.no_grad():
        ref = model(torch.tensor([ids]))[0].numpy()
    report = {"tokens": len(ids), "max_abs_logit": float(np.abs(ref).max()),
              "max_abs_diff_torch": float(np.abs(ours - ref).max())}
    ok = ours.shape == ref.shape and report["max_abs_diff_torch"] <= args.torch_tolerance
    if args.oracle:
        theirs = np.array(check_model.oracle("logits", args.model, "--tokens", args.tokens)["logits"])
        report["max_abs_diff_llama_cpp"] = float(np.abs(ours - theirs).max())
        report["max_abs_diff_torch_vs_llama_cpp"] = float(np.abs(ref - theirs).max())
        ok = ok and report["max_abs_diff_llama_cpp"] <= args.oracle_tolerance
    print(json.dumps(report))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
