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


def layout_ops(root):
    # The version 3 data-movement steps in one graph: Pad (constant 0.5) -> Slice (strided) ->
    # Concat with a second input -> Where on a BOOL input (a BOOL tensor of the context binary)
    # choosing between that and a third input.
    rng = np.random.default_rng(17)
    x, z = f32(rng, 1, 3, 5, 5), f32(rng, 1, 2, 3, 4)
    alt = f32(rng, 1, 5, 3, 4)
    cond = rng.random((1, 5, 3, 4)) < 0.5
    pads = np.array([0, 0, 1, 2, 0, 0, 1, 1], dtype=np.int64)
    starts, ends = np.array([1, 0], dtype=np.int64), np.array([7, 8], dtype=np.int64)
    axes, steps = np.array([2, 3], dtype=np.int64), np.array([2, 2], dtype=np.int64)
    nodes = [helper.make_node("Pad", ["x", "pads", "pad_value"], ["p"], mode="constant"),
             helper.make_node("Slice", ["p", "starts", "ends", "axes", "steps"], ["s"]),
             helper.make_node("Concat", ["s", "z"], ["c"], axis=1),
             helper.make_node("Where", ["cond", "c", "alt"], ["y"])]
    inits = [numpy_helper.from_array(pads, "pads"), numpy_helper.from_array(np.array(0.5, np.float32), "pad_value"),
             numpy_helper.from_array(starts, "starts"), numpy_helper.from_array(ends, "ends"),
             numpy_helper.from_array(axes, "axes"), numpy_helper.from_array(steps, "steps")]
    graph = helper.make_graph(nodes, "layout_ops",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 5, 5]),
                               helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 2, 3, 4]),
                               helper.make_tensor_value_info("cond", TensorProto.BOOL, [1, 5, 3, 4]),
                               helper.make_tensor_value_info("alt", TensorProto.FLOAT, [1, 5, 3, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 5, 3, 4])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    p = np.pad(x, ((0, 0), (0, 0), (1, 1), (2, 1)), constant_values=0.5)   # [1, 3, 7, 8]
    s = p[:, :, 1:7:2, 0:8:2]                                             # [1, 3, 3, 4]
    y = np.where(cond, np.concatenate([s, z], axis=1), alt).astype(np.float32)
    save(root, "layout_ops", model, [("x", x), ("z", z), ("cond", cond), ("alt", alt)], [("y", y)])


def conv3d_taps(root):
    # A 3-D convolution (3x3x3, padding 1, stride (1, 2, 2)): the cpu backend runs it as a
    # tap-list convolution, a version 3 step.
    rng = np.random.default_rng(19)
    x, w, b = f32(rng, 1, 3, 4, 6, 6), f32(rng, 8, 3, 3, 3, 3), f32(rng, 8)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["y"], kernel_shape=[3, 3, 3], strides=[1, 2, 2],
                              pads=[1, 1, 1, 1, 1, 1])]
    graph = helper.make_graph(nodes, "conv3d_taps",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 4, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 8, 4, 3, 3])],
                              [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1), (1, 1)))
    y = np.zeros((1, 8, 4, 3, 3))
    for d in range(4):
        for i in range(3):
            for j in range(3):
                patch = xp[0, :, d:d + 3, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
                y[0, :, d, i, j] = np.tensordot(w.astype(np.float64), patch, axes=([1, 2, 3, 4], [0, 1, 2, 3]))
    y = (y + b[None, :, None, None, None]).astype(np.float32)
    save(root, "conv3d_taps", model, [("x", x)], [("y", y)])


if __name__ == "__main__":
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "cases")
    layernorm_residual(root)
    conv_pixel_rows(root)
    layout_ops(root)
    conv3d_taps(root)
