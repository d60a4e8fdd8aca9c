"""corrupt.py — two broken copies of a program with one cpu context binary (make_programs.sh).

usage: /usr/bin/python3 corrupt.py PROGRAM SIGNATURE_CHANGED INVALID

SIGNATURE_CHANGED: the packed weight 1234.5 becomes 1234.625 (still loads; its signature, weight
block hash and segment hash no longer match). INVALID: the context binary's magic is broken.
"""
import struct
import sys

src, changed, invalid = sys.argv[1:4]
data = bytearray(open(src, "rb").read())
at = data.find(struct.pack("<f", 1234.5))
assert at >= 0, "weight 1234.5 not found"
copy = bytearray(data)
copy[at:at + 4] = struct.pack("<f", 1234.625)
open(changed, "wb").write(copy)
at = data.find(b"KILNCTXB")
assert at >= 0, "no context binary"
copy = bytearray(data)
copy[at + 7] = ord("X")
open(invalid, "wb").write(copy)
