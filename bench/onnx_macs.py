#!/usr/bin/python3
"""onnx_macs.py MODEL.onnx — the multiply-adds of an ONNX model's MatMul, Gemm and Conv nodes.

Shapes come from onnx's shape inference (the benchmark exports have static shapes). Prints one
line per kind (a constant B or an activation times an activation; a Conv by kernel size,
depthwise apart) and the total, in millions, and the total as GFLOP (2 per multiply-add): the
figure docs/benchmarks.md divides by the FMA peak to bound a model's latency from below.
"""
import sys

import numpy as np
import onnx
from onnx import shape_inference


def shapes(graph):
    out = {}
    for vi in list(graph.value_info) + list(graph.input) + list(graph.output):
        out[vi.name] = [d.dim_value if d.HasField("dim_value") else None for d in vi.type.tensor_type.shape.dim]
    for t in graph.initializer:
        out[t.name] = list(t.dims)
    return out


def macs_by_kind(graph):
    shp, consts, kinds = shapes(graph), {t.name for t in graph.initializer}, {}
    for n in graph.node:
        y = shp.get(n.output[0])
        if n.op_type in ("MatMul", "Gemm"):
            a = shp[n.input[0]]
            trans_a = any(x.name == "transA" and x.i for x in n.attribute)
            k = a[0] if n.op_type == "Gemm" and trans_a else a[-1]
            kind = n.op_type + (" const-B" if n.input[1] in consts else " act x act")
            macs = int(np.prod(y)) * k
        elif n.op_type == "Conv":
            w = shp[n.input[1]]
            kind = "Conv depthwise" if w[1] == 1 else "Conv " + "x".join(str(d) for d in w[2:])
            macs = int(np.prod(y)) * int(np.prod(w[1:]))
        else:
            continue
        kinds[kind] = kinds.get(kind, 0) + macs
    return kinds


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__.strip().splitlines()[0])
    kinds = macs_by_kind(shape_inference.infer_shapes(onnx.load(sys.argv[1])).graph)
    total = sum(kinds.values())
    for kind, macs in sorted(kinds.items(), key=lambda kv: -kv[1]):
        print(f"{kind:20s} {macs / 1e6:10.1f} M MACs  {100 * macs / total:5.1f}%")
    print(f"{'total':20s} {total / 1e6:10.1f} M MACs = {2 * total / 1e9:.3f} GFLOP")


if __name__ == "__main__":
    main()
