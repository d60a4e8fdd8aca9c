#!/usr/bin/python3
"""bench_models.py — the models of kiln's model benchmark (issue 15) and their ONNX export.

Benchmark support (not part of kiln); driven by bench/model_bench.sh, imported by torch_bench.py.

  bench_models.py export OUTDIR [NAME...]
      Writes OUTDIR/<name>_op17/{model.onnx, input_<i>.npy, output_<j>.npy} (PyTorch's outputs
      for those inputs) for every model, or the named ones, through tests/models/export_models.py's
      export_one (same seed rule: the sum of the name's characters; same graph checks).
  bench_models.py list
      Prints the model names, one a line, in the order the tables show them.

The models:
- the six of tests/models/export_models.py, built exactly as the real-model tests build them
  (random BatchNorm statistics), except the BERT-like encoder, which the benchmark runs at
  batch 1 (the test runs batch 2 to exercise padding masks);
- torchvision 0.14 ResNet-50, MobileNetV3-Large, DenseNet-121, ConvNeXt-T and ViT-B/16 with
  weights=None (nothing downloaded). A random network's default BatchNorm statistics (mean 0,
  variance 1) let activations grow or vanish layer after layer until the logits hardly depend on
  the input; here the running statistics are those of two batches of random images passed in
  train mode, so every layer sees normalised activations and the output depends on the input
  (ViT-B/16's classifier, initialised to zero by torchvision, gets N(0, 0.02) weights);
- a GPT-2-style decoder written out below (learned positions, pre-LayerNorm blocks, fused QKV
  projection, causal mask, tanh GELU, LM head tied to the token embedding) over 64 tokens.
All export at ONNX opset 17 on 1x3x224x224 images (batch 1).
"""
import math
import os
import sys

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


def import_exporter():
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
    import export_models
    return export_models


# ---------------------------------------------------------------------------------------------
# A GPT-2-style decoder (the GPT-2 block at a smaller width and depth).

class GPT2Attention(nn.Module):
    def __init__(self, hidden, heads, max_seq):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.c_attn = nn.Linear(hidden, 3 * hidden)
        self.c_proj = nn.Linear(hidden, hidden)
        self.register_buffer("causal", torch.tril(torch.ones(max_seq, max_seq, dtype=torch.bool)), persistent=False)

    def forward(self, x):
        b, s, h = x.shape
        q, k, v = self.c_attn(x).split(h, dim=-1)
        q, k, v = (t.view(b, s, self.heads, self.head_dim).transpose(1, 2) for t in (q, k, v))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        scores = torch.where(self.causal[:s, :s], scores, torch.tensor(torch.finfo(scores.dtype).min))
        out = torch.matmul(F.softmax(scores, dim=-1), v).transpose(1, 2).reshape(b, s, h)
        return self.c_proj(out)


class GPT2Block(nn.Module):
    def __init__(self, hidden, heads, max_seq):
        super().__init__()
        self.ln_1 = nn.LayerNorm(hidden)
        self.attn = GPT2Attention(hidden, heads, max_seq)
        self.ln_2 = nn.LayerNorm(hidden)
        self.c_fc = nn.Linear(hidden, 4 * hidden)
        self.c_proj = nn.Linear(4 * hidden, hidden)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.c_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT2Decoder(nn.Module):
    def __init__(self, vocab=8192, hidden=512, heads=8, layers=4, max_seq=64):
        super().__init__()
        self.wte = nn.Embedding(vocab, hidden)
        self.wpe = nn.Embedding(max_seq, hidden)
        self.blocks = nn.ModuleList(GPT2Block(hidden, heads, max_seq) for _ in range(layers))
        self.ln_f = nn.LayerNorm(hidden)
        for m in self.modules():  # GPT-2's initialisation: N(0, 0.02), zero biases
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, std=0.02)
            if isinstance(m, nn.Linear):
                nn.init.zeros_(m.bias)

    def forward(self, input_ids):
        positions = torch.arange(input_ids.shape[1], dtype=torch.long).unsqueeze(0)
        x = self.wte(input_ids) + self.wpe(positions)
        for block in self.blocks:
            x = block(x)
        return F.linear(self.ln_f(x), self.wte.weight)  # the LM head is the embedding, as in GPT-2


def gpt2_inputs(rng, seq=64, vocab=8192):
    return [rng.integers(0, vocab, size=(1, seq), dtype=np.int64)]


# ---------------------------------------------------------------------------------------------
# Torchvision models with BatchNorm statistics measured on random images.

class UnfusedSelfAttention(nn.Module):
    """A batch-first nn.MultiheadAttention computed by its reference path
    (F.multi_head_attention_forward): in eval mode torch 1.13 runs, and so exports, its fused
    kernel aten::_native_multi_head_attention, which has no ONNX export. Same weights, same maths."""

    def __init__(self, attention):
        super().__init__()
        self.attention = attention

    def forward(self, query, key, value, need_weights=False):
        a = self.attention
        q, k, v = (t.transpose(0, 1) for t in (query, key, value))  # (seq, batch, embed)
        out, _ = F.multi_head_attention_forward(
            q, k, v, a.embed_dim, a.num_heads, a.in_proj_weight, a.in_proj_bias, a.bias_k, a.bias_v,
            a.add_zero_attn, a.dropout, a.out_proj.weight, a.out_proj.bias, training=False, need_weights=False)
        return out.transpose(0, 1), None


def calibrated_torchvision_builder(name):
    def build():
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
        if norms:
            for m in norms:
                m.reset_running_stats()
                m.momentum = None  # a plain average over the calibration batches
            model.train()
            with torch.no_grad():
                for _ in range(2):
                    model(torch.randn(4, 3, 224, 224))
        for m in model.modules():
            if isinstance(getattr(m, "self_attention", None), nn.MultiheadAttention):  # ViT's encoder blocks
                m.self_attention = UnfusedSelfAttention(m.self_attention)
            if isinstance(m, nn.Linear) and not m.weight.any():
                # ViT's classifier starts at zero (for fine-tuning), which makes every logit 0
                # whatever the input: a benchmark output that could not tell a wrong run
                nn.init.normal_(m.weight, std=0.02)
        return model.eval()
    return build


def bert_inputs_batch1(rng, seq=64, vocab=1000):
    """export_models.bert_inputs at batch 1: no padded second sequence, same value ranges."""
    input_ids = rng.integers(0, vocab, size=(1, seq), dtype=np.int64)
    attention_mask = np.ones((1, seq), dtype=np.int64)
    token_type_ids = np.zeros((1, seq), dtype=np.int64)
    token_type_ids[:, seq // 2:] = 1
    return [input_ids, attention_mask, token_type_ids]


def image_inputs(rng):
    return [rng.standard_normal((1, 3, 224, 224)).astype(np.float32)]


# The table order: CNNs by family, then the transformers. (builder, inputs, input names, output names)
OWN_MODELS = {
    "resnet50": (calibrated_torchvision_builder("resnet50"), image_inputs, ["input"], ["logits"]),
    "mobilenet_v3_large": (calibrated_torchvision_builder("mobilenet_v3_large"), image_inputs, ["input"], ["logits"]),
    "densenet121": (calibrated_torchvision_builder("densenet121"), image_inputs, ["input"], ["logits"]),
    "convnext_tiny": (calibrated_torchvision_builder("convnext_tiny"), image_inputs, ["input"], ["logits"]),
    "vit_b_16": (calibrated_torchvision_builder("vit_b_16"), image_inputs, ["input"], ["logits"]),
    "gpt2_decoder": (GPT2Decoder, gpt2_inputs, ["input_ids"], ["logits"]),
}
ORDER = ("resnet18", "resnet50", "mobilenet_v2", "mobilenet_v3_large", "efficientnet_b0", "squeezenet1_0",
         "densenet121", "convnext_tiny", "vit_b_16", "bert_encoder", "gpt2_decoder", "llama_decoder")


def model_spec(name):
    """(builder, make_inputs, input_names, output_names) of a benchmark model."""
    if name in OWN_MODELS:
        return OWN_MODELS[name]
    builder, make_inputs, input_names, output_names, _ = import_exporter().MODELS[name]
    if name == "bert_encoder":
        make_inputs = bert_inputs_batch1
    return builder, make_inputs, input_names, output_names


def read_results(path):
    """The records of model_bench.sh's results.jsonl, one dict a line; a kiln record's
    `kiln bench --json` object (under "result") merged into it."""
    import json
    with open(path) as f:
        for line in f:
            if line.strip():
                r = json.loads(line)
                yield {**r, **r.get("result", {})}


def case_dir(outdir, name):
    return os.path.join(outdir, f"{name}_op{OPSET}")


def cmd_export(outdir, names):
    exporter = import_exporter()
    exporter.OPSETS = (OPSET,)  # export_one reads the module's list: one opset is enough here
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    failed = []
    for name in names:
        try:
            exporter.export_one(name, *model_spec(name), outdir)
        except Exception as e:  # report and go on: the other models still get measured
            print(f"export of {name} FAILED: {type(e).__name__}: {e}", file=sys.stderr)
            failed.append(name)
    return 1 if failed else 0


def main(argv):
    if len(argv) == 2 and argv[1] == "list":
        print("\n".join(ORDER))
        return 0
    if len(argv) >= 3 and argv[1] == "export":
        unknown = [n for n in argv[3:] if n not in ORDER]
        if not unknown:
            return cmd_export(argv[2], argv[3:] or list(ORDER))
        print(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(ORDER)}", file=sys.stderr)
    print("usage: bench_models.py export OUTDIR [NAME...] | list", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
