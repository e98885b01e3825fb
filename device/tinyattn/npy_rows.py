"""The rows of a 2-D .npy file (NumPy's format, float32 or float64, C order), read a batch
at a time: a calibration set on flash larger than the heap (int8.quantize takes its path).

    rows = NpyRows("calibration.npy")   # the header only: rows.shape, rows.path
    x = rows.read(0, 16)                # rows 0..15 as a (16, cols) ulab array

Every problem with the file is a ValueError naming it.
"""

import array

MAGIC = b"\x93NUMPY"
DTYPES = {"<f4": ("f", 4), "<f8": ("d", 8)}


class NpyRows:
    """A 2-D float .npy file's shape and its rows on demand (the file opened for each read)."""

    def __init__(self, path):
        self.path = path
        try:
            with open(path, "rb") as f:
                head = f.read(10)
                if len(head) < 10 or head[:6] != MAGIC:
                    raise ValueError("%s is not a .npy file (no \\x93NUMPY magic)" % path)
                if head[6] == 1:
                    size, start = head[8] | head[9] << 8, 10
                else:
                    more = f.read(2)
                    size = head[8] | head[9] << 8 | more[0] << 16 | more[1] << 24
                    start = 12
                text = str(f.read(size), "latin-1")
        except OSError as err:
            raise ValueError("%s cannot be read: %s" % (path, err))
        self.code, self.itemsize = self._dtype(_field(path, text, "descr"))
        if _field(path, text, "fortran_order") != "False":
            raise ValueError("%s is in Fortran order; save it in C order (NumPy's default)"
                             % path)
        self.shape = _shape(path, _field(path, text, "shape"))
        self.start = start + size
        import os

        need = self.start + self.shape[0] * self.shape[1] * self.itemsize
        if os.stat(path)[6] < need:
            raise ValueError("%s is truncated: its shape %r needs %d bytes"
                             % (path, self.shape, need))

    def _dtype(self, descr):
        if descr.strip("'\"") not in DTYPES:
            raise ValueError("%s holds %s numbers; give float32 or float64 ('<f4', '<f8')"
                             % (self.path, descr))
        return DTYPES[descr.strip("'\"")]

    def read(self, r0, r1):
        """Rows r0..r1-1 as a (r1 - r0, cols) ulab float array, a row at a time."""
        from ulab import numpy as np

        cols = self.shape[1]
        out = np.zeros((r1 - r0, cols))
        with open(self.path, "rb") as f:
            f.seek(self.start + r0 * cols * self.itemsize)
            for i in range(r1 - r0):
                out[i, :] = np.array(array.array(self.code, f.read(cols * self.itemsize)))
        return out


def _field(path, text, name):
    """The text of one key's value in the header's dict literal."""
    at = text.find("'%s':" % name)
    if at < 0:
        raise ValueError("%s: its .npy header has no %r" % (path, name))
    value = text[at + len(name) + 3:].lstrip()
    end = value.find(")") + 1 if value.startswith("(") else min(
        i for i in (value.find(","), value.find("}"), len(value)) if i >= 0)
    return value[:end].strip()


def _shape(path, text):
    """(rows, cols) of a 2-D shape literal such as "(1000, 120)"."""
    try:
        dims = tuple(int(d) for d in text.strip("()").split(",") if d.strip())
    except ValueError:
        dims = ()
    if len(dims) != 2 or dims[0] < 1 or dims[1] < 1:
        raise ValueError("%s has shape %s; give a 2-D array of rows (samples, features)"
                         % (path, text))
    return dims
