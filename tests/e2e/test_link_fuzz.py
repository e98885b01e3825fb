"""The link's fuzz test: thousands of malformed items of every kind over the virtual board's
pty, each answered with the right error in well under a second, each followed by a good
request whose answer is checked against the reference (issue 13; docs/protocol.md, "Limits").
The same items also go through serve() on the --board target (tests/board/case_link_fuzz.py),
in two streams, the device checking every answer against the host's plan.

FUZZ_ITEMS (default 3000) and FUZZ_SEED (default 13) change the run.
"""

import os
import struct
import tempfile
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from board_cases import BOARD_DIR, board_test
from malformed import Fuzz
from tinyattn_host import protocol as P
from tinyattn_host.virtual import unixport
from tinyattn_host.board.board import Board
from tinyattn_host.checks.run_check import (FLOAT_TOLERANCE, IRIS_CONFIG, iris, random_model,
                                            reference_qlayers)
from tinyattn_host.quantize import in_scale, quantize_tensor
from tinyattn_host.reference.sequential import int8_forward, sequential_forward
from tinyattn_host.virtual.unixport_process import has_raw_repl

ITEMS = int(os.environ.get("FUZZ_ITEMS", "3000"))
SEED = int(os.environ.get("FUZZ_SEED", "13"))
ANSWER_WITHIN = 1.0  # seconds for the answer to a malformed item (the byte timeout aside)
W = P.wire


class Checker:
    """Good requests and what their answers must hold: float and int8 forwards, STATUS.

    `errors` is the count of error frames the device must have sent so far.
    """

    def __init__(self, params, qhead, qarrays, X, errors=0):
        self.params, self.X = params, X
        self.qlayers = reference_qlayers(qhead, qarrays)
        self.s_in = in_scale(qhead["layers"])
        self.errors = errors
        self.turn = 0

    def good(self, rng):
        """(type, head, arrays, want): a good request and what its reply must hold (plain
        JSON values: check_reply on the host, case_link_fuzz.check_good on the device)."""
        self.turn += 1
        xb = self.X[rng.choice(len(self.X), int(rng.integers(1, 4)), replace=False)]
        if self.turn % 3 == 0:
            want, _ = sequential_forward(IRIS_CONFIG, self.params, xb)
            tolerance = FLOAT_TOLERANCE * max(1.0, np.abs(want).max())
            return P.FORWARD, {}, {"x": xb}, {"logits": want.ravel().tolist(),
                                              "shape": list(want.shape), "atol": tolerance}
        if self.turn % 3 == 1:
            xq = quantize_tensor(xb, self.s_in)
            want = int8_forward(xq, self.qlayers)[-1]
            return P.FORWARD_INT8, {}, {"x": xq}, {"y": want.ravel().tolist(),
                                                  "shape": list(want.shape)}
        return P.STATUS, {}, {}, {"errors": self.errors}


def check_reply(want, head, got):
    """The host's check of a good request's reply (head, arrays) against Checker's `want`."""
    if "logits" in want:
        expected = np.reshape(want["logits"], want["shape"])
        assert np.abs(got["logits"] - expected).max() <= want["atol"]
    elif "y" in want:
        expected = np.reshape(want["y"], want["shape"])
        assert np.array_equal(got["y"].reshape(head["rows"], head["cols"]), expected)
    else:
        assert head["errors"] == want["errors"] and head["model"] and head["qmodel"]


def setup_requests(X, params):
    """The requests that load the float model and the int8 model (with the QUANTIZE reply)."""
    return [(P.LOAD_MODEL, {"config": IRIS_CONFIG}, params), (P.QUANTIZE, {}, {"x": X})]


@pytest.fixture
def small_board(start_virtual_board):
    """A virtual board with a heap of 8 MB: the stand-in's iris model fits, and the
    collections after every request stay quick."""
    return start_virtual_board(heap="8m")


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
            kind, head, arrays, want = checker.good(rng)
            check_reply(want, *link.request(kind, head, arrays))
        for truncated in (P.frame(P.HELLO, 7, P.encode())[:9],
                          P.frame(P.FORWARD, 8, P.encode({}, {"x": X[:2]}))[:40]):
            link.send_bytes(truncated)  # answered once the byte timeout has passed
            kind, _, _, payload = link.read_frame(timeout=W.BYTE_TIMEOUT_MS / 1000 + ANSWER_WITHIN)
            assert (kind, P.ERRORS[payload[0]]) == (P.ERROR, "TRUNCATED")
            checker.errors += 1
            kind, head, arrays, want = checker.good(rng)
            check_reply(want, *link.request(kind, head, arrays))
        with pytest.raises(P.ErrorReply, match="TOO_BIG"):
            link.request_raw(P.LOAD_MODEL, bytes(W.MAX_MESSAGE + 1))
        checker.errors += 1
        kind, head, arrays, want = checker.good(rng)
        check_reply(want, *link.request(kind, head, arrays))


# ---- the same items through serve() (tests/board/case_link_fuzz.py) ------------------------
SERVE_STREAM = BOARD_DIR / "scripts" / "serve_stream.py"
PLAN_CHUNK = 100  # plan entries a fixture file: the board reads one file at a time
HALVES = 2  # the items in two streams, two runs of the case: each run's fixtures stay < 1 MB


def device_int8_model(setup):
    """(head, arrays) of the QUANTIZE reply to `setup`: an int8 model the device makes.

    Host-driven on the unix port (tests/board/scripts/serve_stream.py), before the stream is
    written: the malformed int8 descriptions are made from this model and the int8 answers
    are checked against it, so the host must know it first. Each stream then sends it in a
    LOAD_QMODEL after its own QUANTIZE, which gives any board (whatever its float) this very
    int8 model.
    """
    with tempfile.TemporaryDirectory() as tmp:
        stream, replies = Path(tmp) / "setup.bin", Path(tmp) / "replies.bin"
        stream.write_bytes(setup)
        unixport.run_file(SERVE_STREAM, heap="8m", args=(str(stream), str(replies)))
        payload = [payload for kind, _, payload in read_replies(replies.read_bytes())
                   if kind == P.QUANTIZE | P.REPLY][0]
    return P.decode(payload)


def read_replies(data):
    """The replies in `data` as (type, seq, payload), a message's chunks joined."""
    out = []
    while data:
        length = struct.unpack_from("<H", data, 6)[0]
        kind, flags, seq, payload = P.parse_frame(data[:P.HEADER + length])
        if out and out[-1][3] and out[-1][1] == seq and out[-1][0] == kind:
            out[-1] = (kind, seq, out[-1][2] + payload, flags & P.MORE)
        else:
            out.append((kind, seq, payload, flags & P.MORE))
        data = data[P.HEADER + length:]
    return [(kind, seq, payload) for kind, seq, payload, _ in out]


@lru_cache(maxsize=None)
def fuzz_streams():
    """[(stream, plan, index of its first item, tail)] for each half of the items: every item
    and good request in a stream after the setup (HELLO, LOAD_MODEL, QUANTIZE, LOAD_QMODEL);
    the plan holds, per item, [maker, expected answer, the good request's type, what its
    reply must hold]."""
    X, _ = iris()
    params = random_model(3)
    setup = P.frame(P.HELLO, 1, P.encode()) + b"".join(
        b"".join(P.frames(kind, 2 + n, P.encode(head, arrays)))
        for n, (kind, head, arrays) in enumerate(setup_requests(X, params)))
    qhead, qarrays = device_int8_model(setup)
    setup += b"".join(P.frames(P.LOAD_QMODEL, 4, P.encode(qhead, qarrays)))
    rng = np.random.default_rng(SEED + 1)
    fuzz = Fuzz(rng, params, qhead, qarrays, X)
    checker = Checker(params, qhead, qarrays, X)
    makers = fuzz.makers()
    halves, bounds = [], [ITEMS * h // HALVES for h in range(HALVES + 1)]
    for first, end in zip(bounds, bounds[1:]):
        stream, plan = bytearray(setup), []
        checker.errors = 0  # a stream is a session of its own
        for i in range(first, end):
            maker = makers[i % len(makers)]
            data, expected = maker()
            stream += data
            checker.errors += expected not in (None, "ACK")
            kind, head, arrays, want = checker.good(rng)
            stream += b"".join(P.frames(kind, 50000 + i, P.encode(head, arrays)))
            plan.append([maker.__name__, expected, kind, want])
        tail = []
        if end == ITEMS:
            stream += b"".join(P.frames(P.LOAD_MODEL, 9, bytes(W.MAX_MESSAGE + 1)))
            tail = ["TOO_BIG"]
        halves.append((bytes(stream), plan, first, tail))
    return halves


def fuzz_fixtures(half):
    def make_fixtures():
        stream, plan, first, tail = fuzz_streams()[half]
        fixtures = {"stream.bin": stream, "fuzz": {
            "setup": [kind | P.REPLY for kind in (P.HELLO, P.LOAD_MODEL, P.QUANTIZE,
                                                  P.LOAD_QMODEL)],
            "first": first, "items": len(plan), "tail": tail}}
        for n in range(0, len(plan), PLAN_CHUNK):
            fixtures["plan%03d" % (n // PLAN_CHUNK)] = {"plan": plan[n:n + PLAN_CHUNK]}
        return fixtures
    return make_fixtures


# Every item and good request through serve() (any interpreter, real ulab too, or a board);
# the replies, read after, are checked in order on the device. An 8 MB heap on the unix port:
# the collections after every request stay quick.
test_the_same_items_through_serve_first_half = board_test("case_link_fuzz", fuzz_fixtures(0),
                                                          heap="8m")
test_the_same_items_through_serve_second_half = board_test("case_link_fuzz", fuzz_fixtures(1),
                                                           heap="8m")


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
