"""A model file (store.py's format) opened for loading: checked, indexed, read on demand.

open_file checks the magic, version and CRC-32 (reading the file in small pieces), then walks
the arrays' headers, recording (name, typecode, shape, offset) and skipping their data, so
nothing larger than the header block is allocated; a loader then reads each array straight
into the buffer that holds it (StoredArrays.read_into), and the load's peak is the model plus
one piece. read_file decodes every array at once (the tests, the host's checks).
"""

import array
import json
import os
import struct

from . import float32
from .crc import crc32_file
from .link.wire import FILE_END as END
from .link.wire import FILE_MAGIC as MAGIC
from .link.wire import FILE_VERSION as VERSION
from .link.wire import ITEMSIZE

HOST_ONLY = "host."
"""Arrays named "host.*" are the host's alone (llama2.c's unused rotary tables, kept for a
byte-identical export): the index leaves them out, so no loader sees them."""


def read_file(path):
    """(kind, meta, arrays) from a file written by write_file.

    arrays is a list of (name, shape, value): a ulab float array for float32 data, a flat
    array.array otherwise. Raises ValueError as open_file does. A loader reads the arrays
    into their own buffers instead (open_file): this holds every array at once.
    """
    with open_file(path) as stored:
        arrays = [(name, shape, stored.read(name)) for name, _, shape in stored.entries()]
    return stored.kind, stored.meta, arrays


def open_file(path):
    """The StoredArrays of a file written by write_file: the file checked and indexed (a
    with-block closes it).

    Raises ValueError naming the file and the damage for a foreign, truncated, corrupt or
    wrong-version file: the CRC-32 is checked (reading the file in small pieces) before any
    of it is decoded, and a file without its end marker is walked, decoding nothing, to
    where it breaks off. Nothing larger than the file's header block is allocated.
    """
    size = os.stat(path)[6]
    f = open(path, "rb")
    try:
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
        kind, meta, index = _contents(src, True)
        if src.offset != size - 8:
            raise ValueError("%s: its arrays end at byte %d, its CRC-32 is at byte %d"
                             % (path, src.offset, size - 8))
        return StoredArrays(src, kind, meta, index)
    except Exception:
        f.close()
        raise


class StoredArrays:
    """A checked model file's kind, meta and array index; each array read on demand.

    entries(): (name, typecode, shape) in file order, of the arrays not read yet. read(name):
    a new buffer of it (ulab float array, or array.array); read_into(name, param): its float32
    data straight into a ulab array of its shape, a row at a time. Each array is read once:
    its index entry goes as it is read (a load's heap then holds the index of the arrays
    still to come). unread(): the names never read. read_in_order(): no index at all from then
    on (a load that reads the arrays in the file's order).
    """

    def __init__(self, src, kind, meta, index):
        self.src, self.kind, self.meta = src, kind, meta
        self._index = index  # [(name, code, shape, offset)] of the arrays not read yet
        self._next = None  # the header to walk from, once the index is let go

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.src.f.close()

    def entries(self):
        return [entry[:3] for entry in self._index]

    def unread(self):
        return [entry[0] for entry in self._index]

    def read_in_order(self):
        """Let the index go: each read then walks the arrays' headers, decoding nothing else,
        from the one after the array read last (from the first when the name is not ahead).
        A load that asks for the arrays in the file's order (int8.load) then holds no index
        while it builds, nor leaves the holes of its entries among what it builds."""
        self._index = None
        self._next = self.src.first

    def _walk(self, name):
        """(code, shape) of array `name`, the file at its data (read_in_order); KeyError."""
        src = self.src
        for start in (self._next, src.first):
            src.offset = start
            src.f.seek(start)
            while src.offset < src.size - 8:
                found, code, shape, offset = _index_array(src)
                if found == name:
                    self._next = src.offset
                    src.f.seek(offset)
                    return code, shape
        raise KeyError(name)

    def _seek(self, name):
        if self._index is None:
            return self._walk(name)
        for i, entry in enumerate(self._index):
            if entry[0] == name:
                del self._index[i]
                self.src.f.seek(entry[3])
                return entry[1], entry[2]
        raise KeyError(name)  # not in the file, or read already

    def read(self, name):
        code, shape = self._seek(name)
        if code == "f":
            return float32.from_bytes(shape, self.src.f.read)
        data = array.array(code, bytes(item_count(shape) * ITEMSIZE[code]))
        self.src.f.readinto(data)
        return data

    def read_bytes(self, name):
        """An int8 array ("b") read into a bytearray of its size, with no other copy."""
        code, shape = self._seek(name)
        if code != "b":
            raise ValueError("array %s is %r, not int8" % (name, code))
        data = bytearray(item_count(shape))
        self.src.f.readinto(data)
        return data

    def read_into(self, name, param):
        code, shape = self._seek(name)
        if code != "f" or tuple(param.shape) != shape:
            raise ValueError("array %s (%s, %r) cannot fill a float32 parameter of shape %r"
                             % (name, code, shape, param.shape))
        float32.read_into(param, self.src.f.read)


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
    """(kind, meta, index) read from src, index: (name, code, shape, offset) of every array,
    whose data is skipped, not read; with decode False nothing is decoded, only the lengths
    followed (a truncated file says where it breaks off)."""
    kind = src.text("<H", decode)
    text = src.text("<I", decode)  # a file cut here is "truncated", not bad JSON
    meta = None
    if decode:
        try:
            meta = json.loads(text)
        except ValueError:
            raise ValueError("%s: the meta block is not valid JSON" % src.path)
    index = []
    count = src.unpack("<H")
    src.first = src.offset  # the first array's header (StoredArrays.read_in_order)
    for _ in range(count):
        entry = _index_array(src, decode)
        if decode:
            for old in index:
                if old[0] == entry[0]:
                    raise ValueError("%s: array %s appears twice" % (src.path, entry[0]))
        if not decode or not entry[0].startswith(HOST_ONLY):
            index.append(entry)
    return kind, meta, index


def _unended(src):
    """What is wrong with a file that has no end marker: where it breaks off, or the bytes
    after its end marker, or a damaged end."""
    _contents(src, False)
    src.take(4)  # the CRC-32
    if src.take(4) != END:
        return "%s is corrupt: no end marker (b'END.') at byte %d" % (src.path, src.offset - 4)
    return "%s: %d unexpected bytes after the end marker" % (src.path, src.size - src.offset)


class _Reader:
    def __init__(self, f, path, size):
        self.f, self.path, self.size = f, path, size
        self.offset = 0
        self.first = None  # the offset of the first array's header, once walked to
        self._bufs = {1: bytearray(1), 2: bytearray(2), 4: bytearray(4)}  # (unpack)

    def need(self, n):
        """ValueError unless n more bytes are within the file's length."""
        if n > self.size - self.offset:
            raise ValueError("%s is truncated at byte %d: %d bytes needed from byte %d"
                             % (self.path, self.size, n, self.offset))

    def take(self, n, keep=True):
        """The next n bytes (None when not `keep`: skipped), within the file's length."""
        self.need(n)
        self.offset += n
        if not keep:
            self.f.seek(self.offset)
            return None
        return self.f.read(n)

    def unpack(self, fmt):
        """The next unsigned little-endian int of fmt ("<B", "<H" or "<I"), read into the
        buffer kept for its size: walking the index allocates the entries it keeps and
        nothing between them, so they lie together in the heap (a load's later imports and
        arrays then find whole holes, not pieces)."""
        n = struct.calcsize(fmt)
        self.need(n)
        buf = self._bufs[n]
        self.f.readinto(buf)
        self.offset += n
        value = 0
        for i in range(n - 1, -1, -1):
            value = (value << 8) | buf[i]
        return value

    def text(self, length_format, decode=True):
        data = self.take(self.unpack(length_format), decode)
        return str(data, "utf-8") if decode else None


def _index_array(src, decode=True):
    """(name, code, shape, offset of its data) of the array at src, its data skipped."""
    name = src.text("<H", decode)
    code = chr(src.unpack("<B"))
    if code not in ITEMSIZE:
        raise ValueError("%s: array %s has unknown dtype %r" % (src.path, name, code))
    ndim = src.unpack("<B")
    if ndim not in (1, 2):
        raise ValueError("%s: array %s has %d dimensions, not 1 or 2" % (src.path, name, ndim))
    shape = (src.unpack("<I"),) if ndim == 1 else (src.unpack("<I"), src.unpack("<I"))
    if 0 in shape:
        raise ValueError("%s: array %s has shape %r; every dimension must be >= 1"
                         % (src.path, name, shape))
    nbytes = item_count(shape) * ITEMSIZE[code]
    if nbytes > src.size - src.offset:
        raise ValueError("%s is truncated at byte %d: array %s of shape %r needs %d bytes "
                         "from byte %d" % (src.path, src.size, name, shape, nbytes, src.offset))
    offset = src.offset
    src.take(nbytes, False)
    return name, code, shape, offset


def item_count(shape):
    n = 1
    for dim in shape:
        n *= dim
    return n
