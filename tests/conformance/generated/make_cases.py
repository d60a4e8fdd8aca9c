#!/usr/bin/env python3
"""make_cases.py — extra ONNX node cases for the ops of issue 15 whose backend test data covers
few of their forms (Einsum, RNN/GRU/LSTM, the quantized ops, DFT/STFT, the losses).

Writes, under OUT_DIR, one folder per case in the layout of the ONNX backend tests (model.onnx,
test_data_set_0/input_N.pb, output_N.pb), and OUT_DIR/cases.txt listing them, for
kiln_conformance --root OUT_DIR OUT_DIR/cases.txt. Every expected output comes from an
implementation outside kiln: numpy.einsum, torch's RNN/GRU/LSTM modules, torch.fft, torch's
losses, or numpy formulas written from the ONNX operator spec (the quantized ops, whose
integer results must match exactly).

Usage: make_cases.py OUT_DIR   (needs onnx, numpy and torch in the interpreter)
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import helper, mapping, numpy_helper

RNG = np.random.default_rng(15)
CASES = []


def save_case(name, node, inputs, outputs, opset, domain_opsets=None):
    """inputs/outputs: lists of (name, array); every input is a graph input."""
    def info(n, a):
        return helper.make_tensor_value_info(n, mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(a.dtype)], a.shape)
    graph = helper.make_graph([node], name, [info(n, a) for n, a in inputs], [info(n, a) for n, a in outputs])
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in (domain_opsets or [])]
    model = helper.make_model(graph, opset_imports=opsets)
    model.ir_version = 8
    folder = os.path.join(OUT, "node", name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    for kind, arrays in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(arrays):
            t = numpy_helper.from_array(np.asarray(a), n)
            with open(os.path.join(folder, "test_data_set_0", f"{kind}_{i}.pb"), "wb") as f:
                f.write(t.SerializeToString())
    CASES.append("node/" + name)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- Einsum: numpy.einsum is the reference ----

def einsum_cases():
    eqs = [
        ("matmul", "ij,jk->ik", [(3, 4), (4, 5)]),
        ("implicit_matmul", "ij,jk", [(3, 4), (4, 5)]),
        ("implicit_order", "ba", [(3, 4)]),
        ("outer", "i,j->ij", [(3,), (4,)]),
        ("trace", "ii", [(4, 4)]),
        ("diag_out", "ii->i", [(4, 4)]),
        ("three_operands", "ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
        ("ellipsis_broadcast", "...ij,...jk->...ik", [(2, 1, 3, 4), (5, 4, 2)]),
        ("ellipsis_implicit", "...ij,...jk", [(2, 3, 4), (2, 4, 5)]),
        ("sum_all", "ijk->", [(2, 3, 4)]),
        ("bilinear", "bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),
        ("permute_reduce", "abcd->dba", [(2, 3, 4, 5)]),
        ("ellipsis_middle", "a...c->ca...", [(2, 3, 4, 5)]),
        ("uppercase", "Ab,bC->CA", [(2, 3), (3, 4)]),
    ]
    for name, eq, shapes in eqs:
        xs = [rand(*s, dtype=np.float64) for s in shapes]
        names = [f"x{i}" for i in range(len(xs))]
        y = np.einsum(eq, *xs)
        node = helper.make_node("Einsum", names, ["y"], equation=eq)
        save_case(f"einsum_{name}", node, list(zip(names, xs)), [("y", np.asarray(y))], 12)
    # f32 products of the GEMM form (and near misses that take the generic loop).
    f32_eqs = [
        ("f32_attention_scores", "bhqd,bhkd->bhqk", [(2, 3, 5, 4), (2, 3, 6, 4)]),
        ("f32_batch_broadcast", "bij,bjk->bik", [(1, 3, 4), (5, 4, 2)]),
        ("f32_matvec", "ik,k->i", [(7, 5), (5,)]),
        ("f32_vecmat", "k,kn->n", [(5,), (5, 6)]),
        ("f32_outer", "i,j->ij", [(3,), (4,)]),
        ("f32_transposed_out", "ij,jk->ki", [(3, 4), (4, 5)]),
        ("f32_two_k", "ijk,jkl->il", [(2, 3, 4), (3, 4, 5)]),
        ("f32_large", "mk,nk->mn", [(70, 90), (40, 90)]),
    ]
    for name, eq, shapes in f32_eqs:
        xs = [rand(*s) for s in shapes]
        names = [f"x{i}" for i in range(len(xs))]
        y = np.einsum(eq, *[x.astype(np.float64) for x in xs]).astype(np.float32)
        node = helper.make_node("Einsum", names, ["y"], equation=eq)
        save_case(f"einsum_{name}", node, list(zip(names, xs)), [("y", np.asarray(y))], 12)
    a = RNG.integers(-5, 5, (3, 4)).astype(np.int64)
    b = RNG.integers(-5, 5, (4, 2)).astype(np.int64)
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation="ij,jk->ik")
    save_case("einsum_int64", node, [("a", a), ("b", b)], [("y", np.einsum("ij,jk->ik", a, b))], 12)


# ---- RNN, GRU, LSTM: torch's modules are the reference ----

def onnx_gates(w, order, hidden):
    """torch stacks gates (i f g o) / (r z n); ONNX wants (i o f c) / (z r h)."""
    chunks = [w[k * hidden:(k + 1) * hidden] for k in range(len(order))]
    return np.concatenate([chunks[k] for k in order], axis=0)


def rnn_cases():
    seq, batch, inp, hidden = 5, 3, 4, 6
    kinds = {"RNN": (torch.nn.RNN, [0]), "GRU": (torch.nn.GRU, [1, 0, 2]), "LSTM": (torch.nn.LSTM, [0, 3, 1, 2])}
    for op, (cls, order) in kinds.items():
        for bidir, layout, lens in ((False, 0, None), (False, 1, None), (True, 0, None), (True, 1, None),
                                    (True, 0, [5, 2, 4]), (False, 1, [1, 5, 3])):
            if True:
                torch.manual_seed(len(CASES))
                m = cls(inp, hidden, bidirectional=bidir, batch_first=bool(layout)).double()
                dirs = 2 if bidir else 1
                x = torch.randn((batch, seq, inp) if layout else (seq, batch, inp), dtype=torch.float64)
                h0 = torch.randn(dirs, batch, hidden, dtype=torch.float64)
                c0 = torch.randn(dirs, batch, hidden, dtype=torch.float64)
                # Variable lengths through a packed sequence: torch then runs each row for its
                # own length (the reverse direction from its last valid step) and pads Y with 0,
                # as ONNX's sequence_lens does.
                packed = x if lens is None else torch.nn.utils.rnn.pack_padded_sequence(
                    x, torch.tensor(lens), batch_first=bool(layout), enforce_sorted=False)
                with torch.no_grad():
                    if op == "LSTM":
                        y, (hn, cn) = m(packed, (h0, c0))
                    else:
                        y, hn = m(packed, h0)
                if lens is not None:
                    y, _ = torch.nn.utils.rnn.pad_packed_sequence(y, batch_first=bool(layout), total_length=seq)
                sfx = ["", "_reverse"]
                W = np.stack([onnx_gates(getattr(m, "weight_ih_l0" + sfx[d]).detach().numpy(), order, hidden) for d in range(dirs)])
                R = np.stack([onnx_gates(getattr(m, "weight_hh_l0" + sfx[d]).detach().numpy(), order, hidden) for d in range(dirs)])
                B = np.stack([np.concatenate([onnx_gates(getattr(m, "bias_ih_l0" + sfx[d]).detach().numpy(), order, hidden),
                                              onnx_gates(getattr(m, "bias_hh_l0" + sfx[d]).detach().numpy(), order, hidden)])
                              for d in range(dirs)])
                y = y.numpy()
                # torch's Y is (seq, batch, dirs * hidden); ONNX's (seq, dirs, batch, hidden).
                if layout:
                    y = y.reshape(batch, seq, dirs, hidden)
                else:
                    y = y.reshape(seq, batch, dirs, hidden).transpose(0, 2, 1, 3)
                def state(t):
                    t = t.numpy()
                    return t.transpose(1, 0, 2) if layout else t
                inputs = [("X", x.numpy()), ("W", W), ("R", R), ("B", B), ("seq_lens", np.array(lens or [seq] * batch, np.int32)),
                          ("initial_h", state(h0))]
                outputs = [("Y", y), ("Y_h", state(hn))]
                attrs = dict(hidden_size=hidden, direction="bidirectional" if bidir else "forward", layout=layout)
                if op == "LSTM":
                    inputs.append(("initial_c", state(c0)))
                    outputs.append(("Y_c", state(cn)))
                if op == "GRU":
                    attrs["linear_before_reset"] = 1  # torch's GRU applies the reset after R_h
                node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], **attrs)
                save_case(f"{op.lower()}_{'bidir' if bidir else 'forward'}_layout{layout}{'_seq_lens' if lens else ''}", node, inputs, outputs, 14)
                if bidir:
                    # direction "reverse" alone is the reverse half of the bidirectional run.
                    def half(name, a):
                        if name in ("W", "R", "B"):
                            return a[1:]
                        if name == "Y":
                            return a[:, :, 1:] if layout else a[:, 1:]
                        if name in ("initial_h", "initial_c", "Y_h", "Y_c"):
                            return a[:, 1:] if layout else a[1:]
                        return a
                    attrs["direction"] = "reverse"
                    node = helper.make_node(op, [n for n, _ in inputs], [n for n, _ in outputs], **attrs)
                    save_case(f"{op.lower()}_reverse_layout{layout}{'_seq_lens' if lens else ''}", node,
                              [(n, half(n, a)) for n, a in inputs], [(n, half(n, a)) for n, a in outputs], 14)


# ---- quantized ops: the ONNX formulas in numpy (exact integers) ----

def saturate(v, dtype):
    info = np.iinfo(dtype)
    return np.clip(v, info.min, info.max).astype(dtype)


def quant_cases():
    x = rand(2, 3, 4) * 4
    scale = np.array([0.05, 0.1, 0.2], np.float32)
    zp = np.array([-3, 0, 7], np.int8)
    y = saturate(np.rint(x / scale[None, :, None]).astype(np.int32) + zp[None, :, None], np.int8)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=1)
    save_case("quantizelinear_axis_int8", node, [("x", x), ("s", scale), ("z", zp)], [("y", y)], 13)
    scale2 = np.array([0.5, 0.25, 0.125, 2.0], np.float32)
    zp2 = np.array([0, 10, 128, 255], np.uint8)
    y2 = saturate(np.rint(x / scale2).astype(np.int32) + zp2.astype(np.int32), np.uint8)
    node = helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"], axis=-1)
    save_case("quantizelinear_axis_last_uint8", node, [("x", x), ("s", scale2), ("z", zp2)], [("y", y2)], 13)
    q = RNG.integers(-128, 128, (2, 3, 4)).astype(np.int8)
    deq = ((q.astype(np.float32) - zp[None, :, None].astype(np.float32)) * scale[None, :, None]).astype(np.float32)
    node = helper.make_node("DequantizeLinear", ["x", "s", "z"], ["y"], axis=1)
    save_case("dequantizelinear_axis_int8", node, [("x", q), ("s", scale), ("z", zp)], [("y", deq)], 13)

    # QLinearMatMul / MatMulInteger with int8 and per-row / per-column parameters.
    a = RNG.integers(-128, 128, (2, 3, 5)).astype(np.int8)
    b = RNG.integers(-128, 128, (5, 4)).astype(np.int8)
    a_zp, b_zp = np.array(3, np.int8), np.array([1, -2, 0, 5], np.int8)
    acc = np.matmul(a.astype(np.int32) - a_zp, b.astype(np.int32) - b_zp.astype(np.int32))
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    save_case("matmulinteger_int8_per_column", node, [("a", a), ("b", b), ("az", a_zp), ("bz", b_zp)],
              [("y", acc.astype(np.int32))], 10)
    a_s, b_s, y_s = np.array(0.02, np.float32), np.array(0.03, np.float32), np.array(0.5, np.float32)
    y_zp = np.array(-4, np.int8)
    mult = a_s * b_s / y_s  # formed in f32, applied in double, as ONNX's reference does
    acc0 = np.matmul(a.astype(np.int32) - a_zp, b.astype(np.int32))
    node = helper.make_node("QLinearMatMul", ["a", "as", "az", "b", "bs", "bz", "ys", "yz"], ["y"])
    save_case("qlinearmatmul_int8_batched", node,
              [("a", a), ("as", a_s), ("az", a_zp), ("b", b), ("bs", b_s), ("bz", np.array(0, np.int8)),
               ("ys", y_s), ("yz", y_zp)],
              [("y", saturate(np.rint(acc0 * mult.astype(np.float64)) + y_zp, np.int8))], 10)

    # QLinearConv / ConvInteger: grouped, strided, padded, per-channel weights; the integer
    # convolution is torch's conv2d in float64 (exact for these magnitudes).
    x = RNG.integers(0, 256, (2, 4, 7, 6)).astype(np.uint8)
    w = RNG.integers(0, 256, (6, 2, 3, 2)).astype(np.uint8)
    x_zp, w_zp = np.array(120, np.uint8), np.array([100, 128, 0, 255, 7, 130], np.uint8)
    xs = torch.tensor(x.astype(np.float64) - float(x_zp))
    ws = torch.tensor(w.astype(np.float64) - w_zp.astype(np.float64)[:, None, None, None])
    acc = torch.nn.functional.conv2d(xs, ws, stride=(2, 1), padding=(1, 1), dilation=(1, 2), groups=2).numpy()
    acc = np.rint(acc).astype(np.int64)
    attrs = dict(strides=[2, 1], pads=[1, 1, 1, 1], dilations=[1, 2], group=2)
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], **attrs)
    save_case("convinteger_grouped_per_channel", node, [("x", x), ("w", w), ("xz", x_zp), ("wz", w_zp)],
              [("y", acc.astype(np.int32))], 10)
    x_s, y_s, y_zp = np.array(0.1, np.float32), np.array(40.0, np.float32), np.array(128, np.uint8)
    w_s = np.array([0.01, 0.02, 0.05, 0.03, 0.04, 0.015], np.float32)
    bias = RNG.integers(-2000, 2000, 6).astype(np.int32)
    mult = (x_s * w_s / y_s).astype(np.float32)
    yq = saturate(np.rint((acc + bias[None, :, None, None]) * mult[None, :, None, None].astype(np.float64)) + int(y_zp), np.uint8)
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], **attrs)
    save_case("qlinearconv_grouped_per_channel", node,
              [("x", x), ("xs", x_s), ("xz", x_zp), ("w", w), ("ws", w_s), ("wz", w_zp), ("ys", y_s), ("yz", y_zp),
               ("b", bias)], [("y", yq)], 10)


# ---- DFT / STFT: torch.fft is the reference ----

def signal_cases():
    x = rand(2, 8, 3, 2)
    xc = torch.complex(torch.tensor(x[..., 0], dtype=torch.float64), torch.tensor(x[..., 1], dtype=torch.float64))
    def as_pairs(c):
        return np.stack([c.real.numpy(), c.imag.numpy()], -1).astype(np.float32)
    y = torch.fft.fft(xc, n=10, dim=1)
    node = helper.make_node("DFT", ["x", "n"], ["y"], axis=1)
    save_case("dft_complex_padded", node, [("x", x), ("n", np.array(10, np.int64))], [("y", as_pairs(y))], 17)
    xr = rand(2, 9, 1)
    y = torch.fft.rfft(torch.tensor(xr[..., 0], dtype=torch.float64), n=6, dim=1)
    node = helper.make_node("DFT", ["x", "n"], ["y"], axis=1, onesided=1)
    save_case("dft_real_onesided_truncated", node, [("x", xr), ("n", np.array(6, np.int64))], [("y", as_pairs(y))], 17)
    y = torch.fft.ifft(xc, dim=2)
    node = helper.make_node("DFT", ["x"], ["y"], axis=-2, inverse=1)
    save_case("dft_inverse_negative_axis", node, [("x", x)], [("y", as_pairs(y))], 17)
    # Opset 20 moved axis to a third input (default -2).
    y = torch.fft.fft(xc, dim=2)
    node = helper.make_node("DFT", ["x", "", "axis"], ["y"])
    save_case("dft_opset20_axis_input", node, [("x", x), ("axis", np.array(2, np.int64))], [("y", as_pairs(y))], 20)
    y = torch.fft.fft(xc, n=4, dim=2)
    node = helper.make_node("DFT", ["x", "n"], ["y"])
    save_case("dft_opset20_default_axis", node, [("x", x), ("n", np.array(4, np.int64))], [("y", as_pairs(y))], 20)
    sig = rand(2, 40, 2)
    sc = torch.complex(torch.tensor(sig[..., 0], dtype=torch.float64), torch.tensor(sig[..., 1], dtype=torch.float64))
    win = np.hanning(12).astype(np.float32)
    frames = [(sc[:, f * 5:f * 5 + 12] * torch.tensor(win, dtype=torch.float64)) for f in range((40 - 12) // 5 + 1)]
    y = torch.stack([torch.fft.fft(f, dim=1) for f in frames], 1)
    node = helper.make_node("STFT", ["x", "step", "w"], ["y"], onesided=0)
    save_case("stft_complex_twosided", node, [("x", sig), ("step", np.array(5, np.int64)), ("w", win)],
              [("y", as_pairs(y))], 17)


# ---- losses: torch's functional losses are the reference ----

def loss_cases():
    x = rand(3, 5, 2, 2)
    t = RNG.integers(0, 5, (3, 2, 2)).astype(np.int64)
    t[0, 0, 0] = 2
    w = np.abs(rand(5)) + 0.1
    xt, tt, wt = torch.tensor(x, dtype=torch.float64), torch.tensor(t), torch.tensor(w, dtype=torch.float64)
    for red in ("none", "sum", "mean"):
        y = torch.nn.functional.cross_entropy(xt, tt, weight=wt, ignore_index=2, reduction=red).numpy().astype(np.float32)
        lp = torch.log_softmax(xt, 1).numpy().astype(np.float32)
        node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t", "w"], ["y", "lp"], reduction=red, ignore_index=2)
        save_case(f"sce_weight_ii_{red}", node, [("x", x), ("t", t), ("w", w)], [("y", y), ("lp", lp)], 13)
        y = torch.nn.functional.nll_loss(xt, tt, weight=wt, reduction=red).numpy().astype(np.float32)
        node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"], reduction=red)
        save_case(f"nllloss_weight_{red}", node, [("x", x), ("t", t), ("w", w)], [("y", y)], 13)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_cases.py OUT_DIR")
    OUT = sys.argv[1]
    einsum_cases()
    rnn_cases()
    quant_cases()
    signal_cases()
    loss_cases()
    with open(os.path.join(OUT, "cases.txt"), "w") as f:
        f.write("\n".join(CASES) + "\n")
