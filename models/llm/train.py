#!/usr/bin/python3
"""Trains the tiny llama committed beside this script on the fortunes of Debian's `fortunes`
package and writes it as GGUF (F32 and Q8_0) with tests/llm/gguf_write.py.

    apt-get install -y fortunes
    /usr/bin/python3 models/llm/train.py [--out models/llm] [--steps N]

Deterministic (seeds fixed, 1 thread). Writes into --out:
    fortunes-llama-f32.gguf, fortunes-llama-q8_0.gguf   the model
    test.txt                                            the held-back 5% of the fortunes
    train-log.json                                      sizes, losses, perplexity, time
The text is a fortune file: fortunes separated by lines "%". The model is trained on the
token stream of the whole training text (BOS first), as `perplexity --file` tokenizes a file.
"""
import argparse
import glob
import json
import math
import os
import random
import re
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tests", "llm"))
import gguf_write as gw  # noqa: E402
from check_model import torch_perplexity  # noqa: E402
import llama_torch  # noqa: E402
import spm_vocab  # noqa: E402

FORTUNES = "/usr/share/games/fortunes"
SEED = 14
VOCAB_SIZE = 1024
CONFIG = dict(dim=128, layers=5, heads=4, kv_heads=2, ffn=352, context=128, rope_base=10000.0,
              eps=1e-5, tied=False)
SEPARATOR = "\n%\n"


def load_fortunes():
    """The fortunes of every text file of the package (ascii-art left out), cleaned of the
    overstriking (char, backspace) some files use for underlining."""
    docs = []
    for path in sorted(glob.glob(os.path.join(FORTUNES, "*"))):
        name = os.path.basename(path)
        if "." in name or not os.path.isfile(path) or name == "ascii-art":
            continue
        text = open(path, "rb").read().decode("utf-8", errors="replace")
        text = re.sub(".\x08", "", text)
        for doc in text.split(SEPARATOR):
            doc = "\n".join(line.rstrip() for line in doc.strip("\n").split("\n")).strip("\n")
            if doc.strip() and doc != "%":
                docs.append(doc)
    if not docs:
        sys.exit(f"no fortunes in {FORTUNES}: apt-get install -y fortunes")
    return docs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--steps", type=int, default=700)
    ap.add_argument("--batch", type=int, default=16)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(SEED)
    random.seed(SEED)
    started = time.time()

    docs = load_fortunes()
    order = list(range(len(docs)))
    random.Random(SEED).shuffle(order)
    n_test = len(docs) // 20
    test_docs = [docs[i] for i in sorted(order[:n_test])]
    train_docs = [docs[i] for i in sorted(order[n_test:])]
    train_text, test_text = SEPARATOR.join(train_docs) + "\n", SEPARATOR.join(test_docs) + "\n"
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "test.txt"), "w", encoding="utf-8") as f:
        f.write(test_text)

    n_merges = VOCAB_SIZE - 3 - 256 - len(spm_vocab.BASE_CHARS)
    vocab = spm_vocab.byte_vocab_with_pieces(spm_vocab.train_pieces(train_docs, n_merges))
    tok = spm_vocab.Tokenizer(vocab)
    train_ids = tok.encode(train_text, bos=True)
    test_ids = tok.encode(test_text, bos=True)
    print(f"{len(docs)} fortunes, {len(train_text)} train / {len(test_text)} test chars, "
          f"{len(train_ids)} / {len(test_ids)} tokens, vocabulary {len(vocab['tokens'])}", flush=True)

    cfg = llama_torch.Config(vocab=len(vocab["tokens"]), **CONFIG)
    model = llama_torch.Llama(cfg)
    for name, p in model.named_parameters():
        if p.ndim == 2:
            torch.nn.init.normal_(p, std=0.02)
    n_params = sum(p.numel() for p in model.parameters())
    print(f"{n_params} parameters", flush=True)

    data = torch.tensor(train_ids)
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, betas=(0.9, 0.95), weight_decay=0.05)
    warmup = 100
    gen = torch.Generator().manual_seed(SEED)
    t = cfg.context
    losses = []
    for step in range(args.steps):
        lr = 3e-3 * min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * step / args.steps))
        for g in opt.param_groups:
            g["lr"] = lr
        starts = torch.randint(0, len(data) - t - 1, (args.batch,), generator=gen)
        x = torch.stack([data[s:s + t] for s in starts])
        y = torch.stack([data[s + 1:s + t + 1] for s in starts])
        loss = torch.nn.functional.cross_entropy(model(x).reshape(-1, cfg.vocab), y.reshape(-1))
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(loss.item())
        if step % 100 == 0 or step == args.steps - 1:
            print(f"step {step} loss {np.mean(losses[-100:]):.3f} lr {lr:.2e} {time.time() - started:.0f}s", flush=True)
    train_seconds = time.time() - started

    model.eval()
    ppl = torch_perplexity(model, test_ids, cfg.context)
    weights = model.numpy_weights()
    files = {}
    for tname in ("f32", "q8_0"):
        path = os.path.join(args.out, f"fortunes-llama-{tname}.gguf")
        w = gw.GGUFWriter()
        gw.llama_metadata(w, arch="llama", name="fortunes-llama", context=cfg.context, dim=cfg.dim,
                          layers=cfg.layers, ffn=cfg.ffn, heads=cfg.heads, kv_heads=cfg.kv_heads,
                          rope_base=cfg.rope_base, eps=cfg.eps, vocab=vocab)
        gw.llama_tensors(w, weights, cfg.layers, gw.TYPE_NAMES[tname], tied=cfg.tied)
        w.write(path)
        files[tname] = os.path.getsize(path)
    log = {"parameters": n_params, "config": CONFIG, "vocabulary": len(vocab["tokens"]),
           "fortunes": len(docs), "test_fortunes": n_test, "train_tokens": len(train_ids),
           "test_tokens": len(test_ids), "steps": args.steps, "batch": args.batch,
           "train_seconds": round(train_seconds, 1), "final_train_loss": round(float(np.mean(losses[-100:])), 4),
           "torch_test_perplexity_f32": round(ppl, 4), "file_bytes": files}
    with open(os.path.join(args.out, "train-log.json"), "w") as f:
        json.dump(log, f, indent=1)
        f.write("\n")
    print(json.dumps(log, indent=1))


if __name__ == "__main__":
    main()
