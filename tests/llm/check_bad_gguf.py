#!/usr/bin/python3
"""Bad GGUF files through the compiler (ctest llm_bad_gguf, also in the sanitizer builds):
`kiln compile BAD.gguf -o x.kiln` must exit 4 (invalid input) with exactly one line on stderr,
never crash (a signal, or a sanitizer report, which also makes more than one line), and leave
no output file. The bad files are made from a small valid Q8_0 llama written by gguf_write.py:

- truncated at each of the first 512 bytes, every 23rd byte of the rest of the header (the
  tokenizer's arrays) and at 64 points through the tensor data;
- tensor and key/value counts one more, one less (a missing tensor: still exit 4), and 2^62;
- a tensor's data offset past the end of the file, at the end, and near 2^64;
- unknown tensor types (not a ggml type at all); ggml types kiln does not read (Q5_K, IQ2_XXS)
  are valid files kiln cannot run: exit 1 (unsupported), one line naming the type;
- huge dims: one dim 2^62, a product that overflows 64 bits, a zero dim, 2^31 + 1 rows;

and every file of the GGUF fuzz corpus (fuzz/corpus/gguf), each of which is refused (exit 4:
malformed, or well-formed but no llama/qwen2 model).

    /usr/bin/python3 tests/llm/check_bad_gguf.py KILN CORPUS_DIR
"""
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_write  # noqa: E402


def tensor_info_at(data, name):
    """Offset of the n_dims field of tensor `name`'s info in a GGUF header."""
    key = struct.pack("<Q", len(name)) + name.encode()
    at = data.find(key)
    assert at > 0, name
    return at + len(key)


def with_u32(data, at, v):
    return data[:at] + struct.pack("<I", v) + data[at + 4:]


def with_u64(data, at, v):
    return data[:at] + struct.pack("<Q", v & (2**64 - 1)) + data[at + 8:]


def bad_files(good):
    """(name, bytes) of the bad variants of the valid GGUF `good`."""
    tensors, kvs = struct.unpack_from("<QQ", good, 8)
    # The last tensor info ends where the data (aligned) begins: the header is everything up to
    # the end of the last info; use the first tensor's info start as a lower bound for it.
    embd = tensor_info_at(good, "token_embd.weight")
    last = tensor_info_at(good, "output_norm.weight")
    n_dims = struct.unpack_from("<I", good, last)[0]
    header_end = last + 4 + 8 * n_dims + 4 + 8
    out = []
    cuts = list(range(0, 512)) + list(range(512, header_end, 23)) + \
        [header_end + (len(good) - header_end) * i // 64 for i in range(64)]
    for cut in cuts:
        out.append((f"truncated_at_{cut}", good[:cut]))
    out.append(("truncated_last_byte", good[:-1]))
    for what, at, n in (("tensor_count", 8, tensors), ("kv_count", 16, kvs)):
        for v, tag in ((n + 1, "plus_one"), (n - 1, "minus_one"), (2**62, "huge")):
            out.append((f"{what}_{tag}", with_u64(good, at, v)))
    # embd's info: n_dims (u32), dims (2 x u64), type (u32), offset (u64).
    offset_at, type_at, dims_at = embd + 4 + 16 + 4, embd + 4 + 16, embd + 4
    out.append(("offset_past_end", with_u64(good, offset_at, len(good))))
    out.append(("offset_at_end", with_u64(good, offset_at, len(good) - header_end)))
    out.append(("offset_near_2_64", with_u64(good, offset_at, 2**64 - 32)))
    for t in (99, 2**31, 2**32 - 1):
        out.append((f"type_{t}", with_u32(good, type_at, t)))
    out.append(("dim_2_62", with_u64(good, dims_at, 2**62)))
    out.append(("dims_overflow", with_u64(with_u64(good, dims_at, 2**40), dims_at + 8, 2**40)))
    out.append(("dim_zero", with_u64(good, dims_at + 8, 0)))
    out.append(("rows_2_31_plus_1", with_u64(good, dims_at + 8, 2**31 + 1)))
    out.append(("n_dims_5", with_u32(good, embd, 5)))
    out.append(("n_dims_0", with_u32(good, embd, 0)))
    return out


# A few of the messages, printed to show what the user sees.
SHOW = {"truncated_at_100", "truncated_last_byte", "tensor_count_plus_one", "kv_count_huge", "offset_past_end",
        "type_99", "dim_2_62", "dims_overflow"}


def refused(kiln, path, folder, want=4):
    """(None when kiln compile refuses path as it should, else what went wrong; its stderr)."""
    out = os.path.join(folder, "x.kiln")
    p = subprocess.run([kiln, "compile", path, "-o", out], capture_output=True, text=True, errors="replace")
    lines = p.stderr.splitlines()
    problems = []
    if p.returncode != want:
        problems.append(f"exit {p.returncode} (want {want})")
    if len(lines) != 1:
        problems.append(f"{len(lines)} stderr lines")
    if os.path.exists(out):
        problems.append("left x.kiln")
        os.remove(out)
    return (", ".join(problems) + ": " + " | ".join(lines[:4])) if problems else None, " | ".join(lines[:4])


def main():
    if len(sys.argv) != 3:
        print("usage: check_bad_gguf.py KILN CORPUS_DIR", file=sys.stderr)
        return 2
    kiln, corpus = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory(prefix="kiln-bad-gguf-") as folder:
        good_path = os.path.join(folder, "good.gguf")
        gguf_write.main(["random", good_path, "--type", "q8_0", "--dim", "32", "--layers", "1", "--heads", "2",
                         "--ffn", "32", "--context", "8"])
        # The valid file compiles: what the variants break is the only thing wrong with them.
        subprocess.run([kiln, "compile", good_path, "-o", os.path.join(folder, "good.kiln")], check=True,
                       capture_output=True)
        good = open(good_path, "rb").read()
        cases = bad_files(good)
        for name in sorted(os.listdir(corpus)):
            cases.append(("corpus/" + name, open(os.path.join(corpus, name), "rb").read()))
        failures = 0
        for name, data in cases:
            path = os.path.join(folder, "bad.gguf")
            with open(path, "wb") as f:
                f.write(data)
            problem, message = refused(kiln, path, folder)
            if name in SHOW:
                print(f"  {name}: {message}")
            if problem:
                failures += 1
                print(f"FAIL {name}: {problem}")
        # A ggml type kiln does not read is a valid file kiln cannot run: exit 1 (unsupported), one
        # line naming it.
        embd = tensor_info_at(good, "token_embd.weight")
        for t, tname in ((13, "Q5_K"), (16, "IQ2_XXS")):
            path = os.path.join(folder, "unsupported.gguf")
            with open(path, "wb") as f:
                f.write(with_u32(good, embd + 4 + 16, t))
            problem, message = refused(kiln, path, folder, want=1)
            if problem or f"type {tname}" not in message:
                failures += 1
                print(f"FAIL type {tname}: {problem or message}")
            else:
                print(f"  type_{tname}: {message}")
        print(f"{len(cases) - failures} of {len(cases)} bad GGUF files refused with exit 4 and one error line "
              f"({len(cases) - len(os.listdir(corpus))} made from a valid model, {len(os.listdir(corpus))} from the corpus)")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
