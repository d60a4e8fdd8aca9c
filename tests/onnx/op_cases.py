"""op_cases.py — ONNX backend-style test cases for op variants the ONNX 1.12 test data lacks
(Resize antialias, keep_aspect_ratio_policy, axes and half_pixel_symmetric of opsets 18-19,
tf_crop_and_resize with scales, Upsample linear; GridSample's every mode, padding and
align_corners, 3-D GridSample of opset 20; the max/min scatter reductions of opset 18).

Expected outputs come from outside kiln: PyTorch where it defines the op (GridSample is
torch.nn.functional.grid_sample; Resize's linear, cubic and antialiased modes match
torch.nn.functional.interpolate), numpy otherwise (np.interp for the coordinate modes PyTorch
lacks, np.maximum.at / np.minimum.at for the reductions).

Usage: op_cases.py OUTDIR. Writes OUTDIR/node/<case>/model.onnx and test_data_set_0/*.pb, as
the ONNX backend test data does, and OUTDIR/cases.txt listing them for kiln_conformance.
"""
import os
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import TensorProto, helper, numpy_helper

CASES = []


def case(name, op, inputs, outputs, attrs, opset, initializers=()):
    """inputs: [(name, array or None)] (None: an empty optional slot); outputs: [(name, array)].
    initializers are constant inputs: [(name, array)], not fed as test data."""
    CASES.append((name, op, inputs, outputs, attrs, opset, list(initializers)))


def elem_type(a):
    return onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[a.dtype]


def write(out):
    listing = []
    for name, op, inputs, outputs, attrs, opset, inits in CASES:
        folder = os.path.join(out, "node", name)
        os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
        init_names = {n for n, _ in inits}
        node_inputs = [n if a is not None or n in init_names else "" for n, a in inputs]
        node = helper.make_node(op, node_inputs, [n for n, _ in outputs], **attrs)
        graph_inputs = [helper.make_tensor_value_info(n, elem_type(a), a.shape)
                        for n, a in inputs if a is not None and n not in init_names]
        graph_outputs = [helper.make_tensor_value_info(n, elem_type(a), a.shape) for n, a in outputs]
        graph = helper.make_graph([node], name, graph_inputs, graph_outputs,
                                  initializer=[numpy_helper.from_array(a, n) for n, a in inits])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 8
        onnx.save(model, os.path.join(folder, "model.onnx"))
        fed = [(n, a) for n, a in inputs if a is not None and n not in init_names]
        for i, (n, a) in enumerate(fed):
            with open(os.path.join(folder, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
        for i, (n, a) in enumerate(outputs):
            with open(os.path.join(folder, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
        listing.append(f"node/{name}")
    with open(os.path.join(out, "cases.txt"), "w") as f:
        f.write("\n".join(listing) + "\n")


rng = np.random.default_rng(15)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def torch_resize(x, **kw):
    return F.interpolate(torch.from_numpy(x), **kw).numpy().astype(np.float32)


def interp_axis(x, axis, coords, extrapolate=None):
    """Linear interpolation of x along axis at coords (edges repeat, as ONNX's edge padding)."""
    moved = np.moveaxis(x, axis, -1)
    flat = moved.reshape(-1, moved.shape[-1])
    res = np.stack([np.interp(coords, np.arange(flat.shape[1]), row) for row in flat])
    if extrapolate is not None:
        res[:, (coords < 0) | (coords > flat.shape[1] - 1)] = extrapolate
    return np.moveaxis(res.reshape(moved.shape[:-1] + (len(coords),)), -1, axis).astype(np.float32)


def resize_cases():
    x = f32(1, 2, 9, 11)
    # Antialiased downsampling: ONNX's filters are PyTorch's antialias=True ones (bicubic with
    # a = -0.5); PyTorch renormalises over the taps inside the input, which is exclude_outside.
    sizes = np.array([1, 2, 4, 5], np.int64)
    case("resize_antialias_linear_sizes", "Resize", [("X", x), ("roi", None), ("scales", None), ("sizes", sizes)],
         [("Y", torch_resize(x, size=(4, 5), mode="bilinear", align_corners=False, antialias=True))],
         dict(mode="linear", antialias=1, exclude_outside=1), 18)
    case("resize_antialias_cubic_sizes", "Resize", [("X", x), ("roi", None), ("scales", None), ("sizes", sizes)],
         [("Y", torch_resize(x, size=(4, 5), mode="bicubic", align_corners=False, antialias=True))],
         dict(mode="cubic", antialias=1, cubic_coeff_a=-0.5, exclude_outside=1), 18)
    scales = np.array([1, 1, 0.5, 0.25], np.float32)
    case("resize_antialias_linear_scales", "Resize", [("X", x), ("roi", None), ("scales", scales)],
         [("Y", torch_resize(x, scale_factor=(0.5, 0.25), mode="bilinear", align_corners=False, antialias=True,
                             recompute_scale_factor=False))],
         dict(mode="linear", antialias=1, exclude_outside=1), 18)
    # Antialias when upsampling is the plain filter.
    up = np.array([1, 1, 2, 1.5], np.float32)
    case("resize_antialias_linear_upsample", "Resize", [("X", x), ("roi", None), ("scales", up)],
         [("Y", torch_resize(x, scale_factor=(2, 1.5), mode="bilinear", align_corners=False,
                             recompute_scale_factor=False))],
         dict(mode="linear", antialias=1), 18)
    # keep_aspect_ratio_policy over axes 2 and 3: one scale for both, chosen so the sizes are whole.
    x2 = f32(1, 1, 4, 6)
    case("resize_keep_aspect_not_larger", "Resize",
         [("X", x2), ("roi", None), ("scales", None), ("sizes", np.array([2, 6], np.int64))],
         [("Y", torch_resize(x2, scale_factor=0.5, mode="bilinear", align_corners=False,
                             recompute_scale_factor=False))],
         dict(mode="linear", axes=[2, 3], keep_aspect_ratio_policy="not_larger"), 18)
    case("resize_keep_aspect_not_smaller", "Resize",
         [("X", x2), ("roi", None), ("scales", None), ("sizes", np.array([8, 9], np.int64))],
         [("Y", torch_resize(x2, scale_factor=2.0, mode="bilinear", align_corners=False,
                             recompute_scale_factor=False))],
         dict(mode="linear", axes=[2, 3], keep_aspect_ratio_policy="not_smaller"), 18)
    # axes naming one axis, and two axes in reverse order.
    x3 = f32(2, 3, 4, 5)
    case("resize_axes_last_scales", "Resize", [("X", x3), ("roi", None), ("scales", np.array([2.0], np.float32))],
         [("Y", torch_resize(x3, scale_factor=(1, 2), mode="bilinear", align_corners=True,
                             recompute_scale_factor=False))],
         dict(mode="linear", axes=[3], coordinate_transformation_mode="align_corners"), 18)
    case("resize_axes_reversed_sizes", "Resize",
         [("X", x3), ("roi", None), ("scales", None), ("sizes", np.array([7, 3], np.int64))],
         [("Y", torch_resize(x3, size=(3, 7), mode="bicubic", align_corners=False))],
         dict(mode="cubic", axes=[-1, -2]), 18)
    # nearest-exact is half_pixel with round_prefer_ceil.
    x4 = f32(1, 2, 5, 7)
    case("resize_nearest_half_pixel_prefer_ceil", "Resize",
         [("X", x4), ("roi", None), ("scales", None), ("sizes", np.array([1, 2, 8, 3], np.int64))],
         [("Y", torch_resize(x4, size=(8, 3), mode="nearest-exact"))],
         dict(mode="nearest", coordinate_transformation_mode="half_pixel", nearest_mode="round_prefer_ceil"), 13)
    case("resize_nearest_asymmetric_floor", "Resize",
         [("X", x4), ("roi", None), ("scales", None), ("sizes", np.array([1, 2, 8, 3], np.int64))],
         [("Y", torch_resize(x4, size=(8, 3), mode="nearest"))],
         dict(mode="nearest", coordinate_transformation_mode="asymmetric", nearest_mode="floor"), 13)
    # half_pixel_symmetric (opset 19): differs from half_pixel where in * scale is not whole.
    x5 = f32(1, 1, 5, 4)
    s5 = np.array([1, 1, 1.7, 0.6], np.float32)
    y5 = x5
    for axis in (2, 3):
        n_in = x5.shape[axis]
        s = float(s5[axis])
        n_out = int(np.floor(n_in * s))
        offset = n_in / 2 * (1 - n_out / (n_in * s))
        coords = offset + (np.arange(n_out) + 0.5) / s - 0.5
        y5 = interp_axis(y5, axis, coords)
    case("resize_half_pixel_symmetric_linear", "Resize", [("X", x5), ("roi", None), ("scales", s5)],
         [("Y", y5)], dict(mode="linear", coordinate_transformation_mode="half_pixel_symmetric"), 19)
    # tf_crop_and_resize with scales: the roi crops, coordinates outside it extrapolate.
    x6 = f32(1, 1, 6, 6)
    roi = np.array([0, 0, -0.2, 0.3, 1, 1, 0.8, 1.3], np.float32)
    s6 = np.array([1, 1, 0.8, 1.5], np.float32)
    y6 = x6
    for axis in (2, 3):
        n_in = x6.shape[axis]
        n_out = int(np.floor(n_in * float(s6[axis])))
        start, end = float(roi[axis]), float(roi[4 + axis])
        coords = np.arange(n_out) * (end - start) * (n_in - 1) / (n_in * float(s6[axis]) - 1) + start * (n_in - 1)
        y6 = interp_axis(y6, axis, coords, extrapolate=-7.5)
    case("resize_tf_crop_and_resize_scales", "Resize", [("X", x6), ("roi", roi), ("scales", s6)], [("Y", y6)],
         dict(mode="linear", coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=-7.5), 13)
    # Upsample (opset 9) linear: asymmetric coordinates.
    x7 = f32(1, 1, 3, 4)
    s7 = np.array([1, 1, 2, 1.5], np.float32)
    y7 = x7
    for axis in (2, 3):
        n_out = int(np.floor(x7.shape[axis] * float(s7[axis])))
        y7 = interp_axis(y7, axis, np.arange(n_out) / float(s7[axis]))
    case("upsample_linear_asymmetric", "Upsample", [("X", x7), ("scales", s7)], [("Y", y7)], dict(mode="linear"), 9)


def torch_grid_sample(x, grid, **kw):
    """In double, so the reference is not rounded where taps cancel to almost nothing."""
    y = F.grid_sample(torch.from_numpy(x).double(), torch.from_numpy(grid).double(), **kw)
    return y.numpy().astype(np.float32)


def grid_sample_cases():
    x = f32(2, 3, 5, 6)
    grid = (rng.uniform(-1.3, 1.3, (2, 4, 7, 2))).astype(np.float32)
    for mode, torch_mode in (("bilinear", "bilinear"), ("nearest", "nearest"), ("bicubic", "bicubic")):
        for padding in ("zeros", "border", "reflection"):
            # ONNX (and ONNX Runtime) clamp an outside coordinate before taking bicubic taps;
            # PyTorch clamps each tap instead, so for bicubic border it is no reference.
            if mode == "bicubic" and padding == "border":
                continue
            for align in (0, 1):
                y = torch_grid_sample(x, grid, mode=torch_mode, padding_mode=padding, align_corners=bool(align))
                case(f"gridsample_{mode}_{padding}_align{align}", "GridSample", [("X", x), ("Grid", grid)],
                     [("Y", y)], dict(mode=mode, padding_mode=padding, align_corners=align), 16)
    # Opset 20: volumetric grids and the renamed modes.
    x3 = f32(1, 2, 3, 4, 5)
    grid3 = (rng.uniform(-1.2, 1.2, (1, 2, 3, 4, 3))).astype(np.float32)
    for mode, torch_mode in (("linear", "bilinear"), ("nearest", "nearest")):
        for padding in ("zeros", "border", "reflection"):
            y = torch_grid_sample(x3, grid3, mode=torch_mode, padding_mode=padding, align_corners=False)
            case(f"gridsample_3d_{mode}_{padding}", "GridSample", [("X", x3), ("Grid", grid3)], [("Y", y)],
                 dict(mode=mode, padding_mode=padding), 20)


def scatter_cases():
    data = f32(3, 4)
    idx = np.array([[0, 1, 1, 2], [2, 1, 0, 0], [2, 2, 2, 1]], np.int64)
    upd = f32(3, 4)
    for reduction, ufunc in (("max", np.maximum), ("min", np.minimum), ("add", np.add), ("mul", np.multiply)):
        y = data.copy()
        cols = np.broadcast_to(np.arange(4), idx.shape)
        ufunc.at(y, (idx, cols), upd)
        case(f"scatter_elements_axis0_{reduction}", "ScatterElements",
             [("data", data), ("indices", idx), ("updates", upd)], [("y", y)], dict(axis=0, reduction=reduction), 18)
    data = f32(4, 3, 2)
    nd_idx = np.array([[1], [3], [1]], np.int64)
    nd_upd = f32(3, 3, 2)
    for reduction, ufunc in (("max", np.maximum), ("min", np.minimum)):
        y = data.copy()
        for t in range(3):
            y[nd_idx[t, 0]] = ufunc(y[nd_idx[t, 0]], nd_upd[t])
        case(f"scatternd_{reduction}", "ScatterND", [("data", data), ("indices", nd_idx), ("updates", nd_upd)],
             [("y", y)], dict(reduction=reduction), 18)


def main():
    out = sys.argv[1]
    resize_cases()
    grid_sample_cases()
    scatter_cases()
    write(out)


if __name__ == "__main__":
    main()
