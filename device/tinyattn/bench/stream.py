"""The per-token cost of streaming (nn/stream.py's Stream, int8/stream.py's QStream) against a
full causal forward of the window, float and int8, at a window of W tokens (plan.STREAM_W): what each new
frame costs with a key/value cache and without one.

The model is plan.stream_config(W) (seeded weights, one output a token); the int8 one is
`tinyattn.int8.quantize(model, x)` on the window's W frames. A stream is stepped W - 1 times,
then each timed call is the token at the last position of the table with the window full
(t set back to W - 1): attention over W cached keys. The full forward is the public one,
model.forward(x) and qmodel.forward(x) on the W frames (float in, float out, as step).
Each record also holds cache_bytes() and the heap the stream object holds (gc.mem_alloc()
after making it, minus before; the models have run a forward first, as models in use).
"""

import gc

from .plan import STREAM_E, STREAM_F, STREAM_H, stream_config
from .timing import timed
from ..rng import Rng


def _held(make):
    """(object, bytes of heap it holds): gc.mem_alloc() after making it minus before."""
    gc.collect()
    before = gc.mem_alloc()
    made = make()
    gc.collect()
    return made, gc.mem_alloc() - before


def _last_token(stream, frame, W):
    for _ in range(W - 1):  # a full window: the next step attends to W keys
        stream.step(frame)

    def one():
        stream.t = W - 1  # the last row of the positional table, the window full
        stream.step(frame)

    return one


def window(W, repeats=5, cap=1.0):
    """One window's record: the median ms of a streamed token and of a full forward, float
    and int8, each stream's cache_bytes() and held heap."""
    from ..int8 import quantize
    from ..int8.stream import QStream
    from ..nn.sequential import Sequential
    from ..nn.stream import Stream

    row = {"kind": "stream", "W": W, "E": STREAM_E, "H": STREAM_H, "F": STREAM_F, "runs": {}}
    calls = dict((name, None) for name in ("float_token", "float_full", "int8_token",
                                           "int8_full"))
    model = qmodel = fs = qs = x = None
    try:
        model = Sequential.from_config(stream_config(W), seed=W)
        x = Rng(W + 1).uniform_matrix(W, STREAM_F, -1.0, 1.0)
        frame = x[0:1, :]
        qmodel = quantize(model, x)
        model.forward(x)  # planned and its backend chosen, as a model in use
        qmodel.forward(x)
        fs, row["float_held"] = _held(lambda: Stream(model, W))
        qs, row["int8_held"] = _held(lambda: QStream(qmodel, W))
        row["float_cache_bytes"], row["int8_cache_bytes"] = fs.cache_bytes(), qs.cache_bytes()
        calls = {"float_token": _last_token(fs, frame, W), "float_full": lambda: model.forward(x),
                 "int8_token": _last_token(qs, frame, W), "int8_full": lambda: qmodel.forward(x)}
    except MemoryError:
        pass
    timed(row, calls, dict((name, 1) for name in calls), repeats, cap, {})
    model = qmodel = fs = qs = x = calls = None
    gc.collect()
    return row

