"""external_data.py — models for external_data.sh: one small model saved inline and with every
tensor (initializers and tensor attributes) in an external file, plus variants whose external
data a compiler must refuse.

Usage: external_data.py OUTDIR. Writes
  OUTDIR/inline.onnx                     the model, weights inside
  OUTDIR/ext/model.onnx, ext/weights.bin the same model saved with save_as_external_data
  OUTDIR/ext/<variant>.onnx              model.onnx with W's location replaced (see VARIANTS)
  OUTDIR/inputs/input_0.npy, OUTDIR/expected.npy   an input and the output numpy computes
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# variant file -> the location W's external data names instead of weights.bin
VARIANTS = {
    "absolute": "/etc/hostname",
    "dotdot": "../outside.bin",
    "link_outside": "link_outside.bin",     # external_data.sh links it to ../outside.bin
    "link_inside": "link_inside.bin",       # ... and this to weights.bin: allowed
    "fifo": "pipe.bin",                     # ... and makes this a FIFO
    "missing": "no_such_file.bin",
}


def build():
    rng = np.random.default_rng(12)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    b = rng.standard_normal((4,)).astype(np.float32)
    c = rng.standard_normal((4,)).astype(np.float32)
    shape = np.array([2, 4], dtype=np.int64)
    nodes = [
        helper.make_node("MatMul", ["x", "W"], ["xw"], name="matmul"),
        helper.make_node("Add", ["xw", "B"], ["t"], name="bias"),
        helper.make_node("Constant", [], ["c"], name="const",
                         value=numpy_helper.from_array(c, "c_value")),
        helper.make_node("Mul", ["t", "c"], ["u"], name="scale"),
        helper.make_node("ConstantOfShape", ["S"], ["s"], name="fill",
                         value=helper.make_tensor("v", TensorProto.FLOAT, [1], np.array([0.5], np.float32).tobytes(),
                                                  raw=True)),
        helper.make_node("Add", ["u", "s"], ["v"], name="shift"),
        helper.make_node("Relu", ["v"], ["y"], name="relu"),
    ]
    graph = helper.make_graph(
        nodes, "external_data",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])],
        initializer=[numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
                     numpy_helper.from_array(shape, "S")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    expected = np.maximum((x @ w + b) * c + 0.5, 0).astype(np.float32)
    return model, x, expected


def main():
    out = sys.argv[1]
    os.makedirs(os.path.join(out, "ext"), exist_ok=True)
    os.makedirs(os.path.join(out, "inputs"), exist_ok=True)
    model, x, expected = build()
    onnx.save(model, os.path.join(out, "inline.onnx"))
    np.save(os.path.join(out, "inputs", "input_0.npy"), x)
    np.save(os.path.join(out, "expected.npy"), expected)
    onnx.save(model, os.path.join(out, "ext", "model.onnx"), save_as_external_data=True,
              all_tensors_to_one_file=True, location="weights.bin", size_threshold=0, convert_attribute=True)
    saved = onnx.load(os.path.join(out, "ext", "model.onnx"), load_external_data=False)
    tensors = [t for t in saved.graph.initializer] + [a.t for n in saved.graph.node for a in n.attribute if a.t.name]
    n_external = sum(t.data_location == TensorProto.EXTERNAL for t in tensors)
    if n_external != len(tensors) or n_external != 5:
        sys.exit("external_data.py: expected all 5 tensors external, got %d of %d" % (n_external, len(tensors)))
    for variant, location in VARIANTS.items():
        m = onnx.load(os.path.join(out, "ext", "model.onnx"), load_external_data=False)
        w = next(t for t in m.graph.initializer if t.name == "W")
        for entry in w.external_data:
            if entry.key == "location":
                entry.value = location
        with open(os.path.join(out, "ext", variant + ".onnx"), "wb") as f:
            f.write(m.SerializeToString())


if __name__ == "__main__":
    main()
