#!/usr/bin/python3
"""A SentencePiece-style vocabulary of our own, in the form llama.cpp reads with
tokenizer.ggml.model = "llama": ids 0 <unk>, 1 <s>, 2 </s>, 3..258 the byte tokens
<0x00>..<0xFF>, then normal pieces (single characters, then merged pieces), each with a score.

encode() is the SentencePiece BPE algorithm as llama.cpp applies it to such a vocabulary:
prefix one space, write spaces as U+2581, start from the UTF-8 characters, and repeatedly
merge the adjacent pair whose concatenation is a piece with the highest score (leftmost pair
first on a tie); a character that is no piece falls back to its UTF-8 bytes. train_pieces()
picks the merged pieces by ordinary BPE pair counting; a piece made by the k-th merge gets
score -k, so earlier (more frequent) merges win.

Used by models/llm/train.py (which trains the model on encode()'s ids) and by
tests/llm/gguf_write.py (random models). Command line:

    /usr/bin/python3 tests/llm/spm_vocab.py encode VOCAB.json TEXT   # prints ids, no BOS
"""

import heapq
import json
import re
import sys
from collections import Counter, defaultdict

SPACE = "\u2581"
UNK, BOS, EOS = 0, 1, 2
FIRST_BYTE = 3
TYPE_NORMAL, TYPE_UNKNOWN, TYPE_CONTROL, TYPE_BYTE = 1, 2, 3, 6

# The single-character pieces: U+2581 and printable ASCII but the space (which is U+2581).
# Anything else (newline, tab, non-ASCII) goes through the byte tokens.
BASE_CHARS = [SPACE] + [chr(c) for c in range(0x21, 0x7F)]

# A few merged pieces for random test models, so that their tokenizer merges as well.
DEFAULT_RANDOM_PIECES = [SPACE + "t", "he", SPACE + "the", "in", "er", SPACE + "a", "on", "re",
                         SPACE + "s", "at", "en", "nd", SPACE + "w", "or", "ll", "is"]


def byte_vocab_with_pieces(pieces):
    """Tokens, scores and types for the base vocabulary plus merged `pieces`, most
    important first."""
    tokens = ["<unk>", "<s>", "</s>"] + [f"<0x{b:02X}>" for b in range(256)]
    types = [TYPE_UNKNOWN, TYPE_CONTROL, TYPE_CONTROL] + [TYPE_BYTE] * 256
    scores = [0.0] * len(tokens)
    n_merges = len(pieces)
    for i, c in enumerate(BASE_CHARS):
        tokens.append(c)
        types.append(TYPE_NORMAL)
        scores.append(float(-(n_merges + 1 + i)))
    for k, p in enumerate(pieces):
        tokens.append(p)
        types.append(TYPE_NORMAL)
        scores.append(float(-(k + 1)))
    if len(set(tokens)) != len(tokens):
        raise ValueError("duplicate pieces in vocabulary")
    return {"tokens": tokens, "scores": scores, "types": types, "unk": UNK, "bos": BOS, "eos": EOS}


class Tokenizer:
    def __init__(self, vocab):
        self.vocab = vocab
        self.ids = {t: i for i, t in enumerate(vocab["tokens"]) if vocab["types"][i] == TYPE_NORMAL}
        self.scores = vocab["scores"]

    def encode(self, text, bos=False):
        s = (" " + text).replace(" ", SPACE) if text else ""
        syms = list(s)  # Python str: one entry per Unicode character
        n = len(syms)
        prev = list(range(-1, n - 1))
        nxt = list(range(1, n + 1))
        alive = [True] * n
        heap = []

        def push(left):
            right = nxt[left]
            if left < 0 or right >= n:
                return
            piece = syms[left] + syms[right]
            tid = self.ids.get(piece)
            if tid is not None:
                heapq.heappush(heap, (-self.scores[tid], left, piece))

        for i in range(n - 1):
            push(i)
        while heap:
            _, left, piece = heapq.heappop(heap)
            right = nxt[left] if alive[left] else n
            if not alive[left] or right >= n or syms[left] + syms[right] != piece:
                continue  # stale: one side has merged since this pair was queued
            syms[left] = piece
            alive[right] = False
            nxt[left] = nxt[right]
            if nxt[left] < n:
                prev[nxt[left]] = left
            if prev[left] >= 0:
                push(prev[left])
            push(left)
        out = [BOS] if bos else []
        i = 0 if n else n
        while i < n:
            tid = self.ids.get(syms[i])
            if tid is not None:
                out.append(tid)
            else:
                out.extend(FIRST_BYTE + b for b in syms[i].encode("utf-8"))
            i = nxt[i]
        return out

    def decode(self, ids):
        """Text of token ids (specials dropped), as llama.cpp prints it: byte tokens are
        bytes, U+2581 is a space, and the leading space of the text is removed."""
        raw = bytearray()
        for t in ids:
            ty = self.vocab["types"][t]
            if ty == TYPE_BYTE:
                raw.append(t - FIRST_BYTE)
            elif ty == TYPE_NORMAL:
                raw += self.vocab["tokens"][t].replace(SPACE, " ").encode("utf-8")
        text = raw.decode("utf-8", errors="replace")
        return text[1:] if text.startswith(" ") else text


def train_pieces(texts, n_merges):
    """BPE merges over the words of `texts` (a word: an optional U+2581 and a run of other
    base characters), counting pairs incrementally. Returns the merged pieces in order."""
    base = set(BASE_CHARS)
    words = Counter()
    for text in texts:
        s = (" " + text).replace(" ", SPACE)
        for chunk in re.split(r"[^" + re.escape("".join(BASE_CHARS)) + r"]+", s):
            for w in re.findall(SPACE + r"?[^" + SPACE + r"]+|" + SPACE + "+", chunk):
                if all(c in base for c in w):
                    words[w] += 1
    seqs = [list(w) for w in words]
    freqs = list(words.values())
    pair_count = Counter()
    where = defaultdict(set)
    for wi, seq in enumerate(seqs):
        for a, b in zip(seq, seq[1:]):
            pair_count[(a, b)] += freqs[wi]
            where[(a, b)].add(wi)
    pieces = []
    while len(pieces) < n_merges and pair_count:
        # Most frequent pair; ties by the pair itself, so the result is deterministic.
        (a, b), count = max(pair_count.items(), key=lambda kv: (kv[1], kv[0]))
        if count < 2:
            break
        merged = a + b
        pieces.append(merged)
        for wi in list(where[(a, b)]):
            seq, f = seqs[wi], freqs[wi]
            for x, y in zip(seq, seq[1:]):
                pair_count[(x, y)] -= f
                if pair_count[(x, y)] <= 0:
                    del pair_count[(x, y)]
            out, i = [], 0
            while i < len(seq):
                if i + 1 < len(seq) and seq[i] == a and seq[i + 1] == b:
                    out.append(merged)
                    i += 2
                else:
                    out.append(seq[i])
                    i += 1
            seqs[wi] = out
            for x, y in zip(out, out[1:]):
                pair_count[(x, y)] += f
                where[(x, y)].add(wi)
        del where[(a, b)]
    return pieces


def main(argv):
    if len(argv) == 3 and argv[0] == "encode":
        with open(argv[1]) as f:
            tok = Tokenizer(json.load(f))
        print(" ".join(str(t) for t in tok.encode(argv[2])))
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
