#!/usr/bin/python3
"""kiln's logits on random GGUFs of every tensor type against both oracles (issue 14's first
"Done when"), and the size of llama-quantize's files compiled by kiln (ctest llm_types_oracle):

1. the models of type_models.py (llama tied with GQA 4/2, qwen2 untied with GQA 4/1; F32, F16,
   BF16, Q8_0, Q4_0 written by gguf_write.py, Q4_K_M, Q6_K, Q4_0, Q8_0 by llama-quantize) are
   compiled by kiln with --prefill 4 and run through the public API (test_llm_import logits):
   ids 0..6 in two prefill chunks (the second over the first's cache, padded), ids 7..15 by
   decode over the cache filled from the k/v outputs, so every row but the first four comes
   through the cache. Their teacher-forced logits must equal
   - llama.cpp's (oracle.mjs logits) within ORACLE_TOLERANCE of max |llama.cpp logit|, per
     type: F32 1e-3, F16 2e-3, BF16 1e-2, quantized 3e-2 (llama.cpp's F16 KV cache and its
     rounding or 8-bit quantization of the activations; check_ref.py's docstring);
   - the reference decoder's (kiln_ref_llama logits) within REF_TOLERANCE of max |ref logit|:
     both dequantize the same stored blocks exactly and compute in f32, so only the order of
     f32 sums differs (kiln's packed and blocked kernels, the reference's double sums).
2. llama-quantize's Q4_0, Q4_K_M and Q8_0 files compiled by `kiln compile` (default lengths):
   the .kiln within 10% of the .gguf.

    /usr/bin/python3 tests/llm/check_types.py --build BUILD [--quantize LLAMA_QUANTIZE] [--keep DIR]

Without --quantize the llama-quantize files are skipped (said so). Exit 1 on a mismatch.
"""
import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import type_models as tm  # noqa: E402

PREFILL, PREFILL_ROWS = 4, 7
# Relative to max |logit| (measured: up to 5.3e-7): f32 rounding of differently ordered sums over
# rows of 256-512, through two layers; a wrong scale, nibble or sub-block in one kernel, or a
# cache row in the wrong slot, moves the logits by 1e-2 or more.
REF_TOLERANCE = 1e-5
SIZE_TYPES = ("lq-q4_0", "q4_k_m", "lq-q8_0")


def kiln_logits(build, path, ids, folder):
    out = os.path.join(folder, os.path.basename(path) + ".kiln.json")
    tm.run(os.path.join(build, "tests", "llm", "test_llm_import"), "logits", path, ",".join(map(str, ids)), out,
           str(PREFILL), str(PREFILL_ROWS))
    return np.array(json.load(open(out))["logits"], dtype=np.float64)


def relative(ours, theirs):
    return float(np.abs(ours - theirs).max() / np.abs(theirs).max())


def check_logits(build, path, tname, ids, folder):
    ours = kiln_logits(build, path, ids, folder)
    ref = tm.ref_logits(os.path.join(build, "kiln_ref_llama"), path, ids, folder)
    lcpp = tm.oracle_logits(path, ids)
    if ours.shape != ref.shape or ours.shape != lcpp.shape:
        print(f"FAIL {os.path.basename(path)}: shapes kiln {ours.shape} ref {ref.shape} llama.cpp {lcpp.shape}")
        return False
    r_ref, r_lcpp = relative(ours, ref), relative(ours, lcpp)
    # The rows that came through decode (the cache path) on their own, against the reference.
    r_cache = relative(ours[PREFILL:], ref[PREFILL:])
    ok = r_ref <= REF_TOLERANCE and r_lcpp <= tm.ORACLE_TOLERANCE[tname]
    print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path):28s} {tm.tensor_types(path):10s} "
          f"kiln-ref {r_ref:.2e} (cache rows {r_cache:.2e}, tol {REF_TOLERANCE:.0e})  "
          f"kiln-llama.cpp {r_lcpp:.2e} (tol {tm.ORACLE_TOLERANCE[tname]:.0e})  "
          f"max|logit| {np.abs(lcpp).max():.1f}  argmax equal {np.mean(ours.argmax(1) == lcpp.argmax(1)):.2f}")
    return ok


def check_size(build, path, folder):
    out = os.path.join(folder, os.path.basename(path) + ".kiln")
    tm.run(os.path.join(build, "kiln"), "compile", path, "-o", out)
    g, k = os.path.getsize(path), os.path.getsize(out)
    ok = abs(k - g) <= 0.1 * g
    print(f"{'ok  ' if ok else 'FAIL'} size {os.path.basename(path):28s} {tm.tensor_types(path):10s} "
          f"gguf {g} bytes, kiln {k} bytes ({100.0 * (k - g) / g:+.1f}%, limit 10%)")
    os.remove(out)
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True, help="the build folder (kiln, kiln_ref_llama, tests/llm/test_llm_import)")
    tm.add_arguments(ap)
    args = ap.parse_args()
    with tm.folder(args, "kiln-types-") as folder:
        vocab = tm.vocab()
        ids = tm.tokens(vocab)
        if not args.quantize:
            print("SKIP llama-quantize files (Q4_K_M, Q6_K, Q4_0, Q8_0) and their sizes: no --quantize binary")
        failures = checked = 0
        for _case, path, tname in tm.write_all(folder, vocab, args.quantize):
            failures += not check_logits(args.build, path, tname, ids, folder)
            checked += 1
            if tname in SIZE_TYPES:
                failures += not check_size(args.build, path, folder)
                checked += 1
    print(f"{checked - failures} passed, {failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
