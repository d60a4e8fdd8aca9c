#!/usr/bin/python3
"""export_llama_pair.py — one llama-style decoder exported twice, as a prefill/decode pair.

Test support for weight_sharing.sh (not part of kiln). Usage: export_llama_pair.py OUTDIR

Builds export_models.py's LlamaDecoder once (fixed seed) and exports it at two sequence lengths,
OUTDIR/prefill (32 tokens) and OUTDIR/decode (8 tokens), each with model.onnx, input_0.npy and
PyTorch's output_0.npy. The two graphs hold the same weights and differ only in their shapes,
which is what `kiln compile --weight-sharing` is for.
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import export_models  # noqa: E402

PAIR = (("prefill", 32), ("decode", 8))


def main(argv):
    if len(argv) != 2:
        print("usage: export_llama_pair.py OUTDIR", file=sys.stderr)
        return 2
    torch.set_num_threads(max(1, min(2, os.cpu_count() or 1)))
    torch.manual_seed(sum(map(ord, "llama_pair")))
    model = export_models.LlamaDecoder().eval()
    for name, seq in PAIR:
        x = torch.from_numpy(np.random.default_rng(seq).integers(0, 512, size=(1, seq), dtype=np.int64))
        case = os.path.join(argv[1], name)
        os.makedirs(case, exist_ok=True)
        with torch.no_grad():
            torch.onnx.export(model, (x,), os.path.join(case, "model.onnx"), opset_version=17,
                              input_names=["input_ids"], output_names=["logits"])
            np.save(os.path.join(case, "input_0.npy"), x.numpy())
            np.save(os.path.join(case, "output_0.npy"), model(x).numpy())
        print(f"exported {name} ({seq} tokens)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
