#!/usr/bin/python3
"""export_models.py — exports real CNN and transformer models to ONNX for kiln's model tests.

Test support (not part of kiln). Usage: /usr/bin/python3 export_models.py OUTDIR [NAME...]

For every model and opset (13 and 17) it writes OUTDIR/<model>_op<N>/ holding model.onnx, one
random input per graph input (input_<i>.npy, in graph-input order) and PyTorch's outputs for them
(output_<j>.npy, in graph-output order). Weights are random under fixed seeds, so nothing is
downloaded and every run writes the same files. Models are built in eval mode; BatchNorm running
statistics are randomised too, so folding them into convolutions is really exercised.

Torchvision models are skipped, saying why, when torchvision cannot be imported. Exit status is 0
when every model that could be built was exported, 1 otherwise.
"""
import math
import os
import sys
import traceback

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

OPSETS = (13, 17)


# ---------------------------------------------------------------------------------------------
# A BERT-like encoder, written out in plain modules so the exported graph holds the ops a real
# BERT export holds: Gather embeddings, LayerNorm, MatMul/Softmax attention with an additive
# mask built from the attention_mask input, and erf GELU.

class BertSelfAttention(nn.Module):
    def __init__(self, hidden, heads):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.output = nn.Linear(hidden, hidden)

    def split_heads(self, x):
        b, s, _ = x.shape
        return x.view(b, s, self.heads, self.head_dim).permute(0, 2, 1, 3)

    def forward(self, x, additive_mask):
        q = self.split_heads(self.query(x))
        k = self.split_heads(self.key(x))
        v = self.split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_dim)
        probs = torch.softmax(scores + additive_mask, dim=-1)
        context = torch.matmul(probs, v).permute(0, 2, 1, 3)
        return self.output(context.reshape(x.shape))


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, intermediate):
        super().__init__()
        self.attention = BertSelfAttention(hidden, heads)
        self.attention_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.intermediate = nn.Linear(hidden, intermediate)
        self.gelu = nn.GELU()  # the exact (erf) form, as BERT uses
        self.output = nn.Linear(intermediate, hidden)
        self.output_norm = nn.LayerNorm(hidden, eps=1e-12)

    def forward(self, x, additive_mask):
        x = self.attention_norm(x + self.attention(x, additive_mask))
        return self.output_norm(x + self.output(self.gelu(self.intermediate(x))))


class BertEncoder(nn.Module):
    def __init__(self, vocab=1000, hidden=128, heads=4, layers=2, intermediate=512, max_positions=128):
        super().__init__()
        self.word_embeddings = nn.Embedding(vocab, hidden)
        self.position_embeddings = nn.Embedding(max_positions, hidden)
        self.token_type_embeddings = nn.Embedding(2, hidden)
        self.embedding_norm = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, intermediate) for _ in range(layers))
        self.pooler = nn.Linear(hidden, hidden)

    def forward(self, input_ids, attention_mask, token_type_ids):
        seq = input_ids.shape[1]
        positions = torch.arange(seq, dtype=torch.long).unsqueeze(0)
        x = (self.word_embeddings(input_ids) + self.position_embeddings(positions)
             + self.token_type_embeddings(token_type_ids))
        x = self.embedding_norm(x)
        # (batch, 1, 1, seq): 0 where attended, -10000 at padding, as BERT builds it
        additive_mask = (1.0 - attention_mask[:, None, None, :].to(x.dtype)) * -10000.0
        for layer in self.layers:
            x = layer(x, additive_mask)
        pooled = torch.tanh(self.pooler(x[:, 0]))
        return x, pooled


def bert_inputs(rng, batch=2, seq=64, vocab=1000):
    input_ids = rng.integers(0, vocab, size=(batch, seq), dtype=np.int64)
    attention_mask = np.ones((batch, seq), dtype=np.int64)
    attention_mask[1, seq - 20:] = 0  # the second sequence is padded
    token_type_ids = np.zeros((batch, seq), dtype=np.int64)
    token_type_ids[:, seq // 2:] = 1
    return [input_ids, attention_mask, token_type_ids]


# ---------------------------------------------------------------------------------------------
# A small llama-style decoder: RMSNorm, rotary position embeddings (rotate-half form), causal
# mask applied with masked_fill (Where), SiLU-gated MLP, untied LM head.

class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(1.0 + 0.1 * torch.randn(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


class LlamaAttention(nn.Module):
    def __init__(self, hidden, heads, max_seq):
        super().__init__()
        self.heads, self.head_dim = heads, hidden // heads
        self.q_proj = nn.Linear(hidden, hidden, bias=False)
        self.k_proj = nn.Linear(hidden, hidden, bias=False)
        self.v_proj = nn.Linear(hidden, hidden, bias=False)
        self.o_proj = nn.Linear(hidden, hidden, bias=False)
        inv_freq = 1.0 / (10000.0 ** (torch.arange(0, self.head_dim, 2).float() / self.head_dim))
        angles = torch.outer(torch.arange(max_seq).float(), inv_freq)
        angles = torch.cat((angles, angles), dim=-1)  # (max_seq, head_dim)
        self.register_buffer("cos", angles.cos(), persistent=False)
        self.register_buffer("sin", angles.sin(), persistent=False)
        causal = torch.triu(torch.ones(max_seq, max_seq, dtype=torch.bool), diagonal=1)
        self.register_buffer("causal", causal, persistent=False)

    def forward(self, x):
        b, s, _ = x.shape
        q = self.q_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        k = self.k_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        v = self.v_proj(x).view(b, s, self.heads, self.head_dim).transpose(1, 2)
        cos, sin = self.cos[:s], self.sin[:s]
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        scores = torch.matmul(q, k.transpose(2, 3)) / math.sqrt(self.head_dim)
        scores = scores.masked_fill(self.causal[:s, :s], float("-inf"))
        probs = F.softmax(scores, dim=-1)
        out = torch.matmul(probs, v).transpose(1, 2).reshape(b, s, -1)
        return self.o_proj(out)


class LlamaMLP(nn.Module):
    def __init__(self, hidden, intermediate):
        super().__init__()
        self.gate_proj = nn.Linear(hidden, intermediate, bias=False)
        self.up_proj = nn.Linear(hidden, intermediate, bias=False)
        self.down_proj = nn.Linear(intermediate, hidden, bias=False)

    def forward(self, x):
        return self.down_proj(F.silu(self.gate_proj(x)) * self.up_proj(x))


class LlamaBlock(nn.Module):
    def __init__(self, hidden, heads, intermediate, max_seq):
        super().__init__()
        self.input_norm = RMSNorm(hidden)
        self.attention = LlamaAttention(hidden, heads, max_seq)
        self.post_attention_norm = RMSNorm(hidden)
        self.mlp = LlamaMLP(hidden, intermediate)

    def forward(self, x):
        x = x + self.attention(self.input_norm(x))
        return x + self.mlp(self.post_attention_norm(x))


class LlamaDecoder(nn.Module):
    def __init__(self, vocab=512, hidden=128, heads=4, layers=2, intermediate=344, max_seq=64):
        super().__init__()
        self.embed_tokens = nn.Embedding(vocab, hidden)
        self.layers = nn.ModuleList(LlamaBlock(hidden, heads, intermediate, max_seq) for _ in range(layers))
        self.norm = RMSNorm(hidden)
        self.lm_head = nn.Linear(hidden, vocab, bias=False)

    def forward(self, input_ids):
        x = self.embed_tokens(input_ids)
        for layer in self.layers:
            x = layer(x)
        return self.lm_head(self.norm(x))


def llama_inputs(rng, seq=32, vocab=512):
    return [rng.integers(0, vocab, size=(1, seq), dtype=np.int64)]


# ---------------------------------------------------------------------------------------------
# Torchvision CNNs with random weights.

def randomise_batchnorm(model, generator):
    """Default BatchNorm statistics (mean 0, var 1, weight 1, bias 0) would make the folded
    convolutions identical to the unfolded ones; give every BatchNorm real-looking values."""
    for m in model.modules():
        if isinstance(m, nn.modules.batchnorm._BatchNorm):
            n = m.num_features
            m.running_mean.copy_(0.1 * torch.randn(n, generator=generator))
            m.running_var.copy_(0.5 + torch.rand(n, generator=generator))
            m.weight.data.copy_(1.0 + 0.1 * torch.randn(n, generator=generator))
            m.bias.data.copy_(0.1 * torch.randn(n, generator=generator))


def torchvision_builder(name):
    def build():
        import torchvision
        model = getattr(torchvision.models, name)(weights=None)
        with torch.no_grad():
            randomise_batchnorm(model, torch.Generator().manual_seed(7))
        return model
    return build


def video_builder(name):
    """torchvision.models.video.<name> with real-looking BatchNorm statistics: its 3-D
    convolutions are the cpu backend's tap-list steps."""
    def build():
        import torchvision
        model = getattr(torchvision.models.video, name)(weights=None)
        with torch.no_grad():
            randomise_batchnorm(model, torch.Generator().manual_seed(7))
        return model
    return build


def video_inputs(rng):
    # 8 frames of 56x56 (the model takes any clip its four stages can halve): a sixteenth of the
    # 16x112x112 clip it was trained on, so the test stays short.
    return [rng.standard_normal((1, 3, 8, 56, 56)).astype(np.float32)]


def image_inputs(rng):
    return [rng.standard_normal((1, 3, 224, 224)).astype(np.float32)]


# name -> (builder, input maker, input names, output names, needs torchvision)
MODELS = {
    "resnet18": (torchvision_builder("resnet18"), image_inputs, ["input"], ["logits"], True),
    "mobilenet_v2": (torchvision_builder("mobilenet_v2"), image_inputs, ["input"], ["logits"], True),
    "efficientnet_b0": (torchvision_builder("efficientnet_b0"), image_inputs, ["input"], ["logits"], True),
    "squeezenet1_0": (torchvision_builder("squeezenet1_0"), image_inputs, ["input"], ["logits"], True),
    "r3d_18": (video_builder("r3d_18"), video_inputs, ["input"], ["logits"], True),
    "bert_encoder": (BertEncoder, bert_inputs, ["input_ids", "attention_mask", "token_type_ids"],
                     ["last_hidden_state", "pooled"], False),
    "llama_decoder": (LlamaDecoder, llama_inputs, ["input_ids"], ["logits"], False),
}


def torchvision_missing_reason():
    try:
        import torchvision  # noqa: F401
        return None
    except Exception as e:  # ImportError, or a broken install raising something else
        return f"torchvision cannot be imported ({type(e).__name__}: {e})"


def export_one(name, builder, make_inputs, input_names, output_names, outdir):
    seed = sum(map(ord, name))  # fixed per model, independent of the order models are exported
    torch.manual_seed(seed)
    model = builder().eval()
    inputs = make_inputs(np.random.default_rng(seed))
    torch_inputs = tuple(torch.from_numpy(x) for x in inputs)
    with torch.no_grad():
        outputs = model(*torch_inputs)
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    for opset in OPSETS:
        case = os.path.join(outdir, f"{name}_op{opset}")
        os.makedirs(case, exist_ok=True)
        path = os.path.join(case, "model.onnx")
        with torch.no_grad():
            torch.onnx.export(model, torch_inputs, path, opset_version=opset,
                              input_names=input_names, output_names=output_names)
        check_graph_io(path, input_names, output_names)
        for i, x in enumerate(inputs):
            np.save(os.path.join(case, f"input_{i}.npy"), x)
        for j, y in enumerate(outputs):
            np.save(os.path.join(case, f"output_{j}.npy"), y.numpy())
        print(f"exported {name}_op{opset}")


def check_graph_io(path, input_names, output_names):
    """The test feeds input_<i>.npy by position, so the graph must keep every input in order
    (torch drops unused ones silently)."""
    import onnx
    graph = onnx.load(path, load_external_data=False).graph
    initializers = {t.name for t in graph.initializer}
    got_in = [v.name for v in graph.input if v.name not in initializers]
    got_out = [v.name for v in graph.output]
    if got_in != input_names or got_out != output_names:
        raise RuntimeError(f"{path}: graph inputs {got_in} / outputs {got_out}, "
                           f"expected {input_names} / {output_names}")


def main(argv):
    if len(argv) < 2:
        print("usage: export_models.py OUTDIR [NAME...]", file=sys.stderr)
        return 2
    outdir, wanted = argv[1], argv[2:] or list(MODELS)
    unknown = [n for n in wanted if n not in MODELS]
    if unknown:
        print(f"unknown model(s): {', '.join(unknown)}; known: {', '.join(MODELS)}", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    no_torchvision = torchvision_missing_reason()
    failed = []
    for name in wanted:
        builder, make_inputs, input_names, output_names, needs_torchvision = MODELS[name]
        if needs_torchvision and no_torchvision:
            print(f"skipped {name}: {no_torchvision}")
            continue
        try:
            export_one(name, builder, make_inputs, input_names, output_names, outdir)
        except Exception:
            traceback.print_exc()
            print(f"export of {name} FAILED")
            failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
