#!/usr/bin/python3
# make_rejects.py — the context binaries that must be refused (reject/, each with its status in
# reject/expected.txt) and the fuzz_ctxbin seeds, both cut from the golden program files.
#
# Layer: tests (golden files). Run by regenerate.sh. A golden program's context binary is found
# by its magic at a 64-byte aligned offset (segments are 64-aligned, docs/format.md part 1) and
# its header's file_size; offsets below are those of cpu_format.h's structs.
import glob
import os
import struct
import sys

HEADER = 128
OFF_VERSION, OFF_FILE_SIZE, OFF_SIGNATURE = 8, 16, 24
OFF_SPEC_FLAGS = 36
OFF_BLOCKS, OFF_N_BLOCKS = 64, 80
SPEC_NO_STRASSEN = 1 << 2


def payload(path):
    data = open(path, "rb").read()
    for at in range(0, len(data) - HEADER + 1, 64):
        if data[at:at + 8] == b"KILNCTXB":
            (size,) = struct.unpack_from("<Q", data, at + OFF_FILE_SIZE)
            return bytearray(data[at:at + size])
    raise SystemExit("%s: no context binary" % path)


def put(b, fmt, off, *v):
    struct.pack_into(fmt, b, off, *v)
    return b


def main(golden, corpus):
    reject = os.path.join(golden, "reject")
    os.makedirs(reject, exist_ok=True)
    os.makedirs(corpus, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(golden, "*_cpu_*.kiln"))):
        name = os.path.basename(path)[:-len(".kiln")]
        open(os.path.join(corpus, name + ".ctxb"), "wb").write(payload(path))

    v2 = payload(os.path.join(golden, "linear_cpu_generic_v2.kiln"))
    ln = payload(os.path.join(golden, "layernorm_residual_cpu_x86-64-v3_v2.kiln"))
    ns = payload(os.path.join(golden, "linear_cpu_x86-64-v3_nostrassen_v2.kiln"))
    lo = payload(os.path.join(golden, "layout_ops_cpu_generic_v3.kiln"))
    taps = payload(os.path.join(golden, "conv3d_taps_cpu_x86-64-v3_v3.kiln"))
    (spec_flags,) = struct.unpack_from("<I", ns, OFF_SPEC_FLAGS)
    assert spec_flags & SPEC_NO_STRASSEN
    blocks_offset, = struct.unpack_from("<Q", v2, OFF_BLOCKS)
    n_blocks, = struct.unpack_from("<I", v2, OFF_N_BLOCKS)
    assert n_blocks >= 2
    second_block = blocks_offset + 24
    first_offset, = struct.unpack_from("<Q", v2, blocks_offset)
    # (file, bytes, status, why)
    cases = [
        ("version4.ctxb", put(bytearray(v2), "<I", OFF_VERSION, 4), "KILN_ERROR_VERSION", "a version this build does not read"),
        ("version0.ctxb", put(bytearray(v2), "<I", OFF_VERSION, 0), "KILN_ERROR_VERSION", "no such version"),
        ("truncated_header.ctxb", bytearray(v2[:100]), "KILN_ERROR_INCOMPATIBLE", "shorter than its header"),
        ("truncated.ctxb", bytearray(v2[:len(v2) // 2 // 8 * 8]), "KILN_ERROR_INCOMPATIBLE",
         "cut in half: the header's file size disagrees"),
        ("bad_magic.ctxb", put(bytearray(v2), "8s", 0, b"KILNCTXX"), "KILN_ERROR_INCOMPATIBLE", "not a context binary"),
        ("bad_signature.ctxb", put(bytearray(v2), "<Q", OFF_SIGNATURE, 0x0123456789abcdef), "KILN_ERROR_FORMAT",
         "the signature does not match the contents (kiln verify; loading does not hash)"),
        ("overlapping_blocks.ctxb", put(bytearray(v2), "<Q", second_block, first_offset), "KILN_ERROR_INCOMPATIBLE",
         "weight block 1 starts inside block 0"),
        ("v1_layernorm_residual.ctxb", put(bytearray(ln), "<I", OFF_VERSION, 1), "KILN_ERROR_FORMAT",
         "a version 1 file with a residual LayerNorm (only version 2 writes one)"),
        ("v1_no_strassen.ctxb", put(bytearray(ns), "<I", OFF_VERSION, 1), "KILN_ERROR_FORMAT",
         "a version 1 file with the no-strassen spec bit"),
        ("v2_layout_ops.ctxb", put(bytearray(lo), "<I", OFF_VERSION, 2), "KILN_ERROR_FORMAT",
         "a version 2 file with CONCAT, SLICE, PAD and WHERE steps and a BOOL tensor (only version 3 writes them)"),
        ("v2_conv_taps.ctxb", put(bytearray(taps), "<I", OFF_VERSION, 2), "KILN_ERROR_FORMAT",
         "a version 2 file with a tap-list convolution (only version 3 writes one)"),
    ]
    with open(os.path.join(reject, "expected.txt"), "w") as f:
        f.write("# file status check — written by make_rejects.py. check `open`: the status kiln_ctxbin_open\n"
                "# gives (the files are edited without re-signing: loading does not hash); `verify`: that\n"
                "# status, or KILN_ERROR_FORMAT when it opens but its signature does not match (kiln verify)\n")
        for name, data, status, why in cases:
            open(os.path.join(reject, name), "wb").write(data)
            check = "verify" if name == "bad_signature.ctxb" else "open"
            f.write("%s %s %s  # %s\n" % (name, status, check, why))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
