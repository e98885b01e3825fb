"""The device end of the link: frames in, frames out, through link.serve() over byte streams.

The host writes each request stream (fixture files *.bin, built with tinyattn_host.protocol)
and what the answers must be (the golden frames, the NumPy reference's outputs). The device
serves the stream, with a stand-in for the micropython module to see Ctrl-C turned off and
on, then reads its own replies: the frame layout of docs/protocol.md, parsed here.
"""

import array
import io
import struct

import check
from tinyattn.link import records, server as link
from tinyattn.crc import crc32, crc32_table
from tinyattn.link.wire import ERRORS
from ulab import numpy as np

MAGIC = b"\xa5T"
ERROR_TYPE = 0x05


class Keyboard:
    """Stands for the micropython module while serve() runs: records its kbd_intr calls."""

    def __init__(self):
        self.calls = []

    def kbd_intr(self, c):
        self.calls.append(c)


def read(name):
    with open(check.path(name), "rb") as f:
        return f.read()


def serve(stream, stdout=None):
    """serve() over the fixture file `stream`: (why it returned, kbd_intr calls, bytes out)."""
    keyboard, real = Keyboard(), link.micropython
    out = io.BytesIO() if stdout is None else stdout
    link.micropython = keyboard
    try:
        why = link.serve(timeout=5, byte_timeout=0.05, stdin=io.BytesIO(read(stream)),
                         stdout=out)
    finally:
        link.micropython = real
    return why, keyboard.calls, out.getvalue() if stdout is None else b""


def frames(data):
    """The frames in `data` as (type, flags, seq, payload, the frame's bytes): each with its
    magic, its whole length and a good CRC (over type, flags, seq, length and the payload)."""
    out, at = [], 0
    while at < len(data):
        if data[at:at + 2] != MAGIC:
            raise AssertionError("reply %d: no magic at byte %d" % (len(out), at))
        kind, flags, seq, length, crc = struct.unpack_from("<BBHHI", data, at + 2)
        payload = data[at + 12:at + 12 + length]
        if len(payload) != length:
            raise AssertionError("reply %d: %d of %d payload bytes" % (len(out), len(payload),
                                                                         length))
        if crc32(payload, crc32(data[at + 2:at + 8])) != crc:
            raise AssertionError("reply %d: bad CRC" % len(out))
        out.append((kind, flags, seq, payload, data[at:at + 12 + length]))
        at += 12 + length
    return out


def joined(replies):
    """(type, seq, payload) of each message in `replies` (frames), its chunks joined."""
    out, more = [], False
    for kind, flags, seq, payload, _ in replies:
        if more and out[-1][:2] == [kind, seq]:
            out[-1][2] += payload
        else:
            out.append([kind, seq, bytearray(payload)])
        more = flags & 1
    return [(kind, seq, bytes(payload)) for kind, seq, payload in out]




def matrix(entry):
    """A (typecode, shape, values) float array as a ulab array of its shape."""
    code, shape, values = entry
    check.equal(code, "f", "typecode")
    if len(shape) == 1:
        return np.array(values)
    out = np.zeros((shape[0], shape[1]))
    for r in range(shape[0]):
        out[r, :] = np.array(values[r * shape[1]:(r + 1) * shape[1]])
    return out


def float_bits(values):
    """The float32 bit patterns of numbers (exact whatever the build's float)."""
    return list(array.array("I", bytes(array.array("f", values))))


def flat(values):
    return [v for row in values for v in row] if values and isinstance(values[0], list) \
        else values


def same(got, want, what):
    if got != want:
        raise AssertionError("%s: %r, expected %r" % (what, got, want))


def error(reply):
    """(seq, error name, message) of an ERROR frame (or message)."""
    seq, payload = reply[1:3] if len(reply) == 3 else reply[2:4]
    return seq, ERRORS.get(payload[0], payload[0]), str(payload[1:], "utf-8")


# ---- golden frames -------------------------------------------------------------------------
def test_golden_frames_in_give_the_golden_frames_out():
    """Every golden frame goes in (requests and replies alike); each gets its answer, with
    its seq; the EXIT reply, an ACK and a BAD_CRC error come out byte for byte golden."""
    want = check.fixture("golden_replies")
    why, _, out = serve("golden.bin")
    same(why, "exit", "serve() returned")
    replies = frames(out)
    same(len(replies), len(want["replies"]), "number of replies")
    for i, (reply, (label, kind, seq, name, part, golden)) in enumerate(
            zip(replies, want["replies"])):
        what = "reply %d (to %s)" % (i, label)
        same([reply[0], reply[2]], [kind, seq], what + ": type and seq")
        if name is not None:
            _, got_name, message = error(reply)
            same(got_name, name, what + ": error")
            if part not in message:
                raise AssertionError("%s: %r is not in %r" % (what, part, message))
        if golden is not None:
            same(reply[4].hex(), golden, what + ": bytes")


def test_golden_records_decode_and_encode():
    """The golden payloads through the record layer: heads and arrays (floats bit for bit),
    and encoded again to the same bytes when the head holds the array list only."""
    for case in check.fixture("golden_records")["cases"]:
        payload = bytes.fromhex(case["payload"])
        head, arrays = records.decode(payload)
        same(head, case["head"], case["name"] + " head")
        same(sorted(arrays), sorted(case["arrays"]), case["name"] + " array names")
        for name, (code, shape, values) in case["arrays"].items():
            what = "%s array %s" % (case["name"], name)
            same([arrays[name][0], list(arrays[name][1])], [code, shape], what)
            if code == "f":
                check.equal(float_bits(flat(records.matrix(arrays, name).tolist())),
                            values, what + " (float32 bits)")
            else:
                check.equal(records.integers(arrays, name)[0], values, what)
        if not case["head"]:
            again = records.encode({}, [(n, records.matrix(arrays, n)) if arrays[n][0] == "f"
                                        else (n,) + records.integers(arrays, n)
                                        for n in case["order"]])
            same(bytes(again).hex(), case["payload"], case["name"] + " encoded again")


def test_crc32_table_fallback_matches_zlib():
    data, want = read("crc_data"), check.fixture("crc")["zlib"]
    check.equal(crc32_table(data), want, "crc32_table")
    check.equal(crc32_table(data[5:], crc32_table(data[:5])), want, "crc32_table chained")
    check.equal(crc32(data), want, "crc32")


# ---- serve() -------------------------------------------------------------------------------
def test_serve_answers_and_disables_ctrl_c_then_restores_it():
    want = check.fixture("hello")
    why, calls, out = serve("hello.bin")
    same(calls, [-1, 3], "kbd_intr calls")
    same(why, "exit", "serve() returned")
    replies = frames(out)
    same([[r[0], r[2]] for r in replies], want["kinds"], "replies (type, seq)")
    hello = check.record(replies[0][3])[0]
    same([hello["tinyattn"], hello["chunk"]], [want["version"], want["chunk"]], "HELLO")
    if not (isinstance(hello["mpy"], int) and hello["free"] > 0):
        raise AssertionError("HELLO: mpy %r, free %r" % (hello["mpy"], hello["free"]))
    same(check.record(replies[1][3])[0]["kbd_intr"], -1, "STATUS kbd_intr while serving")
    _, got = check.record(replies[-2][3])
    check.close(matrix(got["y"]), want["y"], atol=want["y_atol"], what="y")
    check.close(matrix(got["A"]), want["A"], atol=1e-5, what="A")


class Broken:
    def write(self, data):
        raise OSError(5)


def test_serve_restores_ctrl_c_when_the_stream_breaks():
    keyboard, real = Keyboard(), link.micropython
    link.micropython = keyboard
    try:
        check.raises(OSError, link.serve, timeout=5, byte_timeout=0.05,
                               stdin=io.BytesIO(read("one_hello.bin")), stdout=Broken())
    finally:
        link.micropython = real
    same(keyboard.calls, [-1, 3], "kbd_intr calls")


def test_bad_input_gets_error_frames_and_the_server_goes_on():
    want = check.fixture("bad")
    why, calls, out = serve("bad.bin")
    # the truncated frame at the very end is the last thing; then the stream ends
    errors = [list(error(r)[:2]) for r in frames(out) if r[0] == want["error"]]
    same(errors, want["errors"], "(seq, error) of the error frames")
    why, calls, out = serve("bad_then_hello.bin")
    same(frames(out)[-1][0], want["hello_reply"], "the last reply")  # still serving after all
    same(calls, [-1, 3], "kbd_intr calls")


def test_errors_name_the_field_and_a_refused_request_changes_nothing():
    want = check.fixture("fields")
    _, _, out = serve("fields.bin")
    answers = [r for r in frames(out) if r[0] != want["ack"]]
    errors = [error(r)[1:] for r in answers if r[0] == want["error"]]
    same(len(errors), len(want["errors"]), "number of errors: %r" % (errors,))
    for (name, message), (want_name, part) in zip(errors, want["errors"]):
        if name != want_name or part not in message:
            raise AssertionError("%s %r, expected %s with %r" % (name, message, want_name, part))
    last = answers[-1]  # the model loaded first is still there, its weights unchanged
    same(last[0], want["forward_reply"], "the last answer")
    logits = matrix(check.record(last[3])[1]["logits"])
    check.close(logits, want["logits"], atol=1e-5, what="logits")


def frame(kind, seq, payload, more=False):
    """A frame of docs/protocol.md, built here."""
    head = struct.pack("<BBHH", kind, 1 if more else 0, seq, len(payload))
    return MAGIC + head + struct.pack("<I", crc32(payload, crc32(head))) + payload


def test_load_qmodel_takes_what_quantize_replies():
    """docs/protocol.md: LOAD_QMODEL takes the layers and arrays "as QUANTIZE replies", and
    replies "the same as QUANTIZE". The QUANTIZE reply's record goes back in a LOAD_QMODEL
    (in chunks, built here), to a session of its own."""
    from tinyattn.link.wire import CHUNK

    want = check.fixture("qmodel")
    _, _, out = serve("quantize.bin")
    quantized = [m for m in joined(frames(out)) if m[0] != want["ack"]]
    same([m[0] for m in quantized], want["replies"], "the replies to LOAD_MODEL, QUANTIZE")
    description = quantized[-1][2]
    stream = bytearray()
    for start in range(0, len(description), CHUNK):
        stream += frame(want["load_qmodel"], 7, description[start:start + CHUNK],
                        start + CHUNK < len(description))
    keyboard, real = Keyboard(), link.micropython
    link.micropython = keyboard
    out = io.BytesIO()
    try:
        link.serve(timeout=5, byte_timeout=0.05, stdin=io.BytesIO(stream), stdout=out)
    finally:
        link.micropython = real
    replies = [m for m in joined(frames(out.getvalue())) if m[0] != want["ack"]]
    same(len(replies), 1, "replies to LOAD_QMODEL")
    if replies[0][0] == ERROR_TYPE:
        raise AssertionError("LOAD_QMODEL of QUANTIZE's reply: %s %s" % error(replies[0])[1:])
    same(replies[0][0], want["load_qmodel"] | 0x80, "LOAD_QMODEL's reply")
    got, sent = check.record(replies[0][2]), check.record(description)
    for name in sorted(sent[1]):  # the arrays, in the order the head lists them
        same(got[1].get(name), sent[1][name], "LOAD_QMODEL's reply: array %s" % name)
    same(got[0] == sent[0], True, "LOAD_QMODEL's reply: the same layers as sent")


# ---- the heap ------------------------------------------------------------------------------
def test_requests_leave_the_heap_as_they_found_it():
    """Within one session, STATUS after each round of requests (a model loaded, forwards,
    an attention, a train step, a refused request) reports the free heap: from the second
    round on it never falls more than 64 bytes below the second's (check.heap_returns' slack;
    the collector is conservative). And a whole serve() gives back what it took."""
    want = check.fixture("heap")
    with open(check.path("heap.out"), "wb") as f:  # a BytesIO would grow on the heap
        serve("heap.bin", f)
    out = read("heap.out")
    free = [check.record(r[3])[0]["free"] for r in frames(out) if r[0] == want["status_reply"]]
    same(len(free), want["rounds"], "STATUS replies")
    if free[1] - min(free[1:]) > 64:
        raise AssertionError("the heap grows request after request: free %s" % free)
    check.heap_returns(lambda: serve("fields.bin"), what="serve()")  # its BytesIO let go


def test_forward_int8_plans_once_per_model_and_batch_shape():
    """Three FORWARD_INT8 requests of one shape plan the int8 model once (the input goes into
    the session's buffer); another batch shape plans it again; the outputs are the model's."""
    from tinyattn import iris_model
    from tinyattn.int8 import quantize
    from tinyattn.link.handlers import forward_int8
    from tinyattn.rng import Rng

    session = link.Session()
    session.qmodel = qmodel = quantize(iris_model(seed=3), Rng(4).uniform_matrix(8, 4, -1, 1))
    plans, plan = [], qmodel.plan
    qmodel.plan = lambda x, rows, cols: (plans.append((rows, cols)), plan(x, rows, cols))[1]

    def request(rows, seed):
        x = array.array("b", bytes(rows * 4))
        for i, v in enumerate(Rng(seed).uniform_matrix(rows, 4, -127, 127).flatten()):
            x[i] = int(v)
        head, arrays = forward_int8(session, {}, {"x": ("b", (rows, 4), memoryview(x))})
        return bytes(arrays[0][1]), x

    outputs = [request(2, seed) for seed in (5, 6, 7)]
    check.equal(plans, [(2, 4)], "plans of three requests of one shape")
    request(3, 8)
    request(3, 9)
    check.equal(plans, [(2, 4), (3, 4)], "plans after a new batch shape")
    qmodel.plan = plan
    for got, x in outputs:  # each request's answer is the model's for its own input
        y, _, _ = qmodel.forward_int(array.array("b", bytes(x)), 2, 4)
        check.equal(list(got), list(bytes(y)), "FORWARD_INT8 output")
