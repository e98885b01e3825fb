"""CPython buffers mirrored in the emulator's RAM, at addresses that never change.

The Python glue (the device's own code, run in CPython) keeps its bytearrays and arrays; the
first time one is seen (passed to a kernel, or to address_distance) it gets an address, 16-byte
aligned as MicroPython's heap would place it, and keeps it. That address is also the buffer's
object word (objects.py): a buffer's handle is its data. Before each kernel call every
mirrored buffer whose bytes changed on the Python side is written to the emulator; after it
every mirrored writable buffer is read back and updated in place, so a kernel's output is in
the Python object when the call returns (but for the buffers frozen: the ones no kernel
writes, or its scratch that Python never reads; not read back, so many calls on a large model
take seconds, not minutes). A buffer that nothing but the mirror holds any more
(CPython's reference count) is dropped from it, as MicroPython's GC would free it; its
addresses are not reused.
"""

import array
import sys


def is_buffer(value):
    return isinstance(value, (bytes, bytearray, array.array))


GAP = 4096  # bytes between two buffers read in one span


class _Mirror:
    __slots__ = ("buf", "address", "synced", "written", "frozen")

    def __init__(self, buf, address):
        self.buf, self.address, self.synced = buf, address, None
        self.written = self.frozen = False


def _bytes(buf):
    return memoryview(buf).cast("B").tobytes()


class BufferMirror:
    """address_of(buffer) -> its emulator address; push() before a call, pull() after."""

    def __init__(self, cpu, region):
        self._cpu, self._region = cpu, region
        self._by_id = {}  # id(buffer) -> _Mirror (which holds the buffer: the id stays its)
        self._by_address = {}

    def address_of(self, buf):
        if isinstance(buf, memoryview):
            raise TypeError("the emulator mirrors bytearray, bytes and array.array, "
                            "not memoryview slices")
        m = self._by_id.get(id(buf))
        if m is None:
            size = len(buf) * (buf.itemsize if isinstance(buf, array.array) else 1)
            m = _Mirror(buf, self._region.take(size))
            self._by_id[id(buf)] = self._by_address[m.address] = m
        return m.address

    def owner(self, address):
        """The buffer mirrored at `address` (its start), or None."""
        m = self._by_address.get(address)
        return None if m is None else m.buf

    def push(self):
        for key, m in list(self._by_id.items()):
            if sys.getrefcount(m.buf) <= 2:  # the mirror's reference and the argument's
                del self._by_id[key], self._by_address[m.address]
                continue
            data = _bytes(m.buf)
            if data != m.synced:
                self._cpu.write(m.address, data)
                m.synced = data

    def resync(self):
        """Forget what the emulator holds: the next push writes every buffer again."""
        for m in self._by_id.values():
            m.synced = None

    def pull(self):
        """Read every writable buffer back, in spans of neighbours (one read each: a gdb
        round trip costs more than the bytes between buffers)."""
        live = sorted((m for m in self._by_id.values()
                       if m.synced and not m.frozen and not isinstance(m.buf, bytes)),
                      key=lambda m: m.address)
        spans = []
        for m in live:
            if spans and m.address - spans[-1][-1].address - len(spans[-1][-1].synced) < GAP:
                spans[-1].append(m)
            else:
                spans.append([m])
        for span in spans:
            start = span[0].address
            data = self._cpu.read(start, span[-1].address + len(span[-1].synced) - start)
            for m in span:
                got = data[m.address - start:m.address - start + len(m.synced)]
                if got != m.synced:
                    memoryview(m.buf).cast("B")[:] = got
                    m.synced, m.written = got, True

    def watch_writes(self):
        """Forget which buffers calls have written (freeze_unwritten looks from here on)."""
        for m in self._by_id.values():
            m.written = False

    def freeze_unwritten(self):
        """From now on pull() skips every buffer that no call has written since
        watch_writes() (a model's weights: most of the bytes a pull reads); push still
        writes one that Python changes. Should a kernel write one later, the emulator's RAM
        holds it and the next calls use it; only the Python side would not see it, so the
        caller checks what it reads (lm_counts: every token's logits, pulled, against the
        reference)."""
        for m in self._by_id.values():
            m.frozen = m.frozen or not m.written

    def freeze(self, buffers):
        """From now on pull() skips these mirrored buffers: kernels' scratch that the Python
        side never reads (the fast linear kernels' operand buffers, where the kernel copies
        its source row)."""
        for buf in buffers:
            m = self._by_id.get(id(buf))
            if m is not None:
                m.frozen = True
