"""Per-token cost of a Stream against a full causal forward of the window, and the cache's
memory, at W = 16, 32, 64 (the vowels model's sizes, causal: E 24, 4 heads, one encoder layer).

    MICROPYPATH=<the package, as .mpy> .../micropython-u64 tests/board/scripts/stream_cost.py

prints one line a window: us a token streamed, us a full forward of the W tokens (what each
new token costs without a cache), cache bytes and the heap the Stream takes. Timings from the
port it runs on (the unix port here; `make bench` on a board gives a board's)."""

import gc
import time

from tinyattn import Sequential
from tinyattn.nn.stream import Stream
from ulab import numpy as np


def model(W):
    return Sequential.from_config([
        ["Dense", 12, 24, True], ["PositionalEmbedding", W, 24],
        ["TransformerEncoderLayer", 24, 4, 48, 0.0, "relu", False, 1e-5, W, True],
        ["Dense", 24, 9, True]], seed=1)


def best_us(call, repeats):
    best = None
    for _ in range(repeats):
        start = time.ticks_us()
        call()
        spent = time.ticks_diff(time.ticks_us(), start)
        best = spent if best is None or spent < best else best
    return best


for W in (16, 32, 64):
    m = model(W)
    x = np.zeros((W, 12)) + 0.1
    frame = x[0:1, :]
    gc.collect()
    before = gc.mem_alloc()
    s = Stream(m, W)
    gc.collect()
    heap = gc.mem_alloc() - before
    for _ in range(W - 1):  # a full window: the next step attends to W keys
        s.step(frame)

    def one_token():
        s.t = W - 1  # the last position of the table, the window full
        s.step(frame)

    token = best_us(one_token, 20)
    full = best_us(lambda: m.forward(x), 5)
    print("W=%d  token %d us  full forward %d us  speed-up %.1fx  cache %d bytes  Stream heap %d"
          % (W, token, full, full / token, s.cache_bytes(), heap))
    m = x = frame = s = None
    gc.collect()
