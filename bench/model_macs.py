#!/usr/bin/python3
"""model_macs.py MODEL.onnx [--json] — the multiply-adds of one execution of an ONNX model.

Benchmark support (not part of kiln): the work the benchmark's models ask for, so that a time can
be read as a fraction of the machine's FMA peak (docs/benchmarks.md). Shapes come from ONNX's own
shape inference over the model's declared input shapes; a node whose shapes it cannot infer is
listed as unknown rather than guessed.

Counted (one multiply-add = one FMA lane-operation):
  Conv / ConvTranspose  N * M * prod(output spatial) * (C / group) * prod(kernel)
  MatMul / Gemm         prod(batch) * M * K * N   (numpy broadcasting of the batch dimensions)
  Einsum                not counted (listed as unknown)
Everything else (elementwise, normalisation, softmax, pooling) is reported as the number of
output elements it writes, since its cost is memory traffic rather than multiply-adds.

Output: one line per op type with its MACs (or elements) and share, then the total; --json
prints {"macs": total, "by_op": {...}, "elements": {...}, "unknown": [...]}.
"""
import json
import sys

import numpy as np
import onnx
from onnx import shape_inference

MAC_OPS = ("Conv", "ConvTranspose", "MatMul", "Gemm")


def shapes_of(model):
    """Name -> list of ints (None for a symbolic dimension) for every value with a known shape."""
    inferred = shape_inference.infer_shapes(model)
    g = inferred.graph
    out = {}
    for vi in list(g.value_info) + list(g.input) + list(g.output):
        dims = vi.type.tensor_type.shape.dim
        if vi.type.tensor_type.HasField("shape"):
            out[vi.name] = [d.dim_value if d.HasField("dim_value") else None for d in dims]
    for init in g.initializer:
        out[init.name] = list(init.dims)
    return out


def attr(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def known(shape):
    return shape is not None and all(d is not None for d in shape)


def node_macs(node, shapes):
    """MACs of a MAC op, or None when a shape it needs is unknown."""
    ins = [shapes.get(n) for n in node.input]
    out = shapes.get(node.output[0])
    if node.op_type in ("Conv", "ConvTranspose"):
        x, w = ins[0], ins[1]
        if not (known(x) and known(w) and known(out)):
            return None
        group = attr(node, "group", 1)
        if node.op_type == "Conv":
            # out [N, M, spatial...], w [M, C/group, kernel...]
            return int(np.prod(out[:1] + out[1:2] + out[2:], dtype=np.int64) * np.prod(w[1:], dtype=np.int64))
        # ConvTranspose: every input pixel meets every kernel tap: N * C * prod(in spatial) * (M/group) * prod(kernel)
        return int(np.prod(x, dtype=np.int64) * w[1] * np.prod(w[2:], dtype=np.int64))
    if node.op_type == "MatMul":
        a, b = ins[0], ins[1]
        if not (known(a) and known(b) and known(out)):
            return None
        k = a[-1] if len(a) > 0 else 1
        return int(np.prod(out, dtype=np.int64) * k)
    if node.op_type == "Gemm":
        a = ins[0]
        if not (known(a) and known(out)):
            return None
        k = a[0] if attr(node, "transA", 0) else a[1]
        return int(np.prod(out, dtype=np.int64) * k)
    return None


def count(model):
    shapes = shapes_of(model)
    by_op, elements, unknown = {}, {}, []

    def walk(graph):
        for node in graph.node:
            for a in node.attribute:
                if a.type == onnx.AttributeProto.GRAPH:
                    walk(a.g)
            if node.op_type in MAC_OPS:
                m = node_macs(node, shapes)
                if m is None:
                    unknown.append(node.name or node.op_type)
                else:
                    by_op[node.op_type] = by_op.get(node.op_type, 0) + m
            elif node.op_type == "Einsum":
                unknown.append(node.name or node.op_type)
            else:
                out = shapes.get(node.output[0]) if node.output else None
                if known(out):
                    elements[node.op_type] = elements.get(node.op_type, 0) + int(np.prod(out, dtype=np.int64))

    walk(model.graph)
    return {"macs": sum(by_op.values()), "by_op": by_op, "elements": elements, "unknown": unknown}


def main(argv):
    args = [a for a in argv[1:] if a != "--json"]
    if len(args) != 1 or any(a in ("-h", "--help") for a in argv[1:]):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    try:
        model = onnx.load(args[0])
    except Exception as e:  # a missing or corrupt file: one line, documented status
        print(f"model_macs.py: cannot read {args[0]}: {e}", file=sys.stderr)
        return 4
    result = count(model)
    if "--json" in argv:
        print(json.dumps(result, sort_keys=True))
        return 0
    total = result["macs"]
    for op, m in sorted(result["by_op"].items(), key=lambda kv: -kv[1]):
        print(f"{op:<14} {m / 1e9:10.4f} GMAC  {100.0 * m / total if total else 0:5.1f}%")
    print(f"{'total':<14} {total / 1e9:10.4f} GMAC")
    for op, e in sorted(result["elements"].items(), key=lambda kv: -kv[1])[:8]:
        print(f"{op:<14} {e / 1e6:10.3f} M elements written")
    if result["unknown"]:
        print("not counted (shapes unknown): " + ", ".join(result["unknown"][:10]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
