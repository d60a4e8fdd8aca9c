"""make_programs.py — the small models behind the inspect golden programs (make_programs.sh).

usage: /usr/bin/python3 make_programs.py OUTDIR

mlp.onnx (x [4,16] -> MatMul, Add, Relu, MatMul, Tanh -> y [4,8]) and mlp_row.onnx (the same
weights for x [1,16], so a two-method program can share them); W2[0,0] is 1234.5, a value the
corrupted variants find in the packed weights.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def mlp(path, rows):
    rng = np.random.default_rng(13)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    b1 = rng.standard_normal((32,)).astype(np.float32)
    w2 = rng.standard_normal((32, 8)).astype(np.float32)
    w2[0, 0] = 1234.5
    inits = [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "B1"), numpy_helper.from_array(w2, "W2")]
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["a"]), helper.make_node("Add", ["a", "B1"], ["b"]),
             helper.make_node("Relu", ["b"], ["c"]), helper.make_node("MatMul", ["c", "W2"], ["d"]),
             helper.make_node("Tanh", ["d"], ["y"])]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 16])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


out = sys.argv[1]
mlp(f"{out}/mlp.onnx", 4)
mlp(f"{out}/mlp_row.onnx", 1)
