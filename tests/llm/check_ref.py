#!/usr/bin/python3
"""Checks kiln's reference decoder (tests/llm/ref, the tool kiln_ref_llama) against llama.cpp
(node-llama-cpp, tests/llm/oracle.mjs), the two oracles of issue 14 against each other:

1. random llama and qwen2 GGUFs (grouped-query attention, tied and untied classifier) written
   by tests/llm/gguf_write.py in F32, F16, BF16, Q8_0 and Q4_0, and turned by llama.cpp's own
   llama-quantize (tests/llm/build_llama_quantize.sh) from the F32 file into Q4_K_M (Q4_K and
   Q6_K tensors), Q6_K and Q4_0: the teacher-forced logits of both must agree;
2. greedy tokens of the committed models/llm/fortunes-llama-f32.gguf (and -q8_0) from "The":
   equal.

    /usr/bin/python3 tests/llm/check_ref.py --ref BUILD/kiln_ref_llama [--quantize LLAMA_QUANTIZE]
                                            [--keep DIR]

Without --quantize the llama-quantize files are skipped (said so in the output).

Tolerance: max |ref - llama.cpp| / max |llama.cpp logit| over all positions of a file. Both
sides read the same stored weights, so what differs is llama.cpp's arithmetic on activations:
  F32 1e-3: the KV cache is kept in F16 (a relative rounding of 2^-11 of K and V);
  F16 2e-3: also the activations are rounded to F16 before each dot product with F16 weights;
  BF16 1e-2: activations rounded to BF16 (8 bits of mantissa) for the dot products;
  Q8_0, Q4_0 3e-2: activations quantized to 8 bits per block of 32 (Q8_0) before the dot
  product with a quantized block, in every matrix of every layer;
  Q4_K_M, Q6_K 3e-2: the same with activations quantized per 256 (Q8_K, one f32 scale).
These random models have large logits (|logit| up to ~30) and no trained structure that
would damp the rounding, so the measured ratios (printed) are a few 1e-4 for F32 up to ~1e-2
for the quantized types; a wrong block layout, scale index, RoPE pairing or GQA map moves the
logits by a good part of the logits themselves (a deliberate Q4_K or Q6_K scale bug: 0.16 to 1.5). Exit 1 on a mismatch.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import gguf_read  # noqa: E402
import gguf_write as gw  # noqa: E402
import spm_vocab  # noqa: E402

CASES = [
    # name, arch, untied, heads, kv_heads
    ("llama-tied-gqa", "llama", False, 4, 2),
    ("qwen2-untied-gqa", "qwen2", True, 4, 1),
]
# Rows of 256 (the super-block of Q4_K / Q6_K) in every matrix, so that llama-quantize keeps
# the requested types instead of falling back to types the reference does not read.
DIM, LAYERS, FFN = 256, 2, 512
WRITER_TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0"]
QUANTIZE_TYPES = {"Q4_K_M": "q4_k_m", "Q6_K": "q6_k", "Q4_0": "lq-q4_0"}
TOLERANCE = {"f32": 1e-3, "f16": 2e-3, "bf16": 1e-2, "q8_0": 3e-2, "q4_0": 3e-2,
             "q4_k_m": 3e-2, "q6_k": 3e-2, "lq-q4_0": 3e-2}
GGML_TYPE_NAMES = {0: "F32", 1: "F16", 2: "Q4_0", 8: "Q8_0", 12: "Q4_K", 14: "Q6_K", 30: "BF16"}


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def oracle(*args):
    return json.loads(run("node", os.path.join(HERE, "oracle.mjs"), *args))


def write_random(path, name, arch, untied, heads, kv_heads, tname, vocab):
    weights = gw.random_llama_weights(np.random.default_rng(len(name)), vocab_size=len(vocab["tokens"]),
                                      dim=DIM, layers=LAYERS, ffn=FFN, heads=heads, kv_heads=kv_heads,
                                      untied=untied, biases=arch == "qwen2")
    w = gw.GGUFWriter()
    gw.llama_metadata(w, arch=arch, name=name, context=64, dim=DIM, layers=LAYERS, ffn=FFN, heads=heads,
                      kv_heads=kv_heads, rope_base=10000.0, eps=1e-5, vocab=vocab)
    gw.llama_tensors(w, weights, LAYERS, gw.TYPE_NAMES[tname], tied=not untied)
    w.write(path)


def tensor_types(path):
    """The ggml type names the matrices of a file use, e.g. "Q4_K+Q6_K"."""
    _meta, infos, _data, _base = gguf_read.read_header(path)
    names = {GGML_TYPE_NAMES.get(t, f"type{t}") for _name, dims, t, _off in infos if len(dims) == 2}
    return "+".join(sorted(names))


def compare(ref, path, tname, tokens, folder):
    npy = os.path.join(folder, os.path.basename(path) + ".npy")
    run(ref, "logits", path, "--tokens", ",".join(map(str, tokens)), "--out", npy)
    ours = np.load(npy).astype(np.float64)
    theirs = np.array(oracle("logits", path, "--tokens", ",".join(map(str, tokens)))["logits"], dtype=np.float64)
    if ours.shape != theirs.shape:
        print(f"FAIL {os.path.basename(path)}: shapes {ours.shape} vs {theirs.shape}")
        return False
    diff = np.abs(ours - theirs)
    ratio = diff.max() / np.abs(theirs).max()
    ok = ratio <= TOLERANCE[tname]
    print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path):28s} {tensor_types(path):10s} "
          f"max|diff| {diff.max():.3e}  /max|logit| {ratio:.2e} (tolerance {TOLERANCE[tname]:.0e})  "
          f"argmax equal {np.mean(ours.argmax(1) == theirs.argmax(1)):.2f}")
    return ok


def greedy_failures(ref):
    failures = 0
    for t in ("f32", "q8_0"):
        path = os.path.join(ROOT, "models", "llm", f"fortunes-llama-{t}.gguf")
        theirs = oracle("greedy", path, "--prompt", "The", "-n", "64")
        ours = [int(x) for x in run(ref, "greedy", path, "--tokens", ",".join(map(str, theirs["prompt_ids"])),
                                    "-n", "64").split()]
        ok = ours == theirs["tokens"]
        same = next((i for i, (a, b) in enumerate(zip(ours, theirs["tokens"])) if a != b), min(len(ours), len(theirs["tokens"])))
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} greedy fortunes-llama-{t}: {len(ours)} tokens, equal prefix {same}")
    return failures


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ref", required=True, help="the kiln_ref_llama binary")
    ap.add_argument("--quantize", help="llama.cpp's llama-quantize binary (omit: skip its files)")
    ap.add_argument("--keep", help="folder to keep the GGUF files and logits in")
    args = ap.parse_args()
    folder = args.keep or tempfile.mkdtemp(prefix="kiln-ref-")
    os.makedirs(folder, exist_ok=True)
    vocab = spm_vocab.byte_vocab_with_pieces(spm_vocab.DEFAULT_RANDOM_PIECES)
    rng = np.random.default_rng(11)
    tokens = [spm_vocab.BOS] + [int(t) for t in rng.integers(3, len(vocab["tokens"]), size=15)]
    failures = greedy_failures(args.ref)
    checked = 2
    if not args.quantize:
        print("SKIP llama-quantize files (Q4_K_M, Q6_K, Q4_0): no --quantize binary")
    for name, arch, untied, heads, kv_heads in CASES:
        files = []
        for tname in WRITER_TYPES:
            path = os.path.join(folder, f"{name}-{tname}.gguf")
            write_random(path, name, arch, untied, heads, kv_heads, tname, vocab)
            files.append((path, tname))
        if args.quantize:
            for qtype, tname in QUANTIZE_TYPES.items():
                path = os.path.join(folder, f"{name}-{tname}.gguf")
                run(args.quantize, files[0][0], path, qtype)
                files.append((path, tname))
        for path, tname in files:
            failures += not compare(args.ref, path, tname, tokens, folder)
            checked += 1
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
