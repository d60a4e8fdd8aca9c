#!/usr/bin/python3
# make_cases.py — the ONNX models and reference outputs of the golden files that no ONNX backend
# test case covers (tests/golden/README.md), in the backend-test layout onnx_case_load reads:
# cases/<name>/model.onnx and cases/<name>/test_data_set_0/{input,output}_<i>.pb.
#
# Layer: tests (golden files). Run by regenerate.sh; deterministic (fixed seeds), references
# computed with numpy, not with kiln.
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save(root, name, model, inputs, outputs):
    d = os.path.join(root, name)
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for prefix, tensors in (("input", inputs), ("output", outputs)):
        for i, (tname, value) in enumerate(tensors):
            with open(os.path.join(data, "%s_%d.pb" % (prefix, i)), "wb") as f:
                f.write(numpy_helper.from_array(value, tname).SerializeToString())


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def layernorm_residual(root):
    # Add(x, r) read only by a LayerNormalization: one LAYERNORM step with r as its residual.
    rng = np.random.default_rng(13)
    x, r = f32(rng, 2, 4, 16), f32(rng, 2, 4, 16)
    scale, bias = f32(rng, 16), f32(rng, 16)
    nodes = [helper.make_node("Add", ["x", "r"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "scale", "bias"], ["y"], axis=-1, epsilon=1e-5)]
    graph = helper.make_graph(nodes, "layernorm_residual",
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2, 4, 16]) for n in ("x", "r")],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4, 16])],
                              [numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    s = (x + r).astype(np.float64)
    mean = s.mean(-1, keepdims=True)
    var = ((s - mean) ** 2).mean(-1, keepdims=True)
    y = ((s - mean) / np.sqrt(var + 1e-5) * scale + bias).astype(np.float32)
    save(root, "layernorm_residual", model, [("x", x), ("r", r)], [("y", y)])


def conv_pixel_rows(root):
    # A 3x3 stride-2 convolution with 16 output pixels and 32 filters (pixels as the GEMM's
    # rows, not Winograd: stride 2), then Add(r) of a tensor that exists before it: the
    # pixel-rows step's residual.
    rng = np.random.default_rng(7)
    x, r = f32(rng, 1, 8, 8, 8), f32(rng, 1, 32, 4, 4)
    w, b = f32(rng, 32, 8, 3, 3), f32(rng, 32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], kernel_shape=[3, 3], strides=[2, 2],
                              pads=[1, 1, 1, 1]),
             helper.make_node("Add", ["c", "r"], ["y"])]
    graph = helper.make_graph(nodes, "conv_pixel_rows",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 8, 8]),
                               helper.make_tensor_value_info("r", TensorProto.FLOAT, [1, 32, 4, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32, 4, 4])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((1, 32, 4, 4))
    for i in range(4):
        for j in range(4):
            patch = xp[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
            y[0, :, i, j] = np.tensordot(w.astype(np.float64), patch, axes=([1, 2, 3], [0, 1, 2]))
    y = (y + b[None, :, None, None] + r).astype(np.float32)
    save(root, "conv_pixel_rows", model, [("x", x), ("r", r)], [("y", y)])


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
    layernorm_residual(root)
    conv_pixel_rows(root)
