"""A minimal GGUF reader for the files tests/llm/gguf_write.py writes (trusted input: no
validation beyond the magic; kiln's own reader is src/format/gguf/). Returns the metadata
as a dict and the tensors as f32 numpy arrays in row-major (torch) shape."""
import struct

import numpy as np

import gguf_write as gw

_ELEM_SIZE = {gw.GGML_F32: 4, gw.GGML_F16: 2, gw.GGML_BF16: 2}


class _Cursor:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def take(self, fmt):
        v = struct.unpack_from(fmt, self.data, self.pos)
        self.pos += struct.calcsize(fmt)
        return v[0] if len(v) == 1 else v

    def string(self):
        n = self.take("<Q")
        s = self.data[self.pos:self.pos + n].decode("utf-8")
        self.pos += n
        return s

    def value(self, vtype):
        if vtype == gw.STRING:
            return self.string()
        if vtype == gw.ARRAY:
            elem, n = self.take("<I"), self.take("<Q")
            return [self.value(elem) for _ in range(n)]
        return self.take(gw._SCALAR_PACK[vtype])


def _decode(raw, ggml_type, count):
    if ggml_type == gw.GGML_F32:
        return np.frombuffer(raw, dtype="<f4", count=count).astype(np.float32)
    if ggml_type == gw.GGML_F16:
        return np.frombuffer(raw, dtype="<f2", count=count).astype(np.float32)
    if ggml_type == gw.GGML_BF16:
        return (np.frombuffer(raw, dtype="<u2", count=count).astype(np.uint32) << 16).view(np.float32)
    if ggml_type == gw.GGML_Q8_0:
        return gw.dequantize_q8_0(raw[:count // gw.QK * (2 + gw.QK)], count)
    if ggml_type == gw.GGML_Q4_0:
        return gw.dequantize_q4_0(raw[:count // gw.QK * (2 + gw.QK // 2)], count)
    raise ValueError(f"gguf_read: tensor type {ggml_type} not supported")


def read(path):
    data = open(path, "rb").read()
    c = _Cursor(data)
    if data[:4] != gw.GGUF_MAGIC:
        raise ValueError(f"{path}: not a GGUF file")
    c.pos = 4
    _version, n_tensors, n_kv = c.take("<IQQ")
    meta = {}
    for _ in range(n_kv):
        key = c.string()
        meta[key] = c.value(c.take("<I"))
    infos = []
    for _ in range(n_tensors):
        name = c.string()
        dims = [c.take("<Q") for _ in range(c.take("<I"))]
        infos.append((name, dims, c.take("<I"), c.take("<Q")))
    alignment = meta.get("general.alignment", 32)
    base = c.pos + (-c.pos) % alignment
    tensors = {}
    for name, dims, ggml_type, offset in infos:
        count = int(np.prod(dims))
        values = _decode(data[base + offset:], ggml_type, count)
        tensors[name] = values.reshape(tuple(reversed(dims)))
    return meta, tensors
