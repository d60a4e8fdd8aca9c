#!/usr/bin/python3
"""Writes GGUF LLMs that are wrong in one way each, for the importer's refusals
(check_import.sh): a small random llama (tests/llm/gguf_write.py) with one key or tensor changed.

    /usr/bin/python3 tests/llm/make_bad_gguf.py OUT_DIR

writes OUT_DIR/<case>.gguf for each case below and prints the case names.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_write as gw  # noqa: E402
import spm_vocab  # noqa: E402

DIM, LAYERS, HEADS, KV_HEADS, FFN = 64, 2, 4, 2, 128


def model(arch="llama", drop_key=None, drop_tensor=None, types=None, shapes=None, keys=None):
    """A random model; drop_key/drop_tensor leave one out, types maps a tensor name to a ggml
    type, shapes a tensor name to a numpy shape to write it with (random values), keys overrides
    metadata values."""
    rng = np.random.default_rng(5)
    vocab = spm_vocab.byte_vocab_with_pieces(spm_vocab.DEFAULT_RANDOM_PIECES)
    weights = gw.random_llama_weights(rng, vocab_size=len(vocab["tokens"]), dim=DIM, layers=LAYERS, ffn=FFN,
                                      heads=HEADS, kv_heads=KV_HEADS, untied=False, biases=arch == "qwen2")
    w = gw.GGUFWriter()
    gw.llama_metadata(w, arch=arch, name="bad", context=64, dim=DIM, layers=LAYERS, ffn=FFN, heads=HEADS,
                      kv_heads=KV_HEADS, rope_base=10000.0, eps=1e-5, vocab=vocab)
    w.kv = [(k, v) for k, v in w.kv if k != drop_key]
    for k, (vtype, value) in (keys or {}).items():
        w.kv = [(kk, v) for kk, v in w.kv if kk != k]
        w.add(k, vtype, value)
    for ours, theirs in gw.llama_tensor_names(weights.keys(), LAYERS, tied=True).items():
        if theirs == drop_tensor:
            continue
        a = weights[ours]
        if shapes and theirs in shapes:
            a = rng.standard_normal(shapes[theirs]).astype(np.float32)
        w.add_tensor(theirs, a, (types or {}).get(theirs, gw.GGML_F32))
    return w


CASES = {
    "unknown_arch": lambda: model(keys={"general.architecture": (gw.STRING, "gpt2")}),
    "no_arch": lambda: model(drop_key="general.architecture"),
    "missing_key": lambda: model(drop_key="llama.block_count"),
    "missing_tensor": lambda: model(drop_tensor="blk.1.ffn_up.weight"),
    "bad_shape": lambda: model(shapes={"blk.0.attn_k.weight": (DIM, DIM)}),
    "f16_norm": lambda: model(types={"blk.0.attn_norm.weight": gw.GGML_F16}),
    "qwen2_no_bias": lambda: model(arch="qwen2", drop_tensor="blk.0.attn_v.bias"),
    "yarn": lambda: model(keys={"llama.rope.scaling.type": (gw.STRING, "yarn")}),
    "bad_heads": lambda: model(keys={"llama.attention.head_count_kv": (gw.UINT32, 3)}),
}


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for name, make in CASES.items():
        make().write(os.path.join(out, name + ".gguf"))
        print(name)


if __name__ == "__main__":
    main()
