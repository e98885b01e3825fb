"""ulab.numpy's files: save and load (.npy, as NumPy writes them: a header, then the items
C-ordered), savetxt and loadtxt (text, one row a line, every value as "%f")."""

import array as _array

from . import _dtypes as dt
from ._array import empty, missing, ndarray

_MAGIC = b"\x93NUMPY"
_DESCR = {dt.float: "<f4", dt.uint8: "|u1", dt.int8: "|i1", dt.uint16: "<u2",
          dt.int16: "<i2", dt.bool: "|u1"}
_FROM_DESCR = {"f4": dt.float, "u1": dt.uint8, "i1": dt.int8, "u2": dt.uint16,
               "i2": dt.int16, "b1": dt.bool}


def save(file, a):
    """`a` as a version 1.0 .npy file (header padded to 128 bytes, as ulab writes it)."""
    if not isinstance(a, ndarray):
        raise TypeError("input must be an ndarray")
    shape = "(%d,)" % a.shape[0] if len(a.shape) == 1 else "(%d, %d)" % a.shape
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (_DESCR[a._dtype], shape)
    header += " " * (128 - 10 - len(header) - 1) + "\n"
    with open(file, "wb") as f:
        f.write(_MAGIC + b"\x01\x00" + bytes([len(header) & 255, len(header) >> 8]))
        f.write(header.encode())
        f.write(bytes(a.copy()._buf))


def _field(header, name):
    """The text of one field of a .npy header's dict."""
    start = header.find("'%s':" % name)
    if start < 0:
        raise RuntimeError("corrupted file")
    text = header[start + len(name) + 3:].strip()
    if text.startswith("("):
        return text[1:text.find(")")]
    end = min(i for i in (text.find(","), text.find("}")) if i >= 0)
    return text[:end].strip().strip("'\"")


def load(file):
    """An array from a .npy file of float32, uint8, int8, uint16, int16 or bool items, at
    most 2-D, C-ordered (byte order either way)."""
    with open(file, "rb") as f:
        if f.read(6) != _MAGIC:
            raise RuntimeError("corrupted file")
        version = f.read(2)[0]
        size = f.read(2 if version == 1 else 4)
        length = size[0] + 256 * size[1] + (65536 * (size[2] + 256 * size[3]) if version > 1
                                             else 0)
        header = f.read(length).decode()
        data = f.read()
    descr = _field(header, "descr")
    dtype = _FROM_DESCR.get(descr[1:])
    if dtype is None:
        raise TypeError("wrong dtype")
    if _field(header, "fortran_order") != "False":
        raise RuntimeError("corrupted file")
    shape = tuple(int(n) for n in _field(header, "shape").split(",") if n.strip())
    if len(shape) > 2:
        raise TypeError("too many dimensions")
    size = dt.ITEMSIZE[dtype]
    if descr[0] == ">" and size > 1:  # each item's bytes reversed
        swapped = bytearray(len(data))
        for i in range(0, len(data) - len(data) % size, size):
            for j in range(size):
                swapped[i + j] = data[i + size - 1 - j]
        data = bytes(swapped)
    out = empty(shape, dtype)
    out._buf = _array.array(dt.STORAGE[dtype], data[:len(bytes(out._buf))])
    return out


def savetxt(file, a, delimiter=" ", header="", footer="", comments="# "):
    """One row a line (a 1-D array: one value a line), "%f" each; header and footer lines
    start with `comments`."""
    if not isinstance(a, ndarray):
        raise TypeError("input must be an ndarray")
    rows = [a._row(i) for i in range(a.shape[0])] if len(a.shape) == 2 \
        else [[v] for v in a._row(0)]
    with open(file, "w") as f:
        for line in header.split("\n") if header else []:
            f.write(comments + line + "\n")
        for r in rows:
            f.write(delimiter.join("%f" % v for v in r) + "\n")
        for line in footer.split("\n") if footer else []:
            f.write(comments + line + "\n")


def loadtxt(file, delimiter=None, comments="#", max_rows=-1, usecols=None, dtype=dt.float,
            skiprows=0):
    """A 2-D array (one row a line, a single column too) from a text file; lines from
    `comments` on and blank lines are skipped."""
    if isinstance(usecols, int):
        usecols = (usecols,)
    rows = []
    with open(file) as f:
        for number, line in enumerate(f):
            if number < skiprows:
                continue
            line = line.split(comments)[0].strip() if comments else line.strip()
            if not line:
                continue
            values = [float(v) for v in line.split(delimiter)]
            rows.append([values[c] for c in usecols] if usecols else values)
            if len(rows) == max_rows:
                break
    if any(len(r) != len(rows[0]) for r in rows):
        raise missing("loadtxt of rows with different numbers of values")
    out = empty((len(rows), len(rows[0]) if rows else 0), dtype)
    for i, r in enumerate(rows):
        out._set_row(i, r)
    return out
