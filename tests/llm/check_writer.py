#!/usr/bin/python3
"""Checks tests/llm/gguf_write.py against llama.cpp: random llama/qwen2 models in every tensor
type the writer makes are loaded by the oracle (tests/llm/oracle.mjs), and llama.cpp's
teacher-forced logits must equal tests/llm/llama_torch.py's on the values the file holds.
A wrong dimension order, RoPE pairing, GQA mapping, tensor name or block layout changes the
logits by far more than the tolerances.

    /usr/bin/python3 tests/llm/check_writer.py [--keep DIR]

Tolerance, relative to the largest |logit| (these random models have large logits, so the
rounding below is amplified): F32/F16 1e-3 (llama.cpp keeps the KV cache in F16, and
multiplies F16 weights with F16-rounded activations); BF16 1e-2 (activations rounded to BF16,
8 bits of mantissa, for the dot products); Q8_0/Q4_0 3e-2 (activations quantized to 8 bits
per block of 32 before a dot product with a quantized block). Measured: about a third of
each or less. Exit 1 on a mismatch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_write as gw  # noqa: E402
import llama_torch  # noqa: E402
import spm_vocab  # noqa: E402

CASES = [
    # name, arch, untied, heads, kv_heads
    ("llama-tied-gqa", "llama", False, 4, 2),
    ("llama-untied-mha", "llama", True, 4, 4),
    ("qwen2-untied-gqa", "qwen2", True, 4, 1),
]
TOLERANCE = {"f32": 1e-3, "f16": 1e-3, "bf16": 1e-2, "q8_0": 3e-2, "q4_0": 3e-2}


def oracle_logits(path, tokens):
    out = subprocess.run(["node", os.path.join(HERE, "oracle.mjs"), "logits", path,
                          "--tokens", ",".join(map(str, tokens))],
                         check=True, capture_output=True, text=True)
    return np.array(json.loads(out.stdout)["logits"], dtype=np.float64)


def roundtrip_failures():
    """The llama.cpp comparison reads the file's bytes with our dequantizer, so it cannot see a
    quantizer that puts values in the wrong place: check that each block comes back within its
    rounding step (Q8_0: amax/127; Q4_0: amax/8, a step of d with the top code clamped)."""
    x = np.random.default_rng(5).standard_normal((8, 64)).astype(np.float32)
    amax = np.abs(x.reshape(-1, gw.QK)).max(axis=1, keepdims=True)
    failures = 0
    for tname, step in (("q8_0", amax / 127), ("q4_0", amax / 8), ("f16", amax * 2**-10), ("bf16", amax * 2**-7)):
        err = np.abs(gw.stored_values(x, gw.TYPE_NAMES[tname]) - x).reshape(-1, gw.QK)
        ok = bool(np.all(err <= step * 1.0001))
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} round trip {tname:5s} max error / step = {(err / step).max():.2f}")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--keep", help="folder to keep the written GGUF files in")
    args = ap.parse_args()
    torch.set_num_threads(1)
    folder = args.keep or tempfile.mkdtemp(prefix="kiln-gguf-")
    os.makedirs(folder, exist_ok=True)
    vocab = spm_vocab.byte_vocab_with_pieces(spm_vocab.DEFAULT_RANDOM_PIECES)
    dim, layers, ffn = 64, 2, 96
    rng = np.random.default_rng(7)
    tokens = [spm_vocab.BOS] + list(rng.integers(3, len(vocab["tokens"]), size=23))
    failures = roundtrip_failures()
    for name, arch, untied, heads, kv_heads in CASES:
        weights = gw.random_llama_weights(np.random.default_rng(len(name)), vocab_size=len(vocab["tokens"]),
                                          dim=dim, layers=layers, ffn=ffn, heads=heads, kv_heads=kv_heads,
                                          untied=untied, biases=arch == "qwen2")
        for tname, ttype in sorted(gw.TYPE_NAMES.items()):
            path = os.path.join(folder, f"{name}-{tname}.gguf")
            w = gw.GGUFWriter()
            gw.llama_metadata(w, arch=arch, name=name, context=64, dim=dim, layers=layers, ffn=ffn,
                              heads=heads, kv_heads=kv_heads, rope_base=10000.0, eps=1e-5, vocab=vocab)
            gw.llama_tensors(w, weights, layers, ttype, tied=not untied)
            w.write(path)
            cfg = llama_torch.Config(vocab=len(vocab["tokens"]), dim=dim, layers=layers, heads=heads,
                                     kv_heads=kv_heads, ffn=ffn, context=64, tied=not untied,
                                     biases=arch == "qwen2", rope_neox=arch == "qwen2")
            model = llama_torch.Llama(cfg)
            held = {k: (v if v.ndim == 1 else gw.stored_values(v, ttype)) for k, v in weights.items()}
            model.load_numpy_weights(held)
            with torch.no_grad():
                ours = model(torch.tensor([tokens])).double().numpy()[0]
            theirs = oracle_logits(path, tokens)
            err = np.abs(ours - theirs).max() / np.abs(theirs).max()
            ok = err <= TOLERANCE[tname]
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} {name:18s} {tname:5s} max|diff|/max|logit| = {err:.2e} "
                  f"(tolerance {TOLERANCE[tname]:.0e}), argmax equal {np.mean(ours.argmax(1) == theirs.argmax(1)):.2f}")
    print(f"{4 + sum(len(gw.TYPE_NAMES) for _ in CASES) - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
