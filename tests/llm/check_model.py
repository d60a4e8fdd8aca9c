#!/usr/bin/python3
"""Checks a llama GGUF written by tests/llm/gguf_write.py (e.g. the committed
models/llm/fortunes-llama-*.gguf) against llama.cpp (tests/llm/oracle.mjs):

1. tokenization: tests/llm/spm_vocab.py's encode of the text (BOS first) equals llama.cpp's;
2. perplexity of the text, chunks of the context length: torch (tests/llm/llama_torch.py on
   the values the file holds) and llama.cpp within --ppl-tolerance (relative);
3. greedy generation of -n tokens from --prompt: torch's tokens and llama.cpp's, printed with
   llama.cpp's text (they may part where two logits are closer than the two computations
   differ, so this is reported, not required).

    /usr/bin/python3 tests/llm/check_model.py MODEL.gguf --file models/llm/test.txt \
        [--prompt "The"] [-n 64] [--ppl-tolerance 0.005]

Prints one JSON object; exit 1 if check 1 or 2 fails.
"""
import argparse
import json
import math
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gguf_read  # noqa: E402
import gguf_write as gw  # noqa: E402
import llama_torch  # noqa: E402
import spm_vocab  # noqa: E402


def oracle(*args):
    out = subprocess.run(["node", os.path.join(HERE, "oracle.mjs"), *args], check=True,
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def torch_model(meta, tensors):
    arch = meta["general.architecture"]
    cfg = llama_torch.Config(
        vocab=len(meta["tokenizer.ggml.tokens"]), dim=meta[f"{arch}.embedding_length"],
        layers=meta[f"{arch}.block_count"], heads=meta[f"{arch}.attention.head_count"],
        kv_heads=meta[f"{arch}.attention.head_count_kv"], ffn=meta[f"{arch}.feed_forward_length"],
        context=meta[f"{arch}.context_length"], rope_base=meta[f"{arch}.rope.freq_base"],
        eps=meta[f"{arch}.attention.layer_norm_rms_epsilon"], tied="output.weight" not in tensors,
        biases="blk.0.attn_q.bias" in tensors, rope_neox=arch == "qwen2")
    model = llama_torch.Llama(cfg)
    names = gw.llama_tensor_names(model.state_dict().keys(), cfg.layers, cfg.tied)
    model.load_numpy_weights({ours: tensors[theirs] for ours, theirs in names.items()})
    return model.eval()


def torch_perplexity(model, tokens, context):
    nll, scored = 0.0, 0
    with torch.no_grad():
        for start in range(0, len(tokens) - 1, context):
            chunk = tokens[start:start + context]
            if len(chunk) < 2:
                break
            x = torch.tensor([chunk])
            logp = torch.log_softmax(model(x)[0, :-1].double(), dim=-1)
            nll -= logp.gather(1, x[0, 1:, None]).sum().item()
            scored += len(chunk) - 1
    return math.exp(nll / scored)


def torch_greedy(model, prompt_ids, n, eos):
    ids = list(prompt_ids)
    with torch.no_grad():
        for _ in range(n):
            nxt = int(model(torch.tensor([ids]))[0, -1].argmax())
            ids.append(nxt)
            if nxt == eos:
                break
    return ids[len(prompt_ids):]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--file", required=True)
    ap.add_argument("--prompt", default="The")
    ap.add_argument("-n", type=int, default=64)
    ap.add_argument("--ppl-tolerance", type=float, default=0.005)
    args = ap.parse_args()
    torch.set_num_threads(1)
    meta, tensors = gguf_read.read(args.model)
    vocab = {"tokens": meta["tokenizer.ggml.tokens"], "scores": meta["tokenizer.ggml.scores"],
             "types": meta["tokenizer.ggml.token_type"]}
    tok = spm_vocab.Tokenizer(vocab)
    text = open(args.file, encoding="utf-8").read()
    ours = tok.encode(text, bos=True)
    theirs = oracle("tokenize", args.model, "--file", args.file)["ids_special"]
    first_diff = next((i for i, (a, b) in enumerate(zip(ours, theirs)) if a != b), None)
    tokens_equal = ours == theirs

    model = torch_model(meta, tensors)
    context = model.cfg.context
    ppl_torch = torch_perplexity(model, ours, context)
    ppl_llama = oracle("perplexity", args.model, "--file", args.file, "--context", str(context))["perplexity"]
    ppl_rel = abs(ppl_torch - ppl_llama) / ppl_llama

    g = oracle("greedy", args.model, "--prompt", args.prompt, "-n", str(args.n))
    greedy_torch = torch_greedy(model, g["prompt_ids"], args.n, meta["tokenizer.ggml.eos_token_id"])
    same_prefix = next((i for i, (a, b) in enumerate(zip(g["tokens"], greedy_torch)) if a != b),
                       min(len(g["tokens"]), len(greedy_torch)))
    report = {
        "model": args.model, "text_tokens": len(ours), "tokens_equal": tokens_equal,
        "first_token_difference": first_diff if not tokens_equal else None,
        "ppl_torch": ppl_torch, "ppl_llama_cpp": ppl_llama, "ppl_relative_difference": ppl_rel,
        "greedy_prompt": args.prompt, "greedy_llama_cpp": g["tokens"], "greedy_torch": greedy_torch,
        "greedy_equal_prefix": same_prefix, "greedy_text": g["text"],
    }
    print(json.dumps(report, indent=1))
    return 0 if tokens_equal and ppl_rel <= args.ppl_tolerance else 1


if __name__ == "__main__":
    sys.exit(main())
