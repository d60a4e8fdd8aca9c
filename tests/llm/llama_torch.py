"""A llama in torch that computes the function llama.cpp's `llama` architecture computes for
the GGUF files tests/llm/gguf_write.py writes (and `qwen2`: the same with Q/K/V biases), so
that a model trained with it needs no weight permutation:

- RMSNorm: x / sqrt(mean(x^2) + eps) * weight, before attention, before the FFN, at the end.
- RoPE on Q and K of each head, by pos * theta_i with theta_i = base^(-2i/head_dim), rotating
  for `llama` ("normal" ordering) the adjacent pairs (x[2i], x[2i+1]), and for `qwen2`
  (llama.cpp's NeoX ordering, Config.rope_neox) the pairs (x[i], x[i + head_dim/2]).
- Grouped-query attention: query head h uses KV head h // (heads / kv_heads).
- Causal softmax attention scaled by 1/sqrt(head_dim), then wo.
- SwiGLU FFN: w2(silu(w1 x) * w3 x) (GGUF: ffn_gate = w1, ffn_up = w3, ffn_down = w2).
- Output: tok_embeddings (tied) or a separate output matrix.

Names of the state dict are those gguf_write.llama_tensors maps to GGUF tensor names.
"""

import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class Config:
    vocab: int
    dim: int = 128
    layers: int = 4
    heads: int = 4
    kv_heads: int = 2
    ffn: int = 384
    context: int = 256
    rope_base: float = 10000.0
    eps: float = 1e-5
    tied: bool = False
    biases: bool = False
    rope_neox: bool = False


class RMSNorm(nn.Module):
    def __init__(self, dim, eps):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps) * self.weight


def rope_tables(head_dim, positions, base):
    """cos and sin of pos * theta_i, [T, head_dim/2]."""
    i = torch.arange(0, head_dim, 2, dtype=torch.float64)
    theta = base ** (-i / head_dim)
    angles = positions.to(torch.float64)[:, None] * theta[None, :]
    return torch.cos(angles).float(), torch.sin(angles).float()


def apply_rope(x, cos, sin, neox):
    """x: [B, T, H, head_dim]; rotates the pairs (x[2i], x[2i+1]), or with `neox` the pairs
    (x[i], x[i + head_dim/2])."""
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    if neox:
        x0, x1 = x.chunk(2, dim=-1)
        return torch.cat((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1)
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    x0, x1 = pairs[..., 0], pairs[..., 1]
    return torch.stack((x0 * c - x1 * s, x0 * s + x1 * c), dim=-1).reshape(x.shape)


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.heads, self.kv_heads = cfg.heads, cfg.kv_heads
        self.head_dim = cfg.dim // cfg.heads
        self.neox = cfg.rope_neox
        self.wq = nn.Linear(cfg.dim, cfg.heads * self.head_dim, bias=cfg.biases)
        self.wk = nn.Linear(cfg.dim, cfg.kv_heads * self.head_dim, bias=cfg.biases)
        self.wv = nn.Linear(cfg.dim, cfg.kv_heads * self.head_dim, bias=cfg.biases)
        self.wo = nn.Linear(cfg.heads * self.head_dim, cfg.dim, bias=False)

    def forward(self, x, cos, sin, mask):
        b, t, _ = x.shape
        q = apply_rope(self.wq(x).view(b, t, self.heads, self.head_dim), cos, sin, self.neox)
        k = apply_rope(self.wk(x).view(b, t, self.kv_heads, self.head_dim), cos, sin, self.neox)
        v = self.wv(x).view(b, t, self.kv_heads, self.head_dim)
        group = self.heads // self.kv_heads
        k = k.repeat_interleave(group, dim=2)
        v = v.repeat_interleave(group, dim=2)
        q, k, v = (a.transpose(1, 2) for a in (q, k, v))  # [B, H, T, hd]
        scores = q @ k.transpose(-1, -2) / math.sqrt(self.head_dim) + mask
        out = F.softmax(scores, dim=-1) @ v
        return self.wo(out.transpose(1, 2).reshape(b, t, -1))


class FeedForward(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.ffn, bias=False)
        self.w2 = nn.Linear(cfg.ffn, cfg.dim, bias=False)
        self.w3 = nn.Linear(cfg.dim, cfg.ffn, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention_norm = RMSNorm(cfg.dim, cfg.eps)
        self.attention = Attention(cfg)
        self.ffn_norm = RMSNorm(cfg.dim, cfg.eps)
        self.feed_forward = FeedForward(cfg)

    def forward(self, x, cos, sin, mask):
        x = x + self.attention(self.attention_norm(x), cos, sin, mask)
        return x + self.feed_forward(self.ffn_norm(x))


class Llama(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.cfg = cfg
        self.tok_embeddings = nn.Embedding(cfg.vocab, cfg.dim)
        self.layers = nn.ModuleList(Block(cfg) for _ in range(cfg.layers))
        self.norm = RMSNorm(cfg.dim, cfg.eps)
        if not cfg.tied:
            self.output = nn.Linear(cfg.dim, cfg.vocab, bias=False)

    def forward(self, tokens):
        """tokens [B, T] -> logits [B, T, vocab], positions 0..T-1."""
        t = tokens.shape[1]
        cos, sin = rope_tables(self.cfg.dim // self.cfg.heads, torch.arange(t), self.cfg.rope_base)
        mask = torch.full((t, t), float("-inf")).triu(1)
        x = self.tok_embeddings(tokens)
        for layer in self.layers:
            x = layer(x, cos, sin, mask)
        x = self.norm(x)
        w = self.tok_embeddings.weight if self.cfg.tied else self.output.weight
        return x @ w.t()

    def numpy_weights(self):
        return {k: v.detach().float().numpy() for k, v in self.state_dict().items()}

    def load_numpy_weights(self, weights):
        self.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
