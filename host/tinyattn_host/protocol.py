"""Host end of the serial link (docs/protocol.md): frames, records, and `Link`.

A frame is a 12-byte header and a payload:

    magic b"\\xa5T" | type u8 | flags u8 | seq u16 | length u16 | crc32 u32 | payload

little-endian; the CRC-32 (zlib's) covers type, flags, seq, length and the payload. A message
longer than the device's chunk travels as several frames of one type and seq, all but the last
flagged MORE, each acknowledged by the device before the next is sent. Request and reply
payloads are records: a u16 length, a JSON head, then the arrays the head lists.
"""

import json
import struct
import time
import zlib

import numpy as np

from . import errors
from .device_modules import device_module
from .errors import BoardError
from .link_requests import Requests

wire = device_module("link/wire")  # the device's own table of the wire and file constants
MAGIC, HEADER, CHUNK, MORE, PROTOCOL, REPLY = (wire.MAGIC, wire.HEADER, wire.CHUNK, wire.MORE,
                                               wire.PROTOCOL, wire.REPLY)
HELLO, STATUS, EXIT, ACK, ERROR = wire.HELLO, wire.STATUS, wire.EXIT, wire.ACK, wire.ERROR
TRANSFER, PART, RECORD, RUN = wire.TRANSFER, wire.PART, wire.RECORD, wire.RUN
PROGRESS_EVERY = 64  # PART frames between progress calls
# How long a request waits for its reply: it bounds a failure only (a 40-row digits batch on
# the ulab stand-in takes over 20 s on a loaded 2-core machine; a board answers in ms).
REPLY_SECONDS = 60.0
ATTENTION, LOAD_MODEL, FORWARD, TRAIN_STEP = (wire.ATTENTION, wire.LOAD_MODEL, wire.FORWARD,
                                              wire.TRAIN_STEP)
GET_WEIGHTS, BENCH, QUANTIZE = wire.GET_WEIGHTS, wire.BENCH, wire.QUANTIZE
LOAD_QMODEL, FORWARD_INT8, STREAM = wire.LOAD_QMODEL, wire.FORWARD_INT8, wire.STREAM
MESSAGES, ERRORS = wire.MESSAGES, wire.ERRORS
DTYPES = {code: np.dtype("<f4" if code == "f" else "<%s%d" % ("u" if code == "B" else "i", size))
          for code, size in wire.ITEMSIZE.items()}
CODES = {dtype: code for code, dtype in DTYPES.items()}  # the typecode of a dtype


class ProtocolError(BoardError):
    """The bytes from the device are not a good frame or record."""


class ErrorReply(errors.DeviceError):
    """The device answered with an error frame: `code`, its `name` and the `message` (an
    errors.DeviceError: the host's one class of the device's failures)."""

    def __init__(self, code, message):
        self.code = code
        self.name = ERRORS.get(code, "ERROR_%d" % code)
        self.message = message
        super().__init__("%s: %s" % (self.name, message))


class LinkTimeout(BoardError):
    """No answer from the device in time."""


# ---- frames ----------------------------------------------------------------------------
def crc(fields, payload):
    return zlib.crc32(payload, zlib.crc32(fields))


def frame(kind, seq, payload=b"", flags=0):
    """One frame's bytes."""
    fields = struct.pack(wire.HEADER_FORMAT[:-1], kind, flags, seq & 0xFFFF, len(payload))
    return MAGIC + fields + struct.pack("<I", crc(fields, payload)) + bytes(payload)


def frames(kind, seq, payload, chunk=CHUNK):
    """A message as frames of at most `chunk` payload bytes, all but the last flagged MORE."""
    parts = [payload[i:i + chunk] for i in range(0, len(payload), chunk)] or [b""]
    return [frame(kind, seq, part, MORE if i < len(parts) - 1 else 0)
            for i, part in enumerate(parts)]


def parse_frame(data):
    """(type, flags, seq, payload) of exactly one frame; ProtocolError when it is not one."""
    data = bytes(data)
    if len(data) < HEADER or data[:2] != MAGIC:
        raise ProtocolError("not a frame: %d bytes, starts %r" % (len(data), data[:2]))
    kind, flags, seq, length, check = struct.unpack_from(wire.HEADER_FORMAT, data, 2)
    payload = data[HEADER:]
    if len(payload) != length:
        raise ProtocolError("frame says %d payload bytes, has %d" % (length, len(payload)))
    if crc(data[2:8], payload) != check:
        raise ProtocolError("CRC mismatch")
    return kind, flags, seq, payload


# ---- records ---------------------------------------------------------------------------
def encode(head=None, arrays=()):
    """A record: u16 head length, the JSON head (with "arrays" listed), the arrays' bytes.

    arrays: (name, value) pairs or a dict; floating values go as float32, integer ones
    keep their dtype (int8, uint8, int16, int32).
    """
    items = list(arrays.items()) if isinstance(arrays, dict) else list(arrays)
    listed, blobs = [], []
    for name, value in items:
        value = np.asarray(value)
        dtype = DTYPES["f"] if value.dtype.kind == "f" else value.dtype.newbyteorder("<")
        if dtype not in CODES:
            raise ValueError("array %s: dtype %s cannot be sent" % (name, value.dtype))
        if value.ndim not in (1, 2):
            raise ValueError("array %s: only 1-D and 2-D arrays, got shape %s"
                             % (name, value.shape))
        listed.append([name, CODES[dtype], list(value.shape)])
        blobs.append(np.ascontiguousarray(value, dtype=dtype).tobytes())
    head = dict(head or {})
    if listed:
        head["arrays"] = listed
    text = json.dumps(head).encode()
    return struct.pack("<H", len(text)) + text + b"".join(blobs)


def decode(payload):
    """(head, {name: NumPy array}) from a record."""
    payload = bytes(payload)
    if len(payload) < 2:
        raise ProtocolError("record of %d bytes has no head" % len(payload))
    (size,) = struct.unpack_from("<H", payload)
    try:
        head = json.loads(payload[2:2 + size])
    except ValueError as err:
        raise ProtocolError("record head is not JSON: %s" % err) from None
    offset, arrays = 2 + size, {}
    for name, code, shape in head.pop("arrays", []):
        dtype = DTYPES[code]
        count = int(np.prod(shape))
        end = offset + count * dtype.itemsize
        if end > len(payload):
            raise ProtocolError("record too short for array %s" % name)
        arrays[name] = np.frombuffer(payload[offset:end], dtype=dtype).reshape(shape).copy()
        offset = end
    if offset != len(payload):
        raise ProtocolError("record has %d bytes, its head describes %d" % (len(payload), offset))
    return head, arrays


# ---- the link ----------------------------------------------------------------------------
class Link(Requests):
    """Requests to `tinyattn.link.serve()` over a pyserial-like port (read, write, in_waiting).

    `request(kind, head, arrays)` returns the reply (head, arrays) or raises ErrorReply;
    a request over the device's `max_message` (HELLO tells; MAX_MESSAGE until then) goes in
    parts (request_in_parts), with `progress(done, total)` called as it goes when set.
    `chunk` is the device's largest frame payload (HELLO tells; CHUNK until then).
    """

    def __init__(self, port, timeout=REPLY_SECONDS):
        self.port = port
        self.timeout = timeout
        self.chunk = CHUNK
        self.max_message = wire.MAX_MESSAGE
        self.float_bytes = 4  # bytes of the device's float (HELLO tells)
        self.info = {}  # HELLO's reply
        self.free = None  # the heap bytes free after the last LOAD_MODEL (its reply tells)
        self.progress = None
        self.seq = 0
        self._buffer = bytearray()

    # -- raw frames --
    def send_bytes(self, data):
        self.port.write(data)

    def _fill(self, deadline):
        """Read what is there (at least one byte unless the deadline passes)."""
        if time.monotonic() >= deadline:
            raise LinkTimeout("no answer from the device within %.1f s" % self.timeout)
        waiting = self.port.in_waiting
        if waiting:
            self._buffer += self.port.read(waiting)
        else:
            time.sleep(0.001)

    def read_frame(self, timeout=None):
        """The next good frame from the device as (type, flags, seq, payload).

        Bytes outside frames (the raw REPL's "OK", a traceback) are skipped; so is a frame
        that fails its CRC. LinkTimeout when none arrives within `timeout`.
        """
        deadline = time.monotonic() + (self.timeout if timeout is None else timeout)
        buf = self._buffer
        while True:
            start = buf.find(MAGIC)
            if start < 0:
                del buf[:max(0, len(buf) - 1)]
                self._fill(deadline)
                continue
            del buf[:start]
            if len(buf) < HEADER:
                self._fill(deadline)
                continue
            length = struct.unpack_from("<H", buf, 6)[0]
            if len(buf) < HEADER + length:
                self._fill(deadline)
                continue
            try:
                parsed = parse_frame(buf[:HEADER + length])
            except ProtocolError:
                del buf[:1]  # a false magic or a damaged frame: look further
                continue
            del buf[:HEADER + length]
            return parsed

    # -- messages --
    def next_seq(self):
        self.seq = (self.seq + 1) & 0xFFFF
        return self.seq

    def request(self, kind, head=None, arrays=(), timeout=None):
        """Send a request, return the reply's (head, arrays); ErrorReply on an error frame."""
        payload = encode(head, arrays)
        if len(payload) <= self.max_message:
            try:
                return decode(self.request_raw(kind, payload, timeout))
            except ErrorReply as err:  # the device's free heap shrank since HELLO
                if err.name != "TOO_BIG":
                    raise
        return decode(self.request_in_parts(kind, payload, timeout))

    def request_in_parts(self, kind, payload, timeout=None):
        """Send `payload` as message `kind` in parts; return the reply payload.

        TRANSFER announces the message (its type, size and CRC-32); the device allocates one
        buffer for it or answers NO_MEMORY with what it has free. Then the payload goes as PART
        frames of the device's chunk size, each acknowledged, and the device answers the whole
        as one request (device/tinyattn/link/transfer.py; docs/protocol.md, "Transfers").
        `self.progress(done, total)` is called as the bytes go (a Progress line on a terminal).
        """
        payload = bytes(payload)
        seq = self.next_seq()
        announce = encode({"type": kind, "bytes": len(payload), "crc": zlib.crc32(payload)})
        self.send_bytes(frame(TRANSFER, seq, announce))
        self.expect_reply(TRANSFER | REPLY, seq, timeout)
        chunk = self.chunk
        count = max(1, -(-len(payload) // chunk))
        for i in range(count):
            last = i == count - 1
            self.send_bytes(frame(PART, seq, payload[i * chunk:(i + 1) * chunk],
                                  0 if last else MORE))
            if not last:
                acked = struct.unpack("<I", self.expect_reply(ACK, seq, timeout))[0]
                if acked != (i + 1) * chunk:
                    raise ProtocolError("the device acknowledged %d bytes, %d were sent"
                                        % (acked, (i + 1) * chunk))
            if self.progress is not None and (last or i % PROGRESS_EVERY == 0):
                self.progress(min(len(payload), (i + 1) * chunk), len(payload))
        return self.expect_reply(kind | REPLY, seq, timeout)

    def request_raw(self, kind, payload, timeout=None):
        """Send a raw payload (chunked, each chunk acknowledged); return the reply payload."""
        seq = self.next_seq()
        parts = frames(kind, seq, payload, self.chunk)
        for i, part in enumerate(parts):
            self.send_bytes(part)
            if i < len(parts) - 1:
                self.expect_reply(ACK, seq, timeout)
        return self.expect_reply(kind | REPLY, seq, timeout)

    def expect_reply(self, kind, seq, timeout=None):
        """The payload of message `kind` with `seq`, joined from its frames."""
        return self.next_message((kind,), seq, timeout)[1]

    def next_message(self, kinds, seq, timeout=None):
        """(type, payload) of the next message with `seq`, one of `kinds`, joined from its
        frames; ErrorReply on an error frame. `timeout` bounds the wait for each frame."""
        payload, kind = bytearray(), None
        while True:
            got, flags, got_seq, part = self.read_frame(timeout)
            if got_seq != seq:
                continue  # a late answer to an earlier request
            if got == ERROR:
                raise ErrorReply(part[0] if part else 0, part[1:].decode(errors="replace"))
            if got not in kinds or kind not in (None, got):
                raise ProtocolError("expected %s, got %s"
                                    % (" or ".join(map(_name, kinds)), _name(got)))
            kind = got
            payload += part
            if not flags & MORE:
                return kind, bytes(payload)

    def hello(self):
        head, _ = self.request(HELLO)
        self.chunk = head.get("chunk", CHUNK)
        self.max_message = head.get("max_message", wire.MAX_MESSAGE)
        self.float_bytes = head.get("float") or 4  # ulab's float: 4 bytes, 8 on a double build
        self.info = head
        return head

    def status(self):
        return self.request(STATUS)[0]

    def run(self, module, function, on_record, kwargs=None, timeout=None, path=None):
        """RUN: tinyattn.<module>.<function>(emit=..., **kwargs) on the device, on_record(dict)
        for each record it emits, as it comes; returns the reply's head (`records`).
        `timeout` bounds the silence between two records, not the whole run. `path`: a
        folder of the board's flash whose top-level `module` runs instead of the package's."""
        head = {"module": module, "function": function, "kwargs": kwargs or {}}
        if path is not None:
            head["path"] = path
        seq = self.next_seq()
        parts = frames(RUN, seq, encode(head), self.chunk)
        for i, part in enumerate(parts):
            self.send_bytes(part)
            if i < len(parts) - 1:
                self.expect_reply(ACK, seq, timeout)
        while True:
            kind, payload = self.next_message((RECORD, RUN | REPLY), seq, timeout)
            if kind == RUN | REPLY:
                return decode(payload)[0]
            on_record(decode(payload)[0])

    def exit(self, timeout=5.0):
        self.request_raw(EXIT, b"", timeout)


def _name(kind):
    base = MESSAGES.get(kind & ~REPLY, "0x%02x" % kind)
    return base + (" reply" if kind & REPLY and kind != REPLY else "")
