"""The link's fuzz test: thousands of malformed items of every kind over the virtual board's
pty, each answered with the right error in well under a second, each followed by a good
request whose answer is checked against the reference (issue 13; docs/protocol.md, "Limits").

FUZZ_ITEMS (default 3000) and FUZZ_SEED (default 13) change the run.
"""

import os
import struct

import numpy as np
import pytest

from device_runner import run_device
from malformed import Fuzz
from tinyattn_host import protocol as P
from tinyattn_host import unixport
from tinyattn_host.board import Board
from tinyattn_host.harness import (FLOAT_TOLERANCE, IRIS_CONFIG, in_scale, iris, quantize_input,
                                   random_model, reference_qlayers)
from tinyattn_host.reference import integer
from tinyattn_host.reference.layers import sequential_forward
from tinyattn_host.unixport_process import has_raw_repl
from tinyattn_host.virtual_board import NoRawRepl, VirtualBoard

ITEMS = int(os.environ.get("FUZZ_ITEMS", "3000"))
SEED = int(os.environ.get("FUZZ_SEED", "13"))
ANSWER_WITHIN = 1.0  # seconds for the answer to a malformed item (the byte timeout aside)
W = P.wire


class Checker:
    """Good requests and the checks of their answers: float and int8 forwards, STATUS.

    `errors` is the count of error frames the device must have sent so far.
    """

    def __init__(self, params, qhead, qarrays, X, errors=0):
        self.params, self.X = params, X
        self.qlayers = reference_qlayers(qhead, qarrays)
        self.s_in = in_scale(qhead)
        self.errors = errors
        self.turn = 0

    def good(self, rng):
        """(type, head, arrays, check): a good request and the check of its reply."""
        self.turn += 1
        xb = self.X[rng.choice(len(self.X), int(rng.integers(1, 4)), replace=False)]
        if self.turn % 3 == 0:
            def check(head, got):
                want, _ = sequential_forward(IRIS_CONFIG, self.params, xb)
                tolerance = FLOAT_TOLERANCE * max(1.0, np.abs(want).max())
                assert np.abs(got["logits"] - want).max() <= tolerance
            return P.FORWARD, {}, {"x": xb}, check
        if self.turn % 3 == 1:
            xq = quantize_input(xb, self.s_in)

            def check(head, got):
                want = integer.sequential(xq, self.qlayers)[-1]
                assert np.array_equal(got["y"].reshape(head["rows"], head["cols"]), want)
            return P.FORWARD_INT8, {}, {"x": xq}, check
        errors = self.errors

        def check(head, got):
            assert head["errors"] == errors and head["model"] and head["qmodel"]
        return P.STATUS, {}, {}, check


def setup_requests(X, params):
    """The requests that load the float model and the int8 model (with the QUANTIZE reply)."""
    return [(P.LOAD_MODEL, {"config": IRIS_CONFIG}, params), (P.QUANTIZE, {}, {"x": X})]


@pytest.fixture
def small_board(tmp_path):
    """A virtual board with a heap of 8 MB: the stand-in's iris model fits, and the
    collections after every request stay quick."""
    board = VirtualBoard(flash_dir=tmp_path / "flash", heap="8m")
    try:
        board.start()
    except NoRawRepl as err:
        pytest.skip(str(err))
    yield board
    board.stop()


@pytest.mark.skipif(not has_raw_repl(unixport.interpreter()),
                    reason="the interpreter's REPL has no raw mode: no mpremote")
def test_malformed_items_over_the_pty_each_answered_then_a_checked_request(small_board):
    with Board(port=small_board.port, out=lambda *a: None) as board:
        link = board.start_link()
        X, _ = iris()
        params = random_model(3)
        for kind, head, arrays in setup_requests(X, params):
            qhead, qarrays = link.request(kind, head, arrays)
        rng = np.random.default_rng(SEED)
        fuzz = Fuzz(rng, params, qhead, qarrays, X)
        checker = Checker(params, qhead, qarrays, X, link.status()["errors"])
        makers = fuzz.makers()
        for i in range(ITEMS):
            maker = makers[i % len(makers)]
            data, expected = maker()
            link.send_bytes(data)
            if expected is not None:
                got, message = answer(link, expected)
                assert got == expected, (maker.__name__, data[:300].hex(), message)
                checker.errors += expected != "ACK"
            kind, head, arrays, check = checker.good(rng)
            check(*link.request(kind, head, arrays))
        for truncated in (P.frame(P.HELLO, 7, P.encode())[:9],
                          P.frame(P.FORWARD, 8, P.encode({}, {"x": X[:2]}))[:40]):
            link.send_bytes(truncated)  # answered once the byte timeout has passed
            kind, _, _, payload = link.read_frame(timeout=W.BYTE_TIMEOUT_MS / 1000 + ANSWER_WITHIN)
            assert (kind, P.ERRORS[payload[0]]) == (P.ERROR, "TRUNCATED")
            checker.errors += 1
            kind, head, arrays, check = checker.good(rng)
            check(*link.request(kind, head, arrays))
        with pytest.raises(P.DeviceError, match="TOO_BIG"):
            link.request_raw(P.LOAD_MODEL, bytes(W.MAX_MESSAGE + 1))
        checker.errors += 1
        kind, head, arrays, check = checker.good(rng)
        check(*link.request(kind, head, arrays))


SERVE_STREAM = """
import io
from tinyattn import link
out = io.BytesIO()
OUT['why'] = link.serve(timeout=5, stdin=open(IN['path'], 'rb'), stdout=out)
with open(IN['path'] + '.out', 'wb') as f:
    f.write(out.getvalue())
"""


def test_the_same_items_through_serve_on_the_unix_port(tmp_path):
    """Every item and good request in one stream through serve() (any interpreter, real ulab
    too); the replies, read after, are checked in order."""
    X, _ = iris()
    params = random_model(3)
    setup = [P.frame(P.HELLO, 1, P.encode())] + [
        b"".join(P.frames(kind, 2 + n, P.encode(head, arrays)))
        for n, (kind, head, arrays) in enumerate(setup_requests(X, params))]
    # the QUANTIZE reply is the device's: the host cannot know it before the stream runs
    qhead, qarrays = first_replies(tmp_path, b"".join(setup))[-1]
    rng = np.random.default_rng(SEED + 1)
    fuzz = Fuzz(rng, params, qhead, qarrays, X)
    checker = Checker(params, qhead, qarrays, X)
    makers = fuzz.makers()
    stream, plan = bytearray(b"".join(setup)), []
    for i in range(ITEMS):
        data, expected = makers[i % len(makers)]()
        stream += data
        checker.errors += expected not in (None, "ACK")
        kind, head, arrays, check = checker.good(rng)
        stream += b"".join(P.frames(kind, 50000 + i, P.encode(head, arrays)))
        plan.append((makers[i % len(makers)].__name__, expected, kind, check))
    stream += b"".join(P.frames(P.LOAD_MODEL, 9, bytes(W.MAX_MESSAGE + 1)))
    replies = run_stream(tmp_path, bytes(stream))
    replies = iter(replies[[r[0] for r in replies].index(P.QUANTIZE | P.REPLY) + 1:])
    for name, expected, kind, check in plan:
        if expected is not None:
            got = next(r for r in replies if r[0] != P.ACK or expected == "ACK")
            got_name = "ACK" if got[0] == P.ACK else P.ERRORS[got[2][0]] \
                if got[0] == P.ERROR else got[0]
            assert got_name == expected, (name, bytes(got[2]))
        reply = next(r for r in replies if r[0] != P.ACK)
        assert reply[0] == kind | P.REPLY, (name, reply[0], bytes(reply[2]))
        check(*P.decode(reply[2]))
    last = [r for r in replies if r[0] != P.ACK]
    assert [(r[0], P.ERRORS[r[2][0]]) for r in last] == [(P.ERROR, "TOO_BIG")]


def run_stream(tmp_path, stream):
    """serve() over `stream` on the unix port: the replies as (type, seq, payload)."""
    path = tmp_path / "stream.bin"
    path.write_bytes(stream)
    run_device(SERVE_STREAM, {"path": str(path)}, heap="8m")
    data, out = (tmp_path / "stream.bin.out").read_bytes(), []
    while data:
        length = struct.unpack_from("<H", data, 6)[0]
        kind, flags, seq, payload = P.parse_frame(data[:P.HEADER + length])
        if out and out[-1][3] and out[-1][1] == seq and out[-1][0] == kind:
            out[-1] = (kind, seq, out[-1][2] + payload, flags & P.MORE)
        else:
            out.append((kind, seq, payload, flags & P.MORE))
        data = data[P.HEADER + length:]
    return [(kind, seq, payload) for kind, seq, payload, _ in out]


def first_replies(tmp_path, stream):
    return [P.decode(payload) for kind, _, payload in run_stream(tmp_path, stream)
            if kind != P.ACK]


def answer(link, expected):
    """The name of the device's answer (ACKs of a message's chunks skipped) and its message.

    A malformed item must be answered within ANSWER_WITHIN seconds (LinkTimeout otherwise).
    """
    while True:
        kind, _, _, payload = link.read_frame(timeout=ANSWER_WITHIN)
        if kind == P.ACK and expected != "ACK":
            continue
        if kind == P.ERROR:
            return P.ERRORS[payload[0]], payload[1:].decode(errors="replace")
        return ("ACK" if kind == P.ACK else P.MESSAGES.get(kind & ~P.REPLY, kind)), ""
