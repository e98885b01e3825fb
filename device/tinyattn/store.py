"""Save and load models: a small binary file of named arrays, written atomically.

`save(model, path)` writes `path + ".tmp"`, then renames it over `path`: an interrupted save
leaves the previous file whole. `write_file` (here) and `open_file` /
`read_file` (stored_arrays.py) are the format itself, for any model kind (quantized models
store int8 and int32 arrays the same way). `load` reads each array straight into its
parameter (one copy).

Format version 1, little-endian, readable with NumPy alone (tinyattn_host.modelfile):

    magic    8 bytes  b"TINYATTN"
    version  u16      1
    kind     u16 length, then ASCII        e.g. "sequential"
    meta     u32 length, then UTF-8 JSON   e.g. {"config": [["Dense", 4, 32, true], ...]}
    count    u16      number of arrays, then each array:
      name   u16 length, then ASCII        e.g. "0.W"
      dtype  1 byte   b"f" float32, b"b" int8, b"B" uint8, b"h" int16, b"i" int32
      ndim   u8       1 or 2, then ndim u32 dimensions
      data   prod(dims) * itemsize bytes, row-major
    crc      u32      CRC-32 (zlib's) of every byte before it
    end      4 bytes  b"END."

open_file checks the CRC-32 before it decodes anything: a damaged file is reported as
"corrupt", a short one as "truncated at byte N", each naming the file.
"""

import array
import json
import os
import struct

from . import float32
from .crc import crc32
from .link.wire import FILE_END as END
from .link.wire import FILE_MAGIC as MAGIC
from .link.wire import FILE_SEQUENTIAL as SEQUENTIAL
from .link.wire import FILE_VERSION as VERSION
from .link.wire import ITEMSIZE



def save(model, path):
    """Write a Sequential model (its config and parameters) to `path`, atomically."""
    from .nn.sequential import Sequential

    if not isinstance(model, Sequential):
        raise ValueError("model must be a Sequential, got %s" % type(model).__name__)
    if not isinstance(path, str):
        raise ValueError("path must be a str, got %r" % (path,))
    arrays = [(name, param) for name, param, _ in model.collect_params(False)]
    try:  # nothing is saved that load would refuse
        check_arrays(model.config(), dict((name, param.shape) for name, param in arrays))
    except ValueError as err:
        raise ValueError("%s not saved: %s" % (path, err))
    write_file(path, SEQUENTIAL, {"config": model.config()}, arrays)


def load(path):
    """The Sequential model saved at `path`; ValueError when the file is not a good one.

    In one copy: the file is indexed (its CRC-32 checked, no array read), the config is
    checked against the arrays' shapes before anything is allocated, the model is built, and
    each array is read from the file straight into its parameter, a row at a time.
    """
    from .stored_arrays import open_file  # (its heap only for a load)

    if not isinstance(path, str):
        raise ValueError("path must be a str, got %r" % (path,))
    with open_file(path) as stored:
        if stored.kind != SEQUENTIAL:
            raise ValueError("%s holds a %r model, not a %r one" % (path, stored.kind, SEQUENTIAL))
        meta = stored.meta
        if not isinstance(meta, dict) or "config" not in meta:
            raise ValueError("%s has no model config in its meta block" % path)
        shapes = dict((name, shape if code == "f" else "integer")
                      for name, code, shape in stored.entries())
        try:
            return model_from(meta["config"], shapes, stored.read_into)
        except ValueError as err:
            raise ValueError("%s: %s" % (path, err))


def read_file(path):
    """(kind, meta, arrays) of a file, every array decoded at once (stored_arrays.read_file)."""
    from .stored_arrays import read_file

    return read_file(path)


# ---- a model from its config and named arrays (store.load and the link's LOAD_MODEL) ------
def check_arrays(config, shapes):
    """ValueError unless `shapes` ({name: shape}) are exactly the parameters of `config` and
    its layers fit together (nn/model_check.py: the one check of every way a model arrives)."""
    from .nn.model_check import check_model

    check_model(config, shapes)


CHECK_ONLY = ("tinyattn.nn.model_check", "tinyattn.nn.flow")
"""What a model's check imports that building it does not need."""


def model_from(config, shapes, fill):
    """A Sequential from its config and named float32 arrays.

    shapes: {name: shape} of the arrays at hand, checked against the config before anything
    is allocated (check_arrays); fill(name, param) then writes each one into its parameter.
    The check's own code (nn/model_check.py, nn/flow.py) goes before the model is built
    (let_go.py), so the model's arrays find its room.
    """
    import sys

    before = set(sys.modules)
    check_arrays(config, shapes)
    from .let_go import let_go

    let_go(before, CHECK_ONLY)
    return build_model(config, fill)


def build_model(config, fill):
    """A Sequential of a config whose arrays check_arrays has accepted; fill(name, param)
    writes each parameter (so no random weight is drawn: rng.Unfilled)."""
    from .nn.sequential import Sequential
    from .rng import Unfilled

    with Unfilled():
        return Sequential.from_config(config, seed=0, fill=fill)


def write_file(path, kind, meta, arrays):
    """Write (name, value) arrays with a model kind and JSON-able meta (or its JSON text),
    atomically.

    (name, value): a ulab float array, stored as float32. (name, buffer, code, shape):
    integer data in an array.array or bytearray of typecode `code` (b int8, B uint8,
    h int16, i int32; MicroPython arrays cannot tell their typecode) and a 1-D or 2-D shape.
    The file appears at `path` only when complete.
    """
    tmp = path + ".tmp"
    try:
        with open(tmp, "wb") as f:
            out = _Writer(f)
            out.write(MAGIC + struct.pack("<H", VERSION))
            out.text("<H", kind)
            out.text("<I", meta if isinstance(meta, str) else json.dumps(meta))
            out.write(struct.pack("<H", len(arrays)))
            for entry in arrays:
                _write_array(out, *entry)
            f.write(struct.pack("<I", out.crc) + END)
    except Exception:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    os.rename(tmp, path)


class _Writer:
    def __init__(self, f):
        self.f = f
        self.crc = 0

    def write(self, data):
        self.crc = crc32(data, self.crc)
        self.f.write(data)

    def text(self, length_format, text):
        data = text.encode()
        self.write(struct.pack(length_format, len(data)) + data)


def _write_array(out, name, value, code=None, shape=None):
    if code is None:
        if not _is_float(value):
            raise ValueError("array %s: give (name, buffer, typecode, shape) for integer data"
                             % name)
        code, shape = "f", value.shape
    else:
        if code not in ITEMSIZE or code == "f":
            raise ValueError("array %s: typecode %r cannot be stored" % (name, code))
        from .stored_arrays import item_count

        shape = tuple(shape)
        if item_count(shape) * ITEMSIZE[code] != len(bytes(value)):
            raise ValueError("array %s: shape %r of %r does not fill its %d bytes"
                             % (name, shape, code, len(bytes(value))))
    if len(shape) not in (1, 2):
        raise ValueError("array %s: only 1-D and 2-D arrays, got shape %r" % (name, shape))
    out.text("<H", name)
    out.write(code.encode() + struct.pack("<B", len(shape)))
    for dim in shape:
        out.write(struct.pack("<I", dim))
    if code != "f":
        out.write(value)
    else:
        for row in float32.rows(value):
            out.write(row)


def _is_float(value):
    return hasattr(value, "shape") and not isinstance(value, (array.array, bytearray))
