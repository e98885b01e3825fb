"""heap_fit's request sizes run in the heap they were sized for: on a unix port with a real
ulab, the package compiled as deploy ships it, each model loaded (LOAD_MODEL) in a fresh
interpreter of that heap, STATUS's free bytes read, then a request of the rows
heap_fit.rows_that_fit gives (FORWARD, QUANTIZE twice, TRAIN_STEP then GET_WEIGHTS) served
by link.serve() (tests/board/scripts/serve_stream.py). Host-driven: the heap is set from
outside. tests/e2e/test_small_heap.py runs the whole `make run` in 300 KB."""

import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest

from board_cases import BOARD_DIR
from tinyattn_host.checks import heap_fit
from tinyattn_host.virtual import unixport
from tinyattn_host import protocol as P
from tinyattn_host.bench.bench import compiled_package
from tinyattn_host.digits import DIGITS_CONFIG, load_digits
from tinyattn_host.checks.run_check import IRIS_CONFIG, iris, random_model
from tinyattn_host.interop.statedict import param_shapes

pytestmark = pytest.mark.skipif(
    not unixport.has_ulab(unixport.interpreter()),
    reason="the ulab stand-in's memory is not ulab's (MICROPYTHON=... with a real ulab runs it)")
SERVE_STREAM = BOARD_DIR / "scripts" / "serve_stream.py"
HEAPS = ("300k", "500k")
ASKED = 64


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    folder = tmp_path_factory.mktemp("deployed")
    compiled_package(unixport.interpreter(), folder)
    return folder


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
        return [(P.QUANTIZE, P.encode({}, {"x": x}))] * 2
    return [(P.TRAIN_STEP, P.encode({"optimizer": "sgd", "lr": 0.05}, {"x": x, "labels": labels})),
            (P.GET_WEIGHTS, P.encode())]


@pytest.mark.parametrize("heap", HEAPS)
@pytest.mark.parametrize("model,work", [("iris", "forward"), ("iris", "quantize"),
                                        ("iris", "train"), ("digits", "forward"),
                                        ("digits", "train")])
def test_the_rows_that_fit_run_in_that_heap(model, work, heap, deployed):
    config, params, data = MODELS[model]
    load = (P.LOAD_MODEL, P.encode({"config": config}, params()))
    replies = serve([(P.HELLO, P.encode()), load, (P.STATUS, P.encode())], heap, deployed)
    assert [kind for kind, _ in replies] == [P.HELLO | P.REPLY, P.LOAD_MODEL | P.REPLY,
                                             P.STATUS | P.REPLY], replies
    float_bytes = P.decode(replies[0][1])[0]["float"]  # 8 on a double-precision build
    free = P.decode(replies[2][1])[0]["free"]
    rows = heap_fit.rows_that_fit(free, config, ASKED, work, float_bytes)
    X, y = data()
    replies = serve([load] + work_requests(work, rows, X, y), heap, deployed)
    errors = [payload[1:].decode() for kind, payload in replies if kind == P.ERROR]
    assert not errors, "%d rows in %s (%d free): %s" % (rows, heap, free, errors)
