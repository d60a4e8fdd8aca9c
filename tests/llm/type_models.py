"""The random GGUF models of every tensor type that the oracle checks share (check_ref.py: the
reference decoder vs llama.cpp; check_types.py: kiln vs both): a llama (tied classifier,
grouped-query attention 4/2) and a qwen2 (untied, Q/K/V biases, GQA 4/1) written by
gguf_write.py in F32, F16, BF16, Q8_0 and Q4_0, and made from the F32 file by llama.cpp's own
llama-quantize in Q4_K_M (Q4_K + Q6_K), Q6_K, Q4_0 and Q8_0, as llama.cpp users make them.
"""
import contextlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
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
DIM, LAYERS, FFN, CONTEXT = 256, 2, 512, 64
WRITER_TYPES = ["f32", "f16", "bf16", "q8_0", "q4_0"]
# llama-quantize's type name -> our name for its file.
QUANTIZE_TYPES = {"Q4_K_M": "q4_k_m", "Q6_K": "q6_k", "Q4_0": "lq-q4_0", "Q8_0": "lq-q8_0"}
# max |logits - llama.cpp's| / max |llama.cpp's logit| allowed, per type: what llama.cpp's own
# arithmetic on activations costs (check_ref.py's docstring, docs/llm.md "Oracles").
ORACLE_TOLERANCE = {"f32": 1e-3, "f16": 2e-3, "bf16": 1e-2, "q8_0": 3e-2, "q4_0": 3e-2,
                    "q4_k_m": 3e-2, "q6_k": 3e-2, "lq-q4_0": 3e-2, "lq-q8_0": 3e-2}
GGML_TYPE_NAMES = {0: "F32", 1: "F16", 2: "Q4_0", 8: "Q8_0", 12: "Q4_K", 14: "Q6_K", 30: "BF16"}


def run(*args):
    return subprocess.run(args, check=True, capture_output=True, text=True).stdout


def oracle(*args):
    """llama.cpp (oracle.mjs, node-llama-cpp): its JSON answer."""
    return json.loads(run("node", os.path.join(HERE, "oracle.mjs"), *args))


def vocab():
    return spm_vocab.byte_vocab_with_pieces(spm_vocab.DEFAULT_RANDOM_PIECES)


def tokens(vocabulary, n=16):
    """BOS and n-1 random ids of the vocabulary (fixed seed)."""
    rng = np.random.default_rng(11)
    return [spm_vocab.BOS] + [int(t) for t in rng.integers(3, len(vocabulary["tokens"]), size=n - 1)]


def write_random(path, name, arch, untied, heads, kv_heads, tname, vocabulary):
    weights = gw.random_llama_weights(np.random.default_rng(len(name)), vocab_size=len(vocabulary["tokens"]),
                                      dim=DIM, layers=LAYERS, ffn=FFN, heads=heads, kv_heads=kv_heads,
                                      untied=untied, biases=arch == "qwen2")
    w = gw.GGUFWriter()
    gw.llama_metadata(w, arch=arch, name=name, context=CONTEXT, dim=DIM, layers=LAYERS, ffn=FFN, heads=heads,
                      kv_heads=kv_heads, rope_base=10000.0, eps=1e-5, vocab=vocabulary)
    gw.llama_tensors(w, weights, LAYERS, gw.TYPE_NAMES[tname], tied=not untied)
    w.write(path)


def write_all(folder, vocabulary, quantize=None, quantize_types=QUANTIZE_TYPES):
    """Writes every case in every type into folder (llama-quantize's types only with its binary);
    returns [(case name, path, type name)], the writer's files of a case first (F32 leading)."""
    files = []
    for name, arch, untied, heads, kv_heads in CASES:
        f32 = os.path.join(folder, f"{name}-f32.gguf")
        for tname in WRITER_TYPES:
            path = os.path.join(folder, f"{name}-{tname}.gguf")
            write_random(path, name, arch, untied, heads, kv_heads, tname, vocabulary)
            files.append((name, path, tname))
        for qtype, tname in (quantize_types.items() if quantize else ()):
            path = os.path.join(folder, f"{name}-{tname}.gguf")
            run(quantize, f32, path, qtype)
            files.append((name, path, tname))
    return files


def add_arguments(ap):
    """The options the checks over these files share."""
    ap.add_argument("--quantize", help="llama.cpp's llama-quantize binary (omit: skip its files)")
    ap.add_argument("--keep", help="folder to keep the GGUF files and logits in (default: a temporary one, removed)")


@contextlib.contextmanager
def folder(args, prefix):
    """--keep's folder, or a temporary one removed afterwards."""
    if args.keep:
        os.makedirs(args.keep, exist_ok=True)
        yield args.keep
    else:
        with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
            yield tmp


def tensor_types(path):
    """The ggml type names the matrices of a file use, e.g. "Q4_K+Q6_K"."""
    _meta, infos, _data, _base = gguf_read.read_header(path)
    names = {GGML_TYPE_NAMES.get(t, f"type{t}") for _name, dims, t, _off in infos if len(dims) == 2}
    return "+".join(sorted(names))


def ref_logits(ref, path, ids, folder):
    """kiln_ref_llama's teacher-forced logits of ids, float64 [n, vocab]."""
    npy = os.path.join(folder, os.path.basename(path) + ".ref.npy")
    run(ref, "logits", path, "--tokens", ",".join(map(str, ids)), "--out", npy)
    return np.load(npy).astype(np.float64)


def oracle_logits(path, ids):
    """llama.cpp's teacher-forced logits of ids, float64 [n, vocab]."""
    return np.array(oracle("logits", path, "--tokens", ",".join(map(str, ids)))["logits"], dtype=np.float64)
