"""Save and load models: a small binary file of named arrays, written atomically.

`save(model, path)` writes `path + ".tmp"`, then renames it over `path`: an interrupted save
leaves the previous file whole. `write_file` / `read_file` are the format itself, for any
model kind (quantized models store int8 and int32 arrays the same way).

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

Arrays named "host.*" are the host's alone (llama2.c's unused rotary tables, kept for a
byte-identical export): read_file skips them.

read_file checks the CRC-32 before it decodes anything: a damaged file is reported as
"corrupt", a short one as "truncated at byte N", each naming the file.
"""

import array
import json
import os
import struct

from . import float32
from .crc import crc32, crc32_file
from .link.wire import FILE_END as END
from .link.wire import FILE_MAGIC as MAGIC
from .link.wire import FILE_SEQUENTIAL as SEQUENTIAL
from .link.wire import FILE_VERSION as VERSION
from .link.wire import ITEMSIZE

HOST_ONLY = "host."



def save(model, path):
    """Write a Sequential model (its config and parameters) to `path`, atomically."""
    from .nn.sequential import Sequential

    if not isinstance(model, Sequential):
        raise ValueError("model must be a Sequential, got %s" % type(model).__name__)
    if not isinstance(path, str):
        raise ValueError("path must be a str, got %r" % (path,))
    arrays = [(name, param) for name, param, _ in model.collect_params(False)]
    write_file(path, SEQUENTIAL, {"config": model.config()}, arrays)


def load(path):
    """The Sequential model saved at `path`; ValueError when the file is not a good one.

    The arrays are read within the file's length, and the config is checked against them
    before the model is made.
    """
    if not isinstance(path, str):
        raise ValueError("path must be a str, got %r" % (path,))
    kind, meta, arrays = read_file(path)
    if kind != SEQUENTIAL:
        raise ValueError("%s holds a %r model, not a %r one" % (path, kind, SEQUENTIAL))
    if not isinstance(meta, dict) or "config" not in meta:
        raise ValueError("%s has no model config in its meta block" % path)
    stored = dict((name, value) for name, _, value in arrays)
    shapes = dict((name, shape if _is_float(value) else "integer")
                  for name, shape, value in arrays)
    arrays = None

    def fill(name, param):  # each array read goes once copied: the heap holds ~1x the weights
        param[:] = stored.pop(name)

    try:
        return model_from(meta["config"], shapes, fill)
    except ValueError as err:
        raise ValueError("%s: %s" % (path, err))


# ---- a model from its config and named arrays (store.load and the link's LOAD_MODEL) ------
def check_arrays(config, shapes):
    """ValueError unless `shapes` ({name: shape}) are exactly the parameters of `config`."""
    from .nn.spec import model_shapes

    wanted = model_shapes(config)
    names = sorted(name for name, _ in wanted)
    if sorted(shapes) != names:
        raise ValueError("the model needs arrays %s, got %s" % (names, sorted(shapes)))
    for name, shape in wanted:
        if shapes[name] != shape:
            raise ValueError("array %s must be float32 of shape %r, got %r"
                             % (name, shape, shapes[name]))


def model_from(config, shapes, fill):
    """A Sequential from its config and named float32 arrays.

    shapes: {name: shape} of the arrays at hand, checked against the config before anything
    is allocated (check_arrays); fill(name, param) then writes each one into its parameter.
    """
    check_arrays(config, shapes)
    return build_model(config, fill)


def build_model(config, fill):
    """A Sequential of a config whose arrays check_arrays has accepted; fill(name, param)
    writes each parameter."""
    from .nn.sequential import Sequential

    return Sequential.from_config(config, seed=0, fill=fill)


def write_file(path, kind, meta, arrays):
    """Write (name, value) arrays with a model kind and JSON-able meta, atomically.

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
            out.text("<I", json.dumps(meta))
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


def read_file(path):
    """(kind, meta, arrays) from a file written by write_file.

    arrays is a list of (name, shape, value): a ulab float array for float32 data, a flat
    array.array otherwise. Raises ValueError naming the file and the damage for a foreign,
    truncated, corrupt or wrong-version file: the CRC-32 is checked (reading the file in
    small pieces) before any of it is decoded, and a file without its end marker is walked,
    decoding nothing, to where it breaks off.
    """
    size = os.stat(path)[6]
    with open(path, "rb") as f:
        src = _Reader(f, path, size)
        if size < len(MAGIC) or f.read(len(MAGIC)) != MAGIC:
            raise ValueError("%s is not a tinyattn model file (no TINYATTN magic)" % path)
        src.offset = len(MAGIC)
        version = src.unpack("<H")
        sealed = _sealed(f, size)
        if version != VERSION:
            raise ValueError("%s has format version %d; this tinyattn reads version %d%s"
                             % (path, version, VERSION, "" if sealed else
                                " (or the file is corrupt: its CRC-32 does not match)"))
        if sealed is False:
            raise ValueError("%s is corrupt: CRC mismatch (the checksum in its last 8 bytes "
                             "is not the CRC-32 of the %d before them)" % (path, size - 8))
        f.seek(src.offset)
        if sealed is None:
            raise ValueError(_unended(src))
        kind, meta, arrays = _contents(src, True)
        if src.offset != size - 8:
            raise ValueError("%s: its arrays end at byte %d, its CRC-32 is at byte %d"
                             % (path, src.offset, size - 8))
    return kind, meta, arrays


def _sealed(f, size):
    """True when the file ends in its CRC-32 and b"END.", False when the end marker is there
    and the CRC does not match, None when there is no end marker."""
    if size < len(MAGIC) + 2 + 8:
        return None
    f.seek(size - 8)
    stored, end = struct.unpack("<I", f.read(4))[0], f.read(4)
    if end != END:
        return None
    f.seek(0)
    return crc32_file(f, size - 8) == stored


def _contents(src, decode):
    """(kind, meta, arrays) read from src; with decode False nothing is decoded or kept, only
    the lengths followed (a truncated file says where it breaks off)."""
    kind = src.text("<H", decode)
    text = src.text("<I", decode)  # a file cut here is "truncated", not bad JSON
    meta = None
    if decode:
        try:
            meta = json.loads(text)
        except ValueError:
            raise ValueError("%s: the meta block is not valid JSON" % src.path)
    arrays = [_read_array(src, decode) for _ in range(src.unpack("<H"))]
    return kind, meta, [a for a in arrays if a is not None] if decode else arrays


def _unended(src):
    """What is wrong with a file that has no end marker: where it breaks off, or the bytes
    after its end marker, or a damaged end."""
    _contents(src, False)
    src.take(4)  # the CRC-32
    if src.take(4) != END:
        return "%s is corrupt: no end marker (b'END.') at byte %d" % (src.path, src.offset - 4)
    return "%s: %d unexpected bytes after the end marker" % (src.path, src.size - src.offset)


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
        shape = tuple(shape)
        if _count(shape) * ITEMSIZE[code] != len(bytes(value)):
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


class _Reader:
    def __init__(self, f, path, size):
        self.f, self.path, self.size = f, path, size
        self.offset = 0

    def take(self, n, keep=True):
        """The next n bytes (None when not `keep`: skipped), within the file's length."""
        if n > self.size - self.offset:
            raise ValueError("%s is truncated at byte %d: %d bytes needed from byte %d"
                             % (self.path, self.size, n, self.offset))
        self.offset += n
        if not keep:
            self.f.seek(self.offset)
            return None
        return self.f.read(n)

    def unpack(self, fmt):
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def text(self, length_format, decode=True):
        data = self.take(self.unpack(length_format), decode)
        return str(data, "utf-8") if decode else None


def _read_array(src, decode=True):
    name = src.text("<H", decode)
    code = chr(src.take(1)[0])
    if code not in ITEMSIZE:
        raise ValueError("%s: array %s has unknown dtype %r" % (src.path, name, code))
    ndim = src.unpack("<B")
    if ndim not in (1, 2):
        raise ValueError("%s: array %s has %d dimensions, not 1 or 2" % (src.path, name, ndim))
    shape = tuple(src.unpack("<I") for _ in range(ndim))
    if 0 in shape:
        raise ValueError("%s: array %s has shape %r; every dimension must be >= 1"
                         % (src.path, name, shape))
    nbytes = _count(shape) * ITEMSIZE[code]
    if nbytes > src.size - src.offset:
        raise ValueError("%s is truncated at byte %d: array %s of shape %r needs %d bytes "
                         "from byte %d" % (src.path, src.size, name, shape, nbytes, src.offset))
    if not decode or name.startswith(HOST_ONLY):
        return src.take(nbytes, False)  # None
    if code != "f":
        return name, shape, array.array(code, src.take(nbytes))
    return name, shape, float32.from_bytes(shape, src.take)


def _is_float(value):
    return hasattr(value, "shape") and not isinstance(value, (array.array, bytearray))


def _count(shape):
    n = 1
    for dim in shape:
        n *= dim
    return n
