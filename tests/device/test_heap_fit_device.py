"""The board sizes its work to its heap (link/chunks.py): on a unix port with a real ulab, the
package compiled as deploy ships it, each model loaded (LOAD_MODEL) in a fresh interpreter of
a board's heap, then one request of many samples (FORWARD, QUANTIZE, TRAIN_STEP then
GET_WEIGHTS) served by link.serve() (tests/board/scripts/serve_stream.py). The request runs,
and its reply says `at_once` when it ran in pieces (the board halves on each MemoryError, from
all at once: twice `at_once` did not fit beside that request, tests/device/test_link_chunks.py
holds the halving); the same request again starts with those pieces and runs too. The pieces
are this heap's, at this moment: a fresh interpreter given a request of `at_once` samples need
not run it whole (a heap of another history is in other pieces: seen on the 64-bit port), and
the same request again may take fewer at once (the first one's leftovers: seen on both ports).
Host-driven: the heap is set from outside. tests/e2e/test_small_heap.py runs the whole `make run` in 300 KB.
"""

import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest

from board_cases import BOARD_DIR
from heap_budget import board_heap
from tinyattn_host.virtual import unixport
from tinyattn_host import protocol as P
from tinyattn_host.digits import DIGITS_CONFIG, load_digits
from tinyattn_host.checks.run_check import IRIS_CONFIG, iris, random_model
from tinyattn_host.interop.statedict import param_shapes

pytestmark = pytest.mark.skipif(
    not unixport.has_ulab(unixport.interpreter()),
    reason="the ulab stand-in's memory is not ulab's (MICROPYTHON=... with a real ulab runs it)")
SERVE_STREAM = BOARD_DIR / "scripts" / "serve_stream.py"
ASKED = 64


def digits_params():
    rng = np.random.default_rng(5)
    return {"%d.%s" % (i, name): rng.normal(0, 0.2, shape) for i, spec in enumerate(DIGITS_CONFIG)
            for name, shape in param_shapes(spec).items()}


MODELS = {"iris": (IRIS_CONFIG, lambda: random_model(1), lambda: iris()),
          "digits": (DIGITS_CONFIG, digits_params, lambda: load_digits())}


def serve(requests, heap, deployed):
    """The replies (type, payload) to `requests` [(type, record)] served in `heap`."""
    stream = b"".join(b"".join(P.frames(kind, seq + 1, record))
                      for seq, (kind, record) in enumerate(requests))
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "in.bin").write_bytes(stream)
        unixport.run_file(SERVE_STREAM, heap=heap, device_dir=deployed,
                          args=(str(Path(tmp) / "in.bin"), str(Path(tmp) / "out.bin")))
        data = (Path(tmp) / "out.bin").read_bytes()
    replies = []
    while data:
        length = struct.unpack_from("<H", data, 6)[0]
        kind, flags, seq, payload = P.parse_frame(data[:P.HEADER + length])
        if replies and replies[-1][2]:
            replies[-1] = (kind, replies[-1][1] + payload, flags & P.MORE)
        else:
            replies.append((kind, payload, flags & P.MORE))
        data = data[P.HEADER + length:]
    return [(kind, payload) for kind, payload, _ in replies if kind != P.ACK]


def work_requests(work, rows, X, y):
    x, labels = np.resize(X, (rows, X.shape[1])), np.resize(y, rows).astype(np.int32)
    if work == "forward":
        return [(P.FORWARD, P.encode({"attention": False}, {"x": x}))]
    if work == "quantize":
        return [(P.QUANTIZE, P.encode({}, {"x": x}))]
    return [(P.TRAIN_STEP, P.encode({"optimizer": "sgd", "lr": 0.05}, {"x": x, "labels": labels})),
            (P.GET_WEIGHTS, P.encode())]


def at_once(model, work, rows, heap, deployed, times=1):
    """The samples at once of `times` `work` requests of `rows` samples each, served in a
    fresh `heap` after one LOAD_MODEL (`rows` when one ran whole: QUANTIZE's largest is 16);
    fails on any error reply."""
    config, params, data = MODELS[model]
    load = (P.LOAD_MODEL, P.encode({"config": config}, params()))
    requests = work_requests(work, rows, *data())
    replies = serve([load] + requests * times, heap, deployed)
    errors = [payload[1:].decode(errors="replace") for kind, payload in replies
              if kind == P.ERROR]
    assert not errors, "%d rows in %s: %s" % (rows, heap, errors)
    heads = [P.decode(payload)[0] for _, payload in replies[1::len(requests)]]
    return [head.get("at_once", rows if work != "quantize" else min(rows, 16))
            for head in heads]


# (model, work): each in a board's 300 KB (a 32-bit figure: tests/heap_budget.py) and in
# 500 KB on any port; the digits QUANTIZE once cut to 1 row by the host's estimate in 300 KB,
# where 3 rows ran (issue 37): its 64 rows run here
WORKS = [("iris", "forward"), ("iris", "quantize"), ("iris", "train"), ("digits", "forward"),
         ("digits", "train"), ("digits", "quantize")]


@pytest.mark.parametrize("heap", ["300k", "500k"])
@pytest.mark.parametrize("model,work", WORKS)
def test_the_board_runs_a_large_request_in_pieces_that_fit(model, work, heap, deployed):
    heap = board_heap(heap) if heap == "300k" else heap
    first, again = at_once(model, work, ASKED, heap, deployed, times=2)
    largest = ASKED if work != "quantize" else 16  # QUANTIZE calibrates 16 at once at most
    assert 1 <= first <= largest
    # the same request again starts from the pieces that fit and runs (in fewer at once when
    # the first one's leftovers hold some heap: a QUANTIZE's int8 model, a forward's caches)
    assert 1 <= again <= first


def test_calibration_rows_past_one_batch_cost_their_own_bytes_only(deployed):
    """QUANTIZE calibrates 16 rows at a time: in 1m, the digits model's 64 rows run at once
    16 a time (the forward's heap of 64 rows would not fit)."""
    assert at_once("digits", "quantize", ASKED, "1m", deployed) == [16]


def test_a_message_the_heap_cannot_receive_is_refused_and_the_link_goes_on(deployed):
    """The digits model and its int8 model in 300k, then FORWARD requests of both, each of
    more rows: the board runs them in pieces until, the heap in pieces, a message itself
    cannot arrive (within max_message): refused with NO_MEMORY, and STATUS after it is
    answered (the server used to die of that MemoryError, the host waiting for an ACK)."""
    config, params, data = MODELS["digits"]
    X = data()[0].astype(np.float32)
    requests = [(P.LOAD_MODEL, P.encode({"config": config}, params())),
                (P.QUANTIZE, P.encode({}, {"x": X[:16]}))] + [
        (P.FORWARD, P.encode({"int8": True}, {"x": X[:rows]}))
        for rows in (1, 2, 4, 8, 16, 32, 48, 64, 96, 128)] + [(P.STATUS, P.encode())]
    replies = serve(requests, board_heap("300k"), deployed)
    errors = [payload[1:].decode(errors="replace") for kind, payload in replies
              if kind == P.ERROR]
    assert replies[-1][0] == P.STATUS | P.REPLY, replies[-3:]
    assert any(e.startswith("out of memory receiving the message: ") for e in errors), errors
