"""CPython buffers mirrored in the emulator's RAM, at addresses that never change.

The Python glue (the device's own code, run in CPython) keeps its bytearrays and arrays; the
first time one is seen (passed to a kernel, or to address_distance) it gets an address, 16-byte
aligned as MicroPython's heap would place it, and stays there. Before each kernel call every
mirrored buffer whose bytes changed on the Python side is written to the emulator; after it
every mirrored writable buffer is read back and updated in place, so a kernel's output is in
the Python object when the call returns.
"""

import array


def is_buffer(value):
    return isinstance(value, (bytes, bytearray, array.array))


class _Mirror:
    __slots__ = ("buf", "address", "synced")

    def __init__(self, buf, address):
        self.buf, self.address, self.synced = buf, address, None


def _bytes(buf):
    return memoryview(buf).cast("B").tobytes()


class BufferMirror:
    """address_of(buffer) -> its emulator address; push() before a call, pull() after."""

    def __init__(self, cpu, region):
        self._cpu, self._region = cpu, region
        self._mirrors = {}  # id(buffer) -> _Mirror (which holds the buffer: ids stay unique)

    def address_of(self, buf):
        if isinstance(buf, memoryview):
            raise TypeError("the emulator mirrors bytearray, bytes and array.array, "
                            "not memoryview slices")
        m = self._mirrors.get(id(buf))
        if m is None:
            size = len(buf) * (buf.itemsize if isinstance(buf, array.array) else 1)
            m = self._mirrors[id(buf)] = _Mirror(buf, self._region.take(size))
        return m.address

    def owner(self, address):
        """The buffer mirrored at `address` (its start), or None."""
        for m in self._mirrors.values():
            if m.address == address:
                return m.buf
        return None

    def push(self):
        for m in self._mirrors.values():
            data = _bytes(m.buf)
            if data != m.synced:
                self._cpu.write(m.address, data)
                m.synced = data

    def pull(self):
        for m in self._mirrors.values():
            if isinstance(m.buf, bytes) or not len(m.buf):
                continue
            data = self._cpu.read(m.address, len(m.synced))
            if data != m.synced:
                memoryview(m.buf).cast("B")[:] = data
                m.synced = data
