"""The link's fuzz stream through serve(): malformed items of every kind, each followed by a
good request (tests/e2e/test_link_fuzz.py writes the stream and the plan).

The host's plan says, item by item, the error the device must answer (or "ACK", or nothing)
and what the good request's reply must hold: float logits within the tolerance of the NumPy
reference, int8 outputs bit for bit, STATUS's error count. The replies go to a file and are
read back a message at a time; the plan is read a chunk at a time.
"""

import struct

import check
from tinyattn.link import server as link
from tinyattn.crc import crc32
from tinyattn.link.wire import ERRORS

MAGIC = b"\xa5T"
ACK, ERROR, MORE, REPLY = 0x04, 0x05, 1, 0x80


def messages(f):
    """(type, seq, payload) of each message in the file of frames `f`, chunks joined; each
    frame with its magic, its whole length and a good CRC."""
    last = None  # [type, seq, payload, more]
    count = 0
    while True:
        head = f.read(12)
        if not head:
            break
        if len(head) != 12 or head[:2] != MAGIC:
            raise AssertionError("reply frame %d: no whole header with its magic" % count)
        kind, flags, seq, length, crc = struct.unpack_from("<BBHHI", head, 2)
        payload = f.read(length)
        if len(payload) != length or crc32(payload, crc32(head[2:8])) != crc:
            raise AssertionError("reply frame %d: cut short or a bad CRC" % count)
        count += 1
        if last is not None and last[3] and (last[0], last[1]) == (kind, seq):
            last[2] += payload
            last[3] = flags & MORE
            continue
        if last is not None:
            yield last[0], last[1], bytes(last[2])
        last = [kind, seq, bytearray(payload), flags & MORE]
    if last is not None:
        yield last[0], last[1], bytes(last[2])




def name_of(reply):
    kind, _, payload = reply
    if kind == ACK:
        return "ACK"
    return ERRORS.get(payload[0], payload[0]) if kind == ERROR else kind


def next_reply(replies, acks=False):
    """The next reply, ACKs skipped unless `acks`."""
    for reply in replies:
        if acks or reply[0] != ACK:
            return reply
    raise AssertionError("no more replies")


def check_good(want, reply, what):
    head, arrays = check.record(reply[2])
    if "logits" in want:
        code, shape, values = arrays["logits"]
        check.equal(shape, want["shape"], what + ": logits shape")
        check.close(values, want["logits"], atol=want["atol"], what=what + ": logits")
    elif "y" in want:
        check.equal([head["rows"], head["cols"]], want["shape"], what + ": int8 rows, cols")
        check.equal(arrays["y"][2], want["y"], what + ": int8 output")
    else:
        check.equal([head["errors"], head["model"], head["qmodel"]],
                    [want["errors"], True, True], what + ": STATUS errors, model, qmodel")


def test_every_malformed_item_is_answered_then_a_good_request_checked():
    fuzz = check.fixture("fuzz")
    with open(check.path("stream.bin"), "rb") as stdin:
        with open(check.path("replies.bin"), "wb") as stdout:
            link.serve(timeout=5, stdin=stdin, stdout=stdout)  # to the end of the stream
    with open(check.path("replies.bin"), "rb") as f:
        replies = messages(f)
        for want in fuzz["setup"]:
            reply = next_reply(replies)
            if reply[0] != want:
                raise AssertionError("a setup request got %s %r, expected the reply %d"
                                     % (name_of(reply), reply[2][:200], want))
        done = 0
        for chunk in check.names("plan"):
            for maker, expected, kind, want in check.fixture(chunk)["plan"]:
                what = "item %d (%s)" % (fuzz["first"] + done, maker)
                if expected is not None:
                    got = next_reply(replies, acks=expected == "ACK")
                    if name_of(got) != expected:
                        raise AssertionError("%s: answered %s %r, expected %s"
                                             % (what, name_of(got), got[2][:80], expected))
                reply = next_reply(replies)
                if reply[0] != kind | REPLY:
                    raise AssertionError("%s: the good request got %s %r" % (what, reply[0],
                                                                            reply[2][:80]))
                check_good(want, reply, what)
                done += 1
        check.equal(done, fuzz["items"], "items checked")
        tail = [name_of(r) for r in replies if r[0] != ACK]
        check.equal(tail, fuzz["tail"], "the replies after the last item")
