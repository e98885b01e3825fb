"""The device end of the serial link: a server of framed requests on stdin and stdout.

Start it from the raw REPL: `import tinyattn.link; tinyattn.link.serve()`. While it runs,
Ctrl-C is off (micropython.kbd_intr(-1)) and nothing is printed; it goes back to the REPL on
an EXIT message or after `timeout` seconds without a good frame. A request goes
frame (framing.py) -> record (records.py) -> its handler (handlers.py) -> the package.
docs/protocol.md has the frames, the message table and the limits.
"""

import gc
import struct
import sys

import micropython

from .framing import LinkError, Port, receive
from .handlers import HANDLERS
from .records import decode, pieces
from .transfer import begin as begin_transfer
from .transfer import part
from .wire import (ACK, BAD_VALUE, BYTE_TIMEOUT_MS, CHUNK, EXIT, INTERNAL, MAX_MESSAGE, MORE,
                   NO_MEMORY, PART, REPLY, TOO_BIG, TRANSFER, UNKNOWN_TYPE)


def serve(timeout=30, byte_timeout=BYTE_TIMEOUT_MS / 1000, stdin=None, stdout=None):
    """Answer frames until EXIT or `timeout` seconds without a good frame; return why.

    Ctrl-C is off while serving and restored after, whatever happens. stdin/stdout default
    to sys.stdin.buffer and sys.stdout.buffer (tests pass byte streams, read to their end).
    """
    polled = stdin is None
    port = Port(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer, poll=polled)
    session = Session()
    micropython.kbd_intr(-1)
    session.kbd_intr = -1
    try:
        return _loop(port, session, int(timeout * 1000), int(byte_timeout * 1000))
    finally:
        micropython.kbd_intr(3)


def _loop(port, session, silence_ms, byte_ms):
    buf = bytearray(CHUNK)
    pending = None  # (type, seq, bytearray, largest size) of a message arriving in chunks
    while True:
        try:
            frame = receive(port, buf, silence_ms, byte_ms)
        except LinkError as err:
            session.fail(port, err.seq, err.code, str(err))
            continue
        if frame is None:
            return "silence"
        session.frames += 1
        kind, flags, seq, payload = frame
        if kind == PART:  # a frame of an announced message (transfer.py)
            whole = part(port, session, seq, flags, payload)
            if whole is not None:
                session.answer(port, whole[0], seq, whole[1])
                whole = None
                gc.collect()
            continue
        if pending is not None and (pending[0], pending[1]) != (kind, seq):
            pending = None  # the host gave up on that message and started another
        if flags & MORE or pending is not None:
            if pending is None:
                pending = (kind, seq, bytearray(), session.max_message())
            if len(pending[2]) + len(payload) > pending[3]:
                session.fail(port, seq, TOO_BIG, "message too big: over %d bytes" % pending[3])
                pending = None
                continue
            try:
                pending[2].extend(payload)
            except MemoryError:  # the message so far fits max_message, not this heap's holes
                pending = None
                gc.collect()
                session.fail(port, seq, NO_MEMORY, "out of memory receiving the message: %d "
                             "bytes free; send a smaller batch" % gc.mem_free())
                continue
            if flags & MORE:
                port.send(ACK, seq, struct.pack("<I", len(pending[2])))
                continue
            payload, pending = pending[2], None
        if kind == EXIT:
            port.send(EXIT | REPLY, seq)
            return "exit"
        session.answer(port, kind, seq, payload)
        payload = None
        gc.collect()


class Session:
    """What the host has loaded (model, optimizer, qmodel), the counters, the answers."""

    def __init__(self):
        self.frames = self.errors = 0
        self.kbd_intr = None
        self.model = self.optimizer = self.optimizer_settings = self.qmodel = None
        self.stream = None  # (the model, its Stream) of STREAM requests
        self.at_once = {}  # work -> the samples a request of it takes at once (chunks.py)
        self.qmodel_rows = None  # rows of x a sample of the int8 model, when known
        self.xq = None  # FORWARD_INT8's input, reused while its size stays
        self.transfer = None  # a message arriving in PART frames (transfer.py)
        self.seq = 0  # of the request being answered
        self.port = None  # the framing.Port the request came on

    def max_message(self):
        """The largest request taken: MAX_MESSAGE, or a quarter of the free heap if less."""
        gc.collect()
        return min(MAX_MESSAGE, gc.mem_free() // 4)

    def fail(self, port, seq, code, message):
        self.errors += 1
        port.error(seq, code, message)

    def answer(self, port, kind, seq, payload):
        """Decode the record, run the handler, send its reply or an error frame."""
        handler = begin_transfer if kind == TRANSFER else HANDLERS.get(kind)
        self.seq, self.port = seq, port  # RUN's records go out on the port as it runs
        try:
            if handler is None:
                raise LinkError(UNKNOWN_TYPE, "unknown message type 0x%02x" % kind)
            head, arrays = decode(payload)
            payload = None
            size, parts = pieces(*handler(self, head, arrays))
        except LinkError as err:
            self.fail(port, seq, err.code, str(err))
            return
        except MemoryError:
            arrays = payload = None
            gc.collect()
            self.fail(port, seq, NO_MEMORY, "out of memory: %d bytes free, the request "
                      "needs more; send a smaller batch" % gc.mem_free())
            return
        except ValueError as err:  # the package's own checks of what it was given
            self.fail(port, seq, BAD_VALUE, str(err))
            return
        except Exception as err:  # a bug: the server keeps running whatever a handler raises
            self.fail(port, seq, INTERNAL, "%s: %s" % (type(err).__name__, err))
            return
        port.send_parts(kind | REPLY, seq, size, parts)
