"""The host end of transfers: a request larger than the device's max_message, in parts.

    reply = send_in_parts(link, protocol.LOAD_MODEL, payload, progress=show)

TRANSFER announces the message (its type, size and CRC-32); the device allocates one buffer
for it or answers NO_MEMORY with what it has free. Then the payload goes as PART frames of
the device's chunk size, each acknowledged, and the device answers the whole as one request
(device/tinyattn/transfer.py; docs/protocol.md, "Transfers"). `progress(done, total)` is
called as the bytes go (a Progress line on a terminal).
"""

import struct
import zlib

from . import protocol

PROGRESS_EVERY = 64  # frames between progress calls


def send_in_parts(link, kind, payload, timeout=None, progress=None):
    """Send `payload` as message `kind` in parts; return the reply payload."""
    payload = bytes(payload)
    announce = protocol.encode({"type": kind, "bytes": len(payload),
                                "crc": zlib.crc32(payload)})
    seq = link.next_seq()
    link.send_bytes(protocol.frame(protocol.TRANSFER, seq, announce))
    link.expect_reply(protocol.TRANSFER | protocol.REPLY, seq, timeout)
    chunk = link.chunk
    count = max(1, -(-len(payload) // chunk))
    for i in range(count):
        last = i == count - 1
        part = payload[i * chunk:(i + 1) * chunk]
        link.send_bytes(protocol.frame(protocol.PART, seq, part, 0 if last else protocol.MORE))
        if not last:
            ack = link.expect_reply(protocol.ACK, seq, timeout)
            if struct.unpack("<I", ack)[0] != (i + 1) * chunk:
                raise protocol.ProtocolError("the device acknowledged %d bytes, %d were sent"
                                             % (struct.unpack("<I", ack)[0], (i + 1) * chunk))
        if progress is not None and (last or i % PROGRESS_EVERY == 0):
            progress(min(len(payload), (i + 1) * chunk), len(payload))
    return link.expect_reply(kind | protocol.REPLY, seq, timeout)
