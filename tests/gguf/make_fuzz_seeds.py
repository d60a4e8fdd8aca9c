#!/usr/bin/python3
"""make_fuzz_seeds.py — writes the fuzz_gguf seed corpus (fuzz/corpus/gguf/): small valid GGUF
files (versions 2 and 3, every metadata type, nested arrays, every supported tensor type, a tiny
llama and gpt2 vocabulary) and broken ones (one per validation rule of docs/llm.md).

Layer: tests. Writes the bytes itself (the gguf Python module is not used), so every field is
under the script's control. Run: /usr/bin/python3 tests/gguf/make_fuzz_seeds.py fuzz/corpus/gguf
The output is deterministic; the committed corpus is this script's output.
"""
import os
import struct
import sys

U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
SCALAR = {U8: "<B", I8: "<b", U16: "<H", I16: "<h", U32: "<I", I32: "<i", F32: "<f", BOOL: "<B",
          U64: "<Q", I64: "<q", F64: "<d"}
# ggml types: (number, elements per block, bytes per block)
GGML = {"F32": (0, 1, 4), "F16": (1, 1, 2), "Q4_0": (2, 32, 18), "Q8_0": (8, 32, 34),
        "Q4_K": (12, 256, 144), "Q5_K": (13, 256, 176), "Q6_K": (14, 256, 210), "BF16": (30, 1, 2)}


def s(text):
    b = text.encode() if isinstance(text, str) else text
    return struct.pack("<Q", len(b)) + b


def value(vtype, v):
    """The encoding of a value of vtype; arrays are (elem_type, [elements])."""
    if vtype == STRING:
        return s(v)
    if vtype == ARRAY:
        etype, elems = v
        return struct.pack("<IQ", etype, len(elems)) + b"".join(value(etype, e) for e in elems)
    return struct.pack(SCALAR[vtype], v)


def gguf(kvs, tensors, version=3, alignment=32, pad_data=True):
    """kvs: [(key, type, value)]; tensors: [(name, dims, ggml name)], data filled with a pattern."""
    head = b"GGUF" + struct.pack("<IQQ", version, len(tensors), len(kvs))
    head += b"".join(s(k) + struct.pack("<I", t) + value(t, v) for k, t, v in kvs)
    infos, blobs, offset = b"", [], 0
    for name, dims, tname in tensors:
        num, bs, bb = GGML[tname]
        n = 1
        for d in dims:
            n *= d
        size = n // bs * bb
        infos += s(name) + struct.pack("<I", len(dims)) + b"".join(struct.pack("<Q", d) for d in dims)
        infos += struct.pack("<IQ", num, offset)
        blob = bytes((i * 7 + len(blobs)) & 0xFF for i in range(size))
        blob += b"\0" * (-len(blob) % alignment)
        blobs.append(blob)
        offset += len(blob)
    out = head + infos
    if tensors or pad_data:
        out += b"\0" * (-len(out) % alignment)
    return out + b"".join(blobs)


ALL_TYPES = [
    ("general.architecture", STRING, "llama"), ("k.u8", U8, 200), ("k.i8", I8, -100), ("k.u16", U16, 60000),
    ("k.i16", I16, -3), ("k.u32", U32, 4000000000), ("k.i32", I32, -5), ("k.f32", F32, 1.5),
    ("k.bool", BOOL, 1), ("k.u64", U64, 2**64 - 1), ("k.i64", I64, -2**63), ("k.f64", F64, -2.25),
    ("k.strs", ARRAY, (STRING, ["a", "bc", ""])),
    ("k.nested", ARRAY, (ARRAY, [(U32, [7]), (ARRAY, [(I8, [1, -1])]), (F32, [])])),
]
TENSORS = [("t.f32", [3, 2], "F32"), ("t.f16", [4], "F16"), ("t.bf16", [2, 2], "BF16"),
           ("t.q8_0", [32, 2], "Q8_0"), ("t.q4_0", [64], "Q4_0"), ("t.q4_k", [256], "Q4_K"),
           ("t.q6_k", [256], "Q6_K"), ("t.q5_k", [256], "Q5_K")]

LLAMA_VOCAB = [
    ("tokenizer.ggml.model", STRING, "llama"),
    ("tokenizer.ggml.tokens", ARRAY, (STRING, ["<unk>", "<s>", "</s>", "<0x41>", "\u2581", "a", "b", "\u2581a", "ab"])),
    ("tokenizer.ggml.scores", ARRAY, (F32, [0, 0, 0, 0, -1, -2, -3, -0.5, -0.25])),
    ("tokenizer.ggml.token_type", ARRAY, (I32, [2, 3, 3, 6, 1, 1, 1, 1, 1])),
    ("tokenizer.ggml.bos_token_id", U32, 1), ("tokenizer.ggml.eos_token_id", U32, 2),
    ("tokenizer.ggml.add_bos_token", BOOL, 1),
]
GPT2_VOCAB = [
    ("tokenizer.ggml.model", STRING, "gpt2"),
    ("tokenizer.ggml.tokens", ARRAY, (STRING, ["a", "b", "\u0120", "ab", "\u0120a"])),
    ("tokenizer.ggml.token_type", ARRAY, (I32, [1, 1, 1, 1, 1])),
    ("tokenizer.ggml.merges", ARRAY, (STRING, ["a b", "\u0120 a"])),
]


def seeds():
    valid = gguf(ALL_TYPES, TENSORS)
    yield "valid_v3_all_types.gguf", valid
    yield "valid_v2_all_types.gguf", gguf(ALL_TYPES, TENSORS, version=2)
    yield "valid_align64.gguf", gguf([("general.alignment", U32, 64)] + ALL_TYPES[:3], TENSORS[:4], alignment=64)
    yield "valid_no_tensors.gguf", gguf(ALL_TYPES[:2], [], pad_data=False)
    yield "valid_empty.gguf", gguf([], [], pad_data=False)
    yield "vocab_llama.gguf", gguf(LLAMA_VOCAB, [])
    yield "vocab_gpt2.gguf", gguf(GPT2_VOCAB, [])
    yield "bad_magic.gguf", b"GGUX" + valid[4:]
    yield "bad_version1.gguf", b"GGUF" + struct.pack("<IIIQ", 1, 0, 0, 0)
    yield "bad_version4.gguf", b"GGUF" + struct.pack("<I", 4) + valid[8:]
    yield "bad_truncated_header.gguf", valid[:20]
    yield "bad_truncated_kv.gguf", valid[:90]
    yield "bad_truncated_data.gguf", valid[:-300]
    yield "bad_huge_kv_count.gguf", b"GGUF" + struct.pack("<IQQ", 3, 0, 2**60) + valid[24:200]
    yield "bad_huge_tensor_count.gguf", b"GGUF" + struct.pack("<IQQ", 3, 2**60, 0) + b"\0" * 64
    one_kv = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + s("a")
    yield "bad_huge_array.gguf", one_kv + struct.pack("<IIQ", ARRAY, U32, 2**62) + b"\0" * 16
    yield "bad_huge_string.gguf", one_kv + struct.pack("<IQ", STRING, 2**63) + b"xx"
    yield "bad_value_type.gguf", one_kv + struct.pack("<I", 13) + b"\0" * 8
    deep = (U8, [])
    for _ in range(9):
        deep = (ARRAY, [deep])
    yield "bad_deep_nesting.gguf", gguf([("a", ARRAY, deep)], [])
    yield "bad_bool.gguf", one_kv + struct.pack("<IB", BOOL, 2) + b"\0" * 8
    yield "bad_duplicate_key.gguf", gguf([("a", U8, 1), ("b", U8, 2), ("a", U8, 3)], [])
    yield "bad_alignment_type.gguf", gguf([("general.alignment", U64, 32)], [])
    yield "bad_alignment_value.gguf", gguf([("general.alignment", U32, 48)], [])
    yield "bad_duplicate_tensor.gguf", gguf(ALL_TYPES[:1], [("w", [4], "F32"), ("w", [4], "F32")])
    yield "bad_q8_row.gguf", gguf(ALL_TYPES[:1], [("w", [33], "Q8_0")])
    # Tensor-info fields edited in place in a one-tensor file: the info starts after the kv.
    one = gguf(ALL_TYPES[:1], [("w", [4, 2], "F32")])
    info = 24 + len(s("general.architecture")) + 4 + len(s("llama"))
    dims_at = info + len(s("w")) + 4
    type_at, off_at = dims_at + 16, dims_at + 20
    yield "bad_dims_zero.gguf", one[:dims_at] + struct.pack("<Q", 0) + one[dims_at + 8:]
    yield "bad_dims_overflow.gguf", one[:dims_at] + struct.pack("<QQ", 2**40, 2**40) + one[dims_at + 16:]
    yield "bad_n_dims.gguf", one[:dims_at - 4] + struct.pack("<I", 5) + one[dims_at:]
    yield "bad_ggml_type.gguf", one[:type_at] + struct.pack("<I", 1000) + one[type_at + 4:]
    yield "bad_offset_misaligned.gguf", one[:off_at] + struct.pack("<Q", 4) + one[off_at + 8:]
    yield "bad_offset_past_end.gguf", one[:off_at] + struct.pack("<Q", 2**40) + one[off_at + 8:]
    yield "bad_data_past_end.gguf", one[:-8]


def main(out):
    os.makedirs(out, exist_ok=True)
    for name, data in seeds():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../../fuzz/corpus/gguf"))
