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
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import type_models as tm  # noqa: E402
from type_models import oracle, run  # noqa: E402

# llama-quantize's Q8_0 file is checked by check_types.py (against kiln); here its three types.
QUANTIZE_TYPES = {q: t for q, t in tm.QUANTIZE_TYPES.items() if q != "Q8_0"}
TOLERANCE = tm.ORACLE_TOLERANCE


def compare(ref, path, tname, tokens, folder):
    ours = tm.ref_logits(ref, path, tokens, folder)
    theirs = tm.oracle_logits(path, tokens)
    if ours.shape != theirs.shape:
        print(f"FAIL {os.path.basename(path)}: shapes {ours.shape} vs {theirs.shape}")
        return False
    diff = np.abs(ours - theirs)
    ratio = diff.max() / np.abs(theirs).max()
    ok = ratio <= TOLERANCE[tname]
    print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path):28s} {tm.tensor_types(path):10s} "
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
    tm.add_arguments(ap)
    args = ap.parse_args()
    tokens = tm.tokens(tm.vocab())
    failures = greedy_failures(args.ref)
    checked = 2
    if not args.quantize:
        print("SKIP llama-quantize files (Q4_K_M, Q6_K, Q4_0): no --quantize binary")
    with tm.folder(args, "kiln-ref-") as folder:
        for _case, path, tname in tm.write_all(folder, tm.vocab(), args.quantize, QUANTIZE_TYPES):
            failures += not compare(args.ref, path, tname, tokens, folder)
            checked += 1
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
