"""Frames of the serial link: a 12-byte header and a payload (docs/protocol.md, "Frame")."""

import struct
import time

from ..crc import crc32
from .wire import (BAD_CRC, CHUNK, ERROR, HEADER, HEADER_FORMAT, MAGIC, MORE, OVERSIZED,
                   REPLY_CHUNK, TRUNCATED)


class LinkError(Exception):
    """A request the device answers with an error frame: `code`, a message, the `seq`."""

    def __init__(self, code, message, seq=0):
        super().__init__(message)
        self.code = code
        self.seq = seq


class Port:
    """Byte I/O for the link: stdin/stdout binary streams, polled when `poll` is true.

    A board's stdin blocks until it has every byte asked for, and its poll says only whether
    one byte is there: a bulk readinto of a payload would wait forever on a frame that broke
    off. So bytes are taken one at a time, each after a poll, in one loop (fill): a frame that
    breaks off is TRUNCATED after byte_ms.
    """

    def __init__(self, stdin, stdout, poll=True):
        self.stdin, self.stdout = stdin, stdout
        self.poller = None
        if poll:
            import select

            self.poller = select.poll()
            self.poller.register(stdin, select.POLLIN)
        self.one = bytearray(1)
        self.eof = False
        self.header = bytearray(HEADER)
        self.out = None  # the payload buffer of the frames sent, made on first use

    def byte(self, timeout_ms):
        """The next byte, or -1 after timeout_ms without one (or at the end of the stream)."""
        if self.poller is not None:
            for _ in self.poller.ipoll(timeout_ms):
                break
            else:
                return -1
        if not self.stdin.readinto(self.one):
            self.eof = True
            return -1
        return self.one[0]

    def fill(self, buf, start, end, timeout_ms):
        """Put the next bytes into buf[start:end], each within timeout_ms of the one before;
        return how many came (fewer after a silence or at the end of the stream)."""
        poller, readinto, one = self.poller, self.stdin.readinto, self.one
        for i in range(start, end):
            if poller is not None:
                for _ in poller.ipoll(timeout_ms):
                    break
                else:
                    return i - start
            if not readinto(one):
                self.eof = True
                return i - start
            buf[i] = one[0]
        return end - start

    def send(self, kind, seq, payload=b""):
        """Write a message as frames of at most REPLY_CHUNK payload bytes."""
        self.send_parts(kind, seq, len(payload), (payload,))

    def send_parts(self, kind, seq, size, parts):
        """Write a message of `size` bytes, given as pieces (bytes-like, of any lengths), as
        frames of at most REPLY_CHUNK payload bytes, each gathered in one REPLY_CHUNK buffer:
        a reply as large as the model needs no buffer of its size."""
        if self.out is None:
            self.out = bytearray(REPLY_CHUNK)
        out, fill, sent = self.out, 0, 0
        for part in parts:
            view, at = memoryview(part), 0
            while at < len(view):
                n = min(len(view) - at, REPLY_CHUNK - fill)
                out[fill:fill + n] = view[at:at + n]
                fill, at = fill + n, at + n
                if fill == REPLY_CHUNK and sent + fill < size:
                    self._frame(kind, MORE, seq, fill)
                    sent, fill = sent + fill, 0
        self._frame(kind, 0, seq, fill)

    def _frame(self, kind, flags, seq, length):
        """Write one frame whose payload is the first `length` bytes of self.out."""
        part = memoryview(self.out)[:length]
        head = self.header
        head[0:2] = MAGIC
        struct.pack_into("<BBHH", head, 2, kind, flags, seq, length)
        struct.pack_into("<I", head, 8, crc32(part, crc32(memoryview(head)[2:8])))
        self.stdout.write(head)
        self.stdout.write(part)

    def error(self, seq, code, message):
        """An ERROR frame: the code, then the message (at most 200 bytes of it)."""
        self.send(ERROR, seq, bytes([code]) + message.encode()[:200])


def receive(port, buf, silence_ms, byte_ms):
    """The next frame as (type, flags, seq, payload memoryview into buf), None after silence_ms.

    Bytes before the magic are skipped (resynchronisation). A frame that breaks off, is
    longer than CHUNK or fails its CRC raises LinkError with the seq it claimed.
    """
    deadline = time.ticks_add(time.ticks_ms(), silence_ms)
    previous = -1
    while True:
        left = time.ticks_diff(deadline, time.ticks_ms())
        if left <= 0 or port.eof:
            return None
        byte = port.byte(left)
        if previous == MAGIC[0] and byte == MAGIC[1]:
            break
        previous = byte
    head = port.header
    if port.fill(head, 2, HEADER, byte_ms) < HEADER - 2:
        raise LinkError(TRUNCATED, "truncated frame: the header broke off")
    kind, flags, seq, length, crc = struct.unpack_from(HEADER_FORMAT, head, 2)
    if length > CHUNK:
        raise LinkError(OVERSIZED, "frame payload of %d bytes; at most %d, send larger "
                        "messages in chunks" % (length, CHUNK), seq)
    got = port.fill(buf, 0, length, byte_ms)
    if got < length:
        raise LinkError(TRUNCATED, "truncated frame: %d of %d payload bytes" % (got, length), seq)
    payload = memoryview(buf)[:length]
    if crc32(payload, crc32(memoryview(head)[2:8])) != crc:
        raise LinkError(BAD_CRC, "CRC mismatch: frame dropped", seq)
    return kind, flags, seq, payload
