#!/usr/bin/python3
"""A GGUF (version 3, or 2 on request) writer of our own, written from the public format
description: a header, typed metadata key-value pairs, tensor descriptors, then the tensor
data, each tensor at an offset that is a multiple of the alignment.

Used as a module (GGUFWriter, quantize_*, llama_metadata) by the tests and by
models/llm/train.py, and as a command line that writes random small llama/qwen2 models:

    /usr/bin/python3 tests/llm/gguf_write.py random OUT.gguf --type q8_0 --seed 1 \
        [--dim 64 --layers 2 --heads 4 --kv-heads 2 --ffn 128 --context 128 \
         --untied --arch qwen2 --rope-base 10000 --version 3 --alignment 32]
    /usr/bin/python3 tests/llm/gguf_write.py every-type OUT.gguf [--version 2] [--alignment 64]

Tensors are given as numpy arrays in the usual row-major (torch) shape, e.g. a linear
layer's weight [out, in]; GGUF lists dimensions fastest-first, so it is written with dims
(in, out). Block-quantized types quantize along the fastest (last numpy) dimension, which
must then be a multiple of the block size (32).
"""

import argparse
import os
import struct
import sys

import numpy as np

GGUF_MAGIC = b"GGUF"

# Metadata value types of the GGUF format.
UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)

_SCALAR_PACK = {
    UINT8: "<B", INT8: "<b", UINT16: "<H", INT16: "<h", UINT32: "<I", INT32: "<i",
    FLOAT32: "<f", BOOL: "<?", UINT64: "<Q", INT64: "<q", FLOAT64: "<d",
}
_SCALAR_NUMPY = {
    UINT8: "<u1", INT8: "<i1", UINT16: "<u2", INT16: "<i2", UINT32: "<u4", INT32: "<i4",
    FLOAT32: "<f4", BOOL: "<u1", UINT64: "<u8", INT64: "<i8", FLOAT64: "<f8",
}

# ggml tensor types this writer produces (their numbers in the ggml type enum).
GGML_F32, GGML_F16, GGML_Q4_0, GGML_Q8_0, GGML_BF16 = 0, 1, 2, 8, 30
TYPE_NAMES = {"f32": GGML_F32, "f16": GGML_F16, "bf16": GGML_BF16, "q8_0": GGML_Q8_0, "q4_0": GGML_Q4_0}

QK = 32  # elements per block of Q8_0 and Q4_0


def _round_half_away(x):
    """C roundf: halves go away from zero (numpy's round goes to even)."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def quantize_q8_0(x):
    """Q8_0 blocks of 32: f16 scale d = amax/127, then 32 int8 q = round(x/d); x ~ q*d."""
    blocks = np.asarray(x, dtype=np.float32).reshape(-1, QK)
    amax = np.abs(blocks).max(axis=1)
    d = (amax / 127.0).astype(np.float32)
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
    q = np.clip(_round_half_away(blocks * inv[:, None]), -127, 127).astype(np.int8)
    out = np.empty((blocks.shape[0], 2 + QK), dtype=np.uint8)
    out[:, :2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q.view(np.uint8)
    return out.tobytes()


def dequantize_q8_0(data, count):
    raw = np.frombuffer(data, dtype=np.uint8).reshape(-1, 2 + QK)
    d = raw[:, :2].copy().view("<f2").astype(np.float32)
    q = raw[:, 2:].copy().view(np.int8).astype(np.float32)
    return (q * d).reshape(-1)[:count]


def quantize_q4_0(x):
    """Q4_0 blocks of 32: f16 scale d = m/-8 where m is the element of largest magnitude
    (sign kept), nibbles q = clamp(floor(x/d + 8.5), 0, 15), value (q - 8)*d; byte j holds
    element j in its low nibble and element j+16 in its high nibble."""
    blocks = np.asarray(x, dtype=np.float32).reshape(-1, QK)
    idx = np.abs(blocks).argmax(axis=1)
    m = blocks[np.arange(blocks.shape[0]), idx]
    d = (m / -8.0).astype(np.float32)
    inv = np.divide(1.0, d, out=np.zeros_like(d), where=d != 0)
    q = np.clip(np.floor(blocks * inv[:, None] + 8.5), 0, 15).astype(np.uint8)
    out = np.empty((blocks.shape[0], 2 + QK // 2), dtype=np.uint8)
    out[:, :2] = d.astype("<f2").view(np.uint8).reshape(-1, 2)
    out[:, 2:] = q[:, :QK // 2] | (q[:, QK // 2:] << 4)
    return out.tobytes()


def dequantize_q4_0(data, count):
    raw = np.frombuffer(data, dtype=np.uint8).reshape(-1, 2 + QK // 2)
    d = raw[:, :2].copy().view("<f2").astype(np.float32)
    packed = raw[:, 2:]
    q = np.concatenate([packed & 0x0F, packed >> 4], axis=1).astype(np.float32)
    return ((q - 8.0) * d).reshape(-1)[:count]


def to_bf16(x):
    """BF16: the upper 16 bits of the f32, rounded to nearest even (NaN kept quiet)."""
    bits = np.asarray(x, dtype="<f4").reshape(-1).view("<u4").astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
    nan = np.isnan(np.asarray(x, dtype=np.float32).reshape(-1))
    rounded[nan] = (bits[nan] >> 16) | 0x40
    return rounded.astype("<u2").tobytes()


def tensor_bytes(array, ggml_type):
    """The data of a tensor in a ggml type, as bytes."""
    a = np.ascontiguousarray(array, dtype=np.float32)
    if ggml_type == GGML_F32:
        return a.astype("<f4").tobytes()
    if ggml_type == GGML_F16:
        return a.astype("<f2").tobytes()
    if ggml_type == GGML_BF16:
        return to_bf16(a)
    if ggml_type in (GGML_Q8_0, GGML_Q4_0):
        if a.ndim == 0 or a.shape[-1] % QK != 0:
            raise ValueError(f"block-quantized tensor needs a fastest dimension that is a multiple of {QK}, got shape {a.shape}")
        return quantize_q8_0(a) if ggml_type == GGML_Q8_0 else quantize_q4_0(a)
    raise ValueError(f"unsupported ggml type {ggml_type}")


def stored_values(array, ggml_type):
    """The f32 values a reader gets back from `array` written as `ggml_type`."""
    a = np.ascontiguousarray(array, dtype=np.float32)
    data = tensor_bytes(a, ggml_type)
    if ggml_type == GGML_F32:
        return a.copy()
    if ggml_type == GGML_F16:
        return np.frombuffer(data, dtype="<f2").astype(np.float32).reshape(a.shape)
    if ggml_type == GGML_BF16:
        bits = np.frombuffer(data, dtype="<u2").astype(np.uint32) << 16
        return bits.view(np.float32).reshape(a.shape)
    dequantize = dequantize_q8_0 if ggml_type == GGML_Q8_0 else dequantize_q4_0
    return dequantize(data, a.size).reshape(a.shape)


def _pack_string(s):
    b = s.encode("utf-8") if isinstance(s, str) else bytes(s)
    return struct.pack("<Q", len(b)) + b


def _pack_value(vtype, value):
    if vtype == STRING:
        return _pack_string(value)
    if vtype == ARRAY:
        raise ValueError("arrays are written with add_array")
    return struct.pack(_SCALAR_PACK[vtype], value)


def _pack_array(elem_type, values):
    head = struct.pack("<IQ", elem_type, len(values))
    if elem_type == STRING:
        return head + b"".join(_pack_string(v) for v in values)
    if elem_type == ARRAY:
        # Nested arrays: each value is a pair (element type, values).
        return head + b"".join(_pack_array(t, v) for t, v in values)
    if elem_type == BOOL:
        return head + np.asarray(values, dtype=bool).astype("<u1").tobytes()
    return head + np.asarray(values).astype(_SCALAR_NUMPY[elem_type]).tobytes()


class GGUFWriter:
    def __init__(self, alignment=32, version=3):
        if alignment <= 0 or alignment % 8 != 0:
            raise ValueError("GGUF alignment must be a positive multiple of 8")
        self.alignment = alignment
        self.version = version
        self.kv = []       # (key, packed type + value)
        self.tensors = []  # (name, dims fastest-first, ggml type, data)
        if alignment != 32:
            self.add("general.alignment", UINT32, alignment)

    def add(self, key, vtype, value):
        self.kv.append((key, struct.pack("<I", vtype) + _pack_value(vtype, value)))

    def add_array(self, key, elem_type, values):
        self.kv.append((key, struct.pack("<I", ARRAY) + _pack_array(elem_type, values)))

    def add_tensor(self, name, array, ggml_type=GGML_F32):
        a = np.asarray(array)
        dims = tuple(reversed(a.shape)) if a.ndim else (1,)
        self.tensors.append((name, dims, ggml_type, tensor_bytes(a, ggml_type)))

    def add_raw_tensor(self, name, dims_fastest_first, ggml_type, data):
        """A tensor given as already-encoded bytes (e.g. a type this writer cannot make)."""
        self.tensors.append((name, tuple(dims_fastest_first), ggml_type, bytes(data)))

    def _pad(self, n):
        return (-n) % self.alignment

    def to_bytes(self):
        out = bytearray(GGUF_MAGIC)
        out += struct.pack("<IQQ", self.version, len(self.tensors), len(self.kv))
        for key, packed in self.kv:
            out += _pack_string(key) + packed
        offset = 0
        for name, dims, ggml_type, data in self.tensors:
            out += _pack_string(name) + struct.pack("<I", len(dims))
            out += struct.pack(f"<{len(dims)}Q", *dims)
            out += struct.pack("<IQ", ggml_type, offset)
            offset += len(data) + self._pad(len(data))
        out += b"\0" * self._pad(len(out))
        for _, _, _, data in self.tensors:
            out += data + b"\0" * self._pad(len(data))
        return bytes(out)

    def write(self, path):
        with open(path, "wb") as f:
            f.write(self.to_bytes())


def llama_metadata(w, *, arch, name, context, dim, layers, ffn, heads, kv_heads, rope_base,
                   eps, vocab):
    """The architecture keys llama.cpp reads for `llama` (and `qwen2`, the same set under its
    own prefix), plus the tokenizer. `vocab` is a dict with tokens, scores, types and the
    special ids (see tests/llm/spm_vocab.py)."""
    w.add("general.architecture", STRING, arch)
    w.add("general.name", STRING, name)
    w.add("general.file_type", UINT32, 0)
    w.add(f"{arch}.context_length", UINT32, context)
    w.add(f"{arch}.embedding_length", UINT32, dim)
    w.add(f"{arch}.block_count", UINT32, layers)
    w.add(f"{arch}.feed_forward_length", UINT32, ffn)
    w.add(f"{arch}.attention.head_count", UINT32, heads)
    w.add(f"{arch}.attention.head_count_kv", UINT32, kv_heads)
    w.add(f"{arch}.rope.freq_base", FLOAT32, rope_base)
    w.add(f"{arch}.rope.dimension_count", UINT32, dim // heads)
    w.add(f"{arch}.attention.layer_norm_rms_epsilon", FLOAT32, eps)
    w.add(f"{arch}.vocab_size", UINT32, len(vocab["tokens"]))
    w.add("tokenizer.ggml.model", STRING, "llama")
    w.add_array("tokenizer.ggml.tokens", STRING, vocab["tokens"])
    w.add_array("tokenizer.ggml.scores", FLOAT32, vocab["scores"])
    w.add_array("tokenizer.ggml.token_type", INT32, vocab["types"])
    w.add("tokenizer.ggml.unknown_token_id", UINT32, vocab["unk"])
    w.add("tokenizer.ggml.bos_token_id", UINT32, vocab["bos"])
    w.add("tokenizer.ggml.eos_token_id", UINT32, vocab["eos"])
    w.add("tokenizer.ggml.add_bos_token", BOOL, True)
    w.add("tokenizer.ggml.add_eos_token", BOOL, False)
    w.add("tokenizer.ggml.add_space_prefix", BOOL, True)


def llama_tensor_names(keys, layers, tied=False):
    """Our state-dict names (those of tests/llm/llama_torch.py) -> llama.cpp's tensor names,
    in file order, for the keys present (biases only where the model has them)."""
    pairs = [("tok_embeddings.weight", "token_embd.weight")]
    for i in range(layers):
        p = f"layers.{i}."
        pairs.append((p + "attention_norm.weight", f"blk.{i}.attn_norm.weight"))
        for short, ours in (("q", "wq"), ("k", "wk"), ("v", "wv"), ("output", "wo")):
            pairs.append((p + f"attention.{ours}.weight", f"blk.{i}.attn_{short}.weight"))
            pairs.append((p + f"attention.{ours}.bias", f"blk.{i}.attn_{short}.bias"))
        pairs.append((p + "ffn_norm.weight", f"blk.{i}.ffn_norm.weight"))
        pairs.append((p + "feed_forward.w1.weight", f"blk.{i}.ffn_gate.weight"))
        pairs.append((p + "feed_forward.w2.weight", f"blk.{i}.ffn_down.weight"))
        pairs.append((p + "feed_forward.w3.weight", f"blk.{i}.ffn_up.weight"))
    pairs.append(("norm.weight", "output_norm.weight"))
    if not tied:
        pairs.append(("output.weight", "output.weight"))
    return {ours: theirs for ours, theirs in pairs if ours in keys}


def llama_tensors(w, weights, layers, ggml_type, tied=False):
    """Writes the weights of a llama in llama.cpp's tensor names. `weights` maps our names
    to numpy arrays. Vectors (norm weights, biases) stay F32, as llama.cpp's own files keep
    them; the token embedding and the matrices get `ggml_type`."""
    for ours, theirs in llama_tensor_names(weights.keys(), layers, tied).items():
        a = weights[ours]
        w.add_tensor(theirs, a, ggml_type if a.ndim == 2 else GGML_F32)


def random_llama_weights(rng, *, vocab_size, dim, layers, ffn, heads, kv_heads, untied, biases):
    head_dim = dim // heads

    def m(rows, cols):
        return (rng.standard_normal((rows, cols)) / np.sqrt(cols)).astype(np.float32)

    def norm(n):
        return (1.0 + 0.1 * rng.standard_normal(n)).astype(np.float32)

    w = {"tok_embeddings.weight": rng.standard_normal((vocab_size, dim)).astype(np.float32),
         "norm.weight": norm(dim)}
    for i in range(layers):
        p = f"layers.{i}."
        w[p + "attention_norm.weight"] = norm(dim)
        w[p + "attention.wq.weight"] = m(heads * head_dim, dim)
        w[p + "attention.wk.weight"] = m(kv_heads * head_dim, dim)
        w[p + "attention.wv.weight"] = m(kv_heads * head_dim, dim)
        w[p + "attention.wo.weight"] = m(dim, heads * head_dim)
        if biases:
            for ours, n in (("wq", heads * head_dim), ("wk", kv_heads * head_dim), ("wv", kv_heads * head_dim)):
                w[p + f"attention.{ours}.bias"] = (0.1 * rng.standard_normal(n)).astype(np.float32)
        w[p + "ffn_norm.weight"] = norm(dim)
        w[p + "feed_forward.w1.weight"] = m(ffn, dim)
        w[p + "feed_forward.w2.weight"] = m(dim, ffn)
        w[p + "feed_forward.w3.weight"] = m(ffn, dim)
    if untied:
        w["output.weight"] = m(vocab_size, dim)
    return w


def pad_vocab(vocab, size):
    """Grows vocab to size tokens (the shapes of real models: 32000 for the llama family) with
    normal pieces no text merges into ("\u2581kiln<i>" at scores below every real piece's)."""
    for i in range(len(vocab["tokens"]), size or 0):
        vocab["tokens"].append(f"\u2581kiln{i}")
        vocab["scores"].append(-1000.0 - i)
        vocab["types"].append(1)


def _cmd_random(args):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import spm_vocab

    rng = np.random.default_rng(args.seed)
    vocab = spm_vocab.byte_vocab_with_pieces(spm_vocab.DEFAULT_RANDOM_PIECES)
    pad_vocab(vocab, args.vocab)
    weights = random_llama_weights(
        rng, vocab_size=len(vocab["tokens"]), dim=args.dim, layers=args.layers, ffn=args.ffn,
        heads=args.heads, kv_heads=args.kv_heads, untied=args.untied, biases=args.arch == "qwen2")
    w = GGUFWriter(alignment=args.alignment, version=args.version)
    llama_metadata(w, arch=args.arch, name=f"random-{args.arch}", context=args.context, dim=args.dim,
                   layers=args.layers, ffn=args.ffn, heads=args.heads, kv_heads=args.kv_heads,
                   rope_base=args.rope_base, eps=1e-5, vocab=vocab)
    llama_tensors(w, weights, args.layers, TYPE_NAMES[args.type], tied=not args.untied)
    w.write(args.out)


def every_type_file(alignment=32, version=3):
    """A GGUF that is no model: one key of each metadata type, arrays of each element type
    (empty and nested too), and a small tensor of each tensor type (1-D to 4-D), for readers."""
    w = GGUFWriter(alignment=alignment, version=version)
    w.add("general.architecture", STRING, "kiln-test")
    values = {UINT8: 200, INT8: -100, UINT16: 60000, INT16: -30000, UINT32: 4000000000, INT32: -2000000000,
              FLOAT32: 1.5, BOOL: True, STRING: "h\u00e9llo", UINT64: 2**63 + 5, INT64: -2**62, FLOAT64: -0.25}
    for vtype, value in values.items():
        w.add(f"test.scalar.{vtype}", vtype, value)
        w.add_array(f"test.array.{vtype}", vtype, [value, value])
    w.add_array("test.array.empty", INT32, [])
    w.add_array("test.array.nested", ARRAY, [(INT32, [1, 2, 3]), (STRING, ["a", "bc"])])
    rng = np.random.default_rng(3)
    shapes = {"f32": (3,), "f16": (2, 5), "bf16": (2, 3, 4), "q8_0": (2, 1, 3, 64), "q4_0": (4, 32)}
    for tname, shape in shapes.items():
        w.add_tensor(f"test.{tname}", rng.standard_normal(shape).astype(np.float32), TYPE_NAMES[tname])
    return w


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("random", help="write a llama (or qwen2) with random weights")
    r.add_argument("out")
    r.add_argument("--type", choices=sorted(TYPE_NAMES), default="f32")
    r.add_argument("--arch", choices=["llama", "qwen2"], default="llama")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--dim", type=int, default=64)
    r.add_argument("--layers", type=int, default=2)
    r.add_argument("--heads", type=int, default=4)
    r.add_argument("--kv-heads", type=int, default=2)
    r.add_argument("--ffn", type=int, default=128)
    r.add_argument("--context", type=int, default=128)
    r.add_argument("--vocab", type=int, default=0, help="pad the vocabulary to this many tokens (default: the random vocabulary's size)")
    r.add_argument("--rope-base", type=float, default=10000.0)
    r.add_argument("--untied", action="store_true", help="a separate output.weight (default: tied to token_embd)")
    r.add_argument("--version", type=int, choices=[2, 3], default=3)
    r.add_argument("--alignment", type=int, default=32)
    e = sub.add_parser("every-type", help="write a file with every metadata and tensor type (no model)")
    e.add_argument("out")
    e.add_argument("--version", type=int, choices=[2, 3], default=3)
    e.add_argument("--alignment", type=int, default=32)
    args = ap.parse_args(argv)
    if args.cmd == "random":
        _cmd_random(args)
    elif args.cmd == "every-type":
        every_type_file(args.alignment, args.version).write(args.out)


if __name__ == "__main__":
    main()
