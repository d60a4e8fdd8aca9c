"""make_inputs.py — the small models and tensor files tests/tools/cli_readers.sh feeds the kiln tool.

Usage: make_inputs.py DIR. Writes into DIR only:
  mm.onnx       x f32 [1,4] -> MatMul by a constant [4,3] -> Relu -> y: one cpu delegate whose
                weights hold the distinctive value 1234.5 (so a test can find and change it)
  cast.onnx     x f32 [5] and p f32 [5] cast to every dtype kiln has, big i64 [2] passed through
  evil.onnx     mm.onnx with an output name holding a newline and an ANSI escape
  x14.npy, x5.npy, p5.npy, big.npy   inputs of those models
  fortran.npy, pickled.npy, truncated.npy, empty.pb, garbage.pb   broken tensor files
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T, helper, numpy_helper

out = sys.argv[1]


def save(model, name):
    onnx.save(model, os.path.join(out, name))


def matmul_model(output_name):
    x = helper.make_tensor_value_info("x", T.FLOAT, [1, 4])
    y = helper.make_tensor_value_info(output_name, T.FLOAT, [1, 3])
    w = np.arange(12, dtype=np.float32).reshape(4, 3) / 8
    w[0, 0] = 1234.5
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Relu", ["h"], [output_name])],
                          "g", [x], [y], [numpy_helper.from_array(w, "w")])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


save(matmul_model("y"), "mm.onnx")
save(matmul_model("y\n\x1b[31mEVIL"), "evil.onnx")

# Every dtype kiln has: signed and float ones from x (negative values), unsigned from p.
signed = [("o_i8", T.INT8), ("o_i16", T.INT16), ("o_i32", T.INT32), ("o_i64", T.INT64), ("o_f16", T.FLOAT16),
          ("o_bf16", T.BFLOAT16), ("o_f64", T.DOUBLE), ("o_bool", T.BOOL)]
unsigned = [("o_u8", T.UINT8), ("o_u16", T.UINT16), ("o_u32", T.UINT32), ("o_u64", T.UINT64)]
nodes = [helper.make_node("Cast", ["x"], [n], to=t) for n, t in signed]
nodes += [helper.make_node("Cast", ["p"], [n], to=t) for n, t in unsigned]
nodes.append(helper.make_node("Identity", ["big"], ["o_big"]))
outputs = [helper.make_tensor_value_info(n, t, [5]) for n, t in signed + unsigned]
outputs.append(helper.make_tensor_value_info("o_big", T.INT64, [2]))
inputs = [helper.make_tensor_value_info("x", T.FLOAT, [5]), helper.make_tensor_value_info("p", T.FLOAT, [5]),
          helper.make_tensor_value_info("big", T.INT64, [2])]
save(helper.make_model(helper.make_graph(nodes, "cast", inputs, outputs), opset_imports=[helper.make_opsetid("", 17)]),
     "cast.onnx")

np.save(os.path.join(out, "x14.npy"), np.ones((1, 4), dtype=np.float32))
np.save(os.path.join(out, "x5.npy"), np.array([1.5, -2.25, 0, 0.1, 100], dtype=np.float32))
np.save(os.path.join(out, "p5.npy"), np.array([1.5, 2.25, 0, 0.1, 200], dtype=np.float32))
np.save(os.path.join(out, "big.npy"), np.array([9007199254740993, -5], dtype=np.int64))

# A (2, 3) array in Fortran order is not also C-contiguous, so numpy writes fortran_order True.
np.save(os.path.join(out, "fortran.npy"), np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
np.save(os.path.join(out, "pickled.npy"), np.array([{"a": 1}], dtype=object), allow_pickle=True)
whole = open(os.path.join(out, "x14.npy"), "rb").read()
open(os.path.join(out, "truncated.npy"), "wb").write(whole[:-3])
open(os.path.join(out, "empty.pb"), "wb").close()
open(os.path.join(out, "garbage.pb"), "wb").write(b"\xff\xff\xff\xff not a protobuf")
