"""The int8 stream (device/tinyattn/int8/stream.py) bit for bit: a pooled two-layer causal
model over its first S tokens against the integer reference's stream (itself the causal
forward of every prefix, tests/host/test_reference_int8_stream.py) and the device's own
forward_int of each padded prefix; a one-layer per-token model, and the pooled one through a
window of 3, as the window slides against the reference stream; the int8 cache's memory, and bad input (tests/board/case_qstream.py).
The int8 models are the host's (tinyattn_host.quantize), so the reference runs the very model."""

import numpy as np

from tinyattn_host import quantize as hq
from board_cases import board_test
from stream_models import PER_TOKEN, POOLED, S, T, W, frames, int8_model
from tinyattn_host.reference.int8_stream import Int8Stream


def stream_fixture(name, config, seed, calib_rows, tokens, window, rng):
    specs, arrays, layers, _ = int8_model(config, seed, calib_rows, rng)
    x, xq = frames(specs, tokens, rng)
    stream = Int8Stream(layers, window)
    want = np.array([stream.step(xq[t])[0] for t in range(tokens)])
    return {name + ".bin": hq.model_bytes(specs, arrays),
            name: {"x": x, "xq": xq.ravel().tolist(), "want": want.ravel().tolist(),
                   "out": int(want.shape[1]), "W": window, "E": 8}}


def make_fixtures():
    rng = np.random.default_rng(2124)
    fixtures = stream_fixture("pooled", POOLED, 3, 8, S, S, rng)
    fixtures.update(stream_fixture("sliding", PER_TOKEN, 4, T, T, W, rng))
    fixtures.update(stream_fixture("pooled_sliding", POOLED, 5, 8, S, 3, rng))
    return fixtures


test_qstream_on_board = board_test("case_qstream", make_fixtures)
