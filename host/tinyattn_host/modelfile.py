"""Read and write tinyattn model files on the host, with NumPy alone.

The format (version 1, little-endian) is the device's, documented in device/tinyattn/store.py:
magic b"TINYATTN", u16 version, u16-length kind, u32-length JSON meta, u16 array count, then
per array a u16-length name, a dtype byte (f float32, b int8, B uint8, h int16, i int32), a u8
ndim, ndim u32 dimensions and the row-major data; then the u32 CRC-32 of everything before
it and b"END.".
"""

import json
import os
import struct
import zlib

import numpy as np

from .errors import InputError
from .protocol import CODES, DTYPES, wire

MAGIC, END, VERSION = wire.FILE_MAGIC, wire.FILE_END, wire.FILE_VERSION
SEQUENTIAL = wire.FILE_SEQUENTIAL  # the kind of a Sequential model's file
QUANTIZED = wire.FILE_QUANTIZED  # the kind of an int8 model's file


class ModelFileError(InputError):
    """The file is not a valid tinyattn model file; the message says why."""


def read_model(path):
    """(kind, meta, arrays) from a model file; arrays is {name: ndarray} in file order.

    The CRC-32 is checked before anything is decoded: a damaged file is "corrupt", a short one
    "truncated at byte N", each a ModelFileError naming the file.
    """
    path = os.fspath(path)
    data = open(path, "rb").read()
    if data[:len(MAGIC)] != MAGIC:
        raise ModelFileError("%s is not a tinyattn model file (no TINYATTN magic)" % path)
    pos = len(MAGIC)

    def take(n):
        nonlocal pos
        if n > len(data) - pos:
            raise ModelFileError("%s is truncated at byte %d: %d bytes needed from byte %d"
                                 % (path, len(data), n, pos))
        pos += n
        return data[pos - n:pos]

    def unpack(fmt):
        return struct.unpack(fmt, take(struct.calcsize(fmt)))[0]

    version = unpack("<H")
    sealed = _sealed(data)
    if version != VERSION:
        raise ModelFileError("%s has format version %d; this reader reads version %d%s"
                             % (path, version, VERSION, "" if sealed else
                                " (or the file is corrupt: its CRC-32 does not match)"))
    if sealed is False:
        raise ModelFileError("%s is corrupt: CRC mismatch (the checksum in its last 8 bytes is "
                             "not the CRC-32 of the %d before them)" % (path, len(data) - 8))
    kind = take(unpack("<H"))
    raw_meta = take(unpack("<I"))
    arrays = {}
    for _ in range(unpack("<H")):
        name = take(unpack("<H"))
        code = take(1).decode("ascii", "replace")
        if code not in DTYPES:
            raise ModelFileError("%s: array %s has unknown dtype %r" % (path, name, code))
        ndim = unpack("<B")
        if ndim not in (1, 2):
            raise ModelFileError("%s: array %s has %d dimensions, not 1 or 2" % (path, name, ndim))
        shape = tuple(unpack("<I") for _ in range(ndim))
        arrays[name] = (DTYPES[code], shape, take(int(np.prod(shape)) * DTYPES[code].itemsize))
    take(4)  # the CRC-32
    if take(4) != END:
        raise ModelFileError("%s is corrupt: no end marker (b'END.') at byte %d" % (path, pos - 4))
    if pos != len(data):
        raise ModelFileError("%s: %d unexpected bytes after the end marker"
                             % (path, len(data) - pos))
    try:
        meta = json.loads(raw_meta.decode("utf-8"))
        kind = kind.decode("ascii")
        arrays = {name.decode("ascii"): np.frombuffer(raw, dtype=dtype).reshape(shape).copy()
                  for name, (dtype, shape, raw) in arrays.items()}
    except ValueError as err:  # JSON and Unicode errors alike, in a file whose CRC is right
        raise ModelFileError("%s: its kind, meta block or array names do not decode (%s)"
                             % (path, err))
    return kind, meta, arrays


def read_float_model(path):
    """(meta, {name: ndarray}) of a float model file, checked as the device's loaders check
    it (device/tinyattn/nn/model_check.py) before a host tool uses it; ModelFileError naming
    the file and what is wrong (an int8 file among them)."""
    kind, meta, arrays = read_model(path)
    if kind == wire.FILE_QUANTIZED:
        raise ModelFileError("%s holds an int8 model (kind %r, from quantize(...).save()); this "
                             "command takes a float model (kind %r): give it the float model "
                             "the int8 one was made from" % (path, kind, SEQUENTIAL))
    if kind != SEQUENTIAL:
        raise ModelFileError("%s holds a %r model, not a %r one" % (path, kind, SEQUENTIAL))
    if not isinstance(meta, dict) or "config" not in meta:
        raise ModelFileError("%s has no model config in its meta block" % path)
    check_float_model(path, meta["config"], arrays)
    return meta, arrays


def check_float_model(path, config, arrays):
    """ModelFileError naming `path` unless the config and {name: ndarray} make a model the
    device loads (device/tinyattn/nn/model_check.py, the device's own check)."""
    from .device_modules import device_module

    shapes = {name: a.shape if a.dtype == np.float32 else "integer (%s)" % a.dtype
              for name, a in arrays.items()}
    try:
        device_module("nn/model_check").check_model(config, shapes)
    except ValueError as err:
        raise ModelFileError("%s: %s" % (path, err)) from None


def _sealed(data):
    """True when data ends in the CRC-32 of the bytes before it and b"END.", False when the
    end marker is there and the CRC does not match, None when there is no end marker."""
    if len(data) < len(MAGIC) + 2 + 8 or data[-4:] != END:
        return None
    return zlib.crc32(data[:-8]) == struct.unpack("<I", data[-8:-4])[0]


def write_model(path, kind, meta, arrays):
    """Write {name: ndarray} (float arrays as float32; int8, uint8, int16, int32 as they are)
    with a kind and JSON meta (or its JSON text); the file appears at `path` only when complete."""
    path = os.fspath(path)
    body = bytearray(MAGIC + struct.pack("<H", VERSION))
    meta_text = meta if isinstance(meta, str) else json.dumps(meta)
    for text, fmt in ((kind, "<H"), (meta_text, "<I")):
        encoded = text.encode()
        body += struct.pack(fmt, len(encoded)) + encoded
    body += struct.pack("<H", len(arrays))
    for name, value in arrays.items():
        value = np.asarray(value)
        if value.dtype.kind == "f":
            value = value.astype("<f4")
        dtype = value.dtype.newbyteorder("<") if value.dtype.itemsize > 1 else value.dtype
        if dtype not in CODES or value.ndim not in (1, 2):
            raise ValueError("array %s: %s of %d dimensions cannot be stored"
                             % (name, value.dtype, value.ndim))
        encoded = name.encode("ascii")
        body += struct.pack("<H", len(encoded)) + encoded + CODES[dtype].encode()
        body += struct.pack("<B", value.ndim) + struct.pack("<%dI" % value.ndim, *value.shape)
        body += np.ascontiguousarray(value, dtype=dtype).tobytes()
    body += struct.pack("<I", zlib.crc32(body)) + END
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(body)
    os.replace(tmp, path)
