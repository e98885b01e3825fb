"""Records of the serial link: a JSON head and the arrays it lists (docs/protocol.md).

A record is a u16 head length, a UTF-8 JSON object (at most MAX_HEAD bytes), then the raw
arrays listed in head["arrays"] as [name, typecode, shape], row-major. Every size is checked
against the bytes received before anything is allocated from it.
"""

import array
import json
import struct

from ..nn.checks import is_int
from ..nn.checks import finite
from . import json_syntax
from .framing import LinkError
from .wire import BAD_PAYLOAD, BAD_VALUE, ITEMSIZE, MAX_HEAD, NOT_FINITE

REQUIRED = object()


def decode(payload):
    """(head, arrays) of a record; arrays maps name to (typecode, shape, memoryview).

    BAD_PAYLOAD unless the head is a JSON object whose array list is well formed and whose
    arrays account for every byte after it, exactly.
    """
    if len(payload) < 2:
        raise LinkError(BAD_PAYLOAD, "record of %d bytes has no head" % len(payload))
    (size,) = struct.unpack_from("<H", payload, 0)
    if size > MAX_HEAD or 2 + size > len(payload):
        raise LinkError(BAD_PAYLOAD, "record head of %d bytes: at most %d, and within the "
                        "record's %d" % (size, MAX_HEAD, len(payload)))
    text = bytes(payload[2:2 + size])
    try:
        json_syntax.check(text)  # MicroPython's json.loads reads '{"a":}' as {}
        head = json.loads(text)
    except MemoryError:
        raise
    except Exception as err:  # ValueError, UnicodeError: whatever the parser says
        raise LinkError(BAD_PAYLOAD, "record head is not JSON: %s" % (err,))
    if not isinstance(head, dict):
        raise LinkError(BAD_PAYLOAD, "record head must be a JSON object, got %s"
                        % type(head).__name__)
    listed = head.pop("arrays", [])
    if not isinstance(listed, list):
        raise LinkError(BAD_PAYLOAD, "head field 'arrays' must be a list")
    offset, arrays = 2 + size, {}
    view = memoryview(payload)  # a bytearray's slices would be copies: a model's size again
    for entry in listed:
        name, code, shape = _array_entry(entry)
        if name in arrays:
            raise LinkError(BAD_PAYLOAD, "array %r is listed twice" % name)
        nbytes = ITEMSIZE[code]
        for dim in shape:
            nbytes *= dim
        if nbytes > len(payload) - offset:
            raise LinkError(BAD_PAYLOAD, "array %s %r needs %d bytes, the record has %d left"
                            % (name, shape, nbytes, len(payload) - offset))
        arrays[name] = (code, shape, view[offset:offset + nbytes])
        offset += nbytes
    if offset != len(payload):
        raise LinkError(BAD_PAYLOAD, "record has %d bytes, its head describes %d"
                        % (len(payload), offset))
    return head, arrays


def _array_entry(entry):
    """(name, typecode, shape) of one [name, typecode, shape]; shapes 1-D or 2-D, dims >= 1."""
    ok = isinstance(entry, list) and len(entry) == 3 and isinstance(entry[0], str) \
        and entry[1] in ITEMSIZE and isinstance(entry[2], list) and len(entry[2]) in (1, 2)
    if ok:
        for dim in entry[2]:
            ok = ok and is_int(dim) and dim >= 1
    if not ok:
        raise LinkError(BAD_PAYLOAD, "each array must be listed as [name, typecode (one of "
                        "%s), shape (1 or 2 ints >= 1)], got %r"
                        % ("".join(sorted(ITEMSIZE)), entry))
    return entry[0], entry[1], tuple(entry[2])


def encode(head, arrays=()):
    """A record from a JSON-able head and arrays (see pieces), as one bytearray."""
    size, parts = pieces(head, arrays)
    out = bytearray(size)
    view, at = memoryview(out), 0
    for part in parts:
        view[at:at + len(part)] = part
        at += len(part)
    return out


def pieces(head, arrays=()):
    """(size, parts) of a record: its length in bytes, and its bytes as an iterator of small
    pieces (a row of an array at most), so that a reply as large as the model (GET_WEIGHTS)
    is sent without a buffer of its size (framing.Port.send_parts).

    arrays: (name, ulab float array) pairs, or (name, buffer, typecode, shape) for integers
    (MicroPython's array has no .typecode).
    """
    listed = []
    for entry in arrays:
        shape = entry[3] if len(entry) == 4 else entry[1].shape
        listed.append([entry[0], entry[2] if len(entry) == 4 else "f", list(shape)])
    head = dict(head)
    if listed:
        head["arrays"] = listed
    text = json.dumps(head).encode()
    size = 2 + len(text)
    for _, code, shape in listed:
        n = ITEMSIZE[code]
        for dim in shape:
            n *= dim
        size += n
    return size, _parts(text, arrays)


def _parts(text, arrays):
    yield struct.pack("<H", len(text))
    yield text
    for entry in arrays:
        if len(entry) == 4:
            yield bytes(entry[1])
            continue
        value = entry[1]
        for row in [value] if len(value.shape) == 1 else value:
            for i in range(0, len(row), 256):  # float32 whatever the build's float
                yield bytes(array.array("f", row[i:i + 256].tolist()))


# ---- arrays of a request -----------------------------------------------------------------
def expect(arrays, names):
    """Check that the request holds exactly the arrays `names` (BAD_PAYLOAD otherwise)."""
    if sorted(arrays) != sorted(names):
        raise LinkError(BAD_PAYLOAD, "the request must hold arrays %s, it holds %s"
                        % (sorted(names), sorted(arrays)))


def matrix(arrays, name, shape=None, out=None):
    """The float32 array `name` as a ulab array, checked for shape and finite values;
    written into `out` (of its shape) when given, else into a new array."""
    from ulab import numpy as np

    code, got, data = _array(arrays, name, "f")
    if shape is not None and got != tuple(shape):
        raise LinkError(BAD_VALUE, "array %s must have shape %r, got %r"
                        % (name, tuple(shape), got))
    if out is None:
        out = np.zeros(got)
    cols = got[1] if len(got) == 2 else min(got[0], 256)
    step = 4 * cols
    for r in range((len(data) + step - 1) // step):  # a row at a time: no copy of the whole
        # (from a memoryview, array.array would take each byte: bytes() first)
        row = np.array(array.array("f", bytes(data[r * step:(r + 1) * step])))
        if not float(np.sum(row * 0.0)) == 0.0:  # inf * 0 and NaN * 0 are NaN
            raise LinkError(NOT_FINITE, "array %s holds NaN or infinity" % name)
        if len(got) == 2:
            out[r, :] = row
        else:
            out[r * cols:r * cols + len(row)] = row
    return out


class RequestRows:
    """The float32 rows of a request's 2-D array `name`, read a batch at a time (each checked
    as matrix checks it): int8.quantize's calibration reader, as npy_rows.NpyRows is a file's,
    so that QUANTIZE holds its rows once (the message) rather than twice."""

    def __init__(self, arrays, name):
        self.code, self.shape, self.data = _array(arrays, name, "f")
        if len(self.shape) != 2:
            raise LinkError(BAD_VALUE, "array %s must be 2-D, got shape %r" % (name, self.shape))
        self.name, self.path = name, "the request's array %s" % name

    def read(self, r0, r1):
        step = 4 * self.shape[1]
        return matrix({self.name: (self.code, (r1 - r0, self.shape[1]),
                                   self.data[r0 * step:r1 * step])}, self.name)


def require_finite(arrays, name):
    """NOT_FINITE unless every number of the float32 array `name` is finite."""

    data = _array(arrays, name, "f")[2]
    for start in range(0, len(data), 1024):  # a KB at a time: no copy of the whole
        for v in array.array("f", bytes(data[start:start + 1024])):
            if not finite(v):  # NaN and infinity
                raise LinkError(NOT_FINITE, "array %s holds NaN or infinity" % name)


def integers(arrays, name, codes="bBhi", into=None):
    """The integer array `name` (typecode in `codes`) as (array.array copy, code, shape);
    `into`, an array of that typecode and length, is reused for the copy (no allocation)."""
    code, shape, data = _array(arrays, name, codes)
    if into is not None and len(into) * ITEMSIZE[code] == len(data):
        memoryview(into)[:] = data
        return into, code, shape
    return array.array(code, bytes(data)), code, shape


def _array(arrays, name, codes):
    if name not in arrays:
        raise LinkError(BAD_PAYLOAD, "the request has no array %r" % name)
    entry = arrays[name]
    if entry[0] not in codes:
        raise LinkError(BAD_PAYLOAD, "array %s must have typecode %s, got %r"
                        % (name, " or ".join(codes), entry[0]))
    return entry


# ---- head fields ---------------------------------------------------------------------------
def field(head, name, kind, default=REQUIRED, low=None, high=None):
    """Head field `name`: kind "int" (in low..high), "bool", "number" (finite), "str",
    "list" or "dict"; `default` when absent (BAD_VALUE naming the field when required)."""
    if name not in head:
        if default is REQUIRED:
            raise LinkError(BAD_VALUE, "head field %r is missing" % name)
        return default
    value = head[name]
    if kind == "int":
        ok = is_int(value) and (low is None or value >= low) and (high is None or value <= high)
        wanted = "an int >= %d" % low if high is None else "an int in %d..%d" % (low, high)
    elif kind == "number":
        ok = (is_int(value) or isinstance(value, float)) and finite(value)
        wanted = "a finite number"
    elif kind == "bool":
        ok, wanted = isinstance(value, bool), "true or false"
    elif kind == "str":
        ok, wanted = isinstance(value, str), "a string"
    elif kind == "dict":
        ok, wanted = isinstance(value, dict), "an object"
    else:
        ok, wanted = isinstance(value, list), "a list"
    if not ok:
        raise LinkError(BAD_VALUE, "head field %r must be %s, got %s"
                        % (name, wanted, _show(value)))
    return value


def only(head, names):
    """BAD_VALUE naming a head field that the request does not take."""
    for name in head:
        if name not in names:
            raise LinkError(BAD_VALUE, "unknown head field %r; this request takes %s"
                            % (name, ", ".join(names) or "none"))



def _show(value):
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def mask_of(arrays):
    """The request's arrays are x, and "mask" when it has one: its float (B, S) or None."""
    if "mask" not in arrays:
        expect(arrays, ("x",))
        return None
    expect(arrays, ("x", "mask"))
    return matrix(arrays, "mask")


def shape_of(arrays, name, shape, ndim=None):
    """The shape of array `name`, checked against `shape` (or its number of dimensions)."""
    got = arrays[name][1]
    if (shape is not None and got != shape) or (ndim is not None and len(got) != ndim):
        raise LinkError(BAD_VALUE, "array %s must have shape %s, got %r"
                        % (name, shape if shape else "of %d dimensions" % ndim, got))
    return got
