"""Messages larger than max_message: announced by TRANSFER, then sent in PART frames.

A TRANSFER request (a record: `type` of the message it carries, `bytes`, `crc`) makes the
device allocate one buffer of exactly that size, once, before any byte of it arrives (or
answer NO_MEMORY saying how much is free). The PART frames of that seq are written straight
into it, each acknowledged (ACK, u32: bytes so far), all but the last flagged MORE; after the
last, the CRC-32 of the whole is checked and the message is answered as if it had come in
one piece, from a memoryview of the buffer (its arrays are not copied twice). The buffer is
freed then, or at the first error, or by the next TRANSFER. docs/protocol.md, "Transfers".
"""

import gc
import struct

from ..crc import crc32
from .framing import LinkError
from .records import expect, field, only
from .wire import (ACK, BAD_CRC, BAD_PAYLOAD, BAD_VALUE, EXIT, MORE, NO_MEMORY, TOO_BIG,
                   TRANSFER)


class Transfer:
    """One announced message being received: its type, seq, buffer and CRC so far."""

    def __init__(self, kind, seq, size, crc):
        self.kind, self.seq, self.size, self.crc = kind, seq, size, crc
        self.buffer = bytearray(size)
        self.filled = 0
        self.running = 0  # CRC-32 of the bytes so far


def begin(session, head, arrays):
    """The TRANSFER request: allocate the buffer of the message announced; its PART frames
    come with this request's seq."""
    from .handlers import HANDLERS

    only(head, ("type", "bytes", "crc"))
    expect(arrays, ())
    kind = field(head, "type", "int", low=0, high=255)
    size = field(head, "bytes", "int", low=1)
    crc = field(head, "crc", "int", low=0, high=0xFFFFFFFF)
    if kind not in HANDLERS or kind in (TRANSFER, EXIT):
        raise LinkError(BAD_VALUE, "head field 'type': 0x%02x is no message a transfer can "
                        "carry" % kind)
    session.transfer = None  # an earlier one is dropped
    gc.collect()
    free = gc.mem_free()
    if size > free // 2:  # the message, and room to decode and answer it
        raise LinkError(NO_MEMORY, "a message of %d bytes does not fit: %d bytes free, a "
                        "transfer may take half" % (size, free))
    try:
        session.transfer = Transfer(kind, session.seq, size, crc)
    except MemoryError:
        gc.collect()
        raise LinkError(NO_MEMORY, "a message of %d bytes does not fit: %d bytes free "
                        "(fragmented)" % (size, gc.mem_free()))
    return {"bytes": size, "free": gc.mem_free()}, ()


def part(port, session, seq, flags, payload):
    """Take one PART frame; (type, memoryview of the message) after the last, else None
    (acknowledged, or refused with an error frame and the transfer dropped)."""
    transfer = session.transfer
    try:
        if transfer is None or transfer.seq != seq:
            raise LinkError(BAD_PAYLOAD, "PART of seq %d without its TRANSFER" % seq)
        end = transfer.filled + len(payload)
        if end > transfer.size:
            raise LinkError(TOO_BIG, "PART frames carry over the %d bytes announced"
                            % transfer.size)
        memoryview(transfer.buffer)[transfer.filled:end] = payload
        transfer.running = crc32(payload, transfer.running)
        transfer.filled = end
        if flags & MORE:
            port.send(ACK, seq, struct.pack("<I", end))
            return None
        if end != transfer.size:
            raise LinkError(BAD_PAYLOAD, "the transfer ended at %d of the %d bytes announced"
                            % (end, transfer.size))
        if transfer.running != transfer.crc:
            raise LinkError(BAD_CRC, "the transfer's CRC-32 does not match: dropped")
    except LinkError as err:
        session.transfer = None
        session.fail(port, seq, err.code, str(err))
        return None
    session.transfer = None
    return transfer.kind, memoryview(transfer.buffer)
