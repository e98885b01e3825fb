"""Streaming causal inference (nn/stream.py) against full causal forwards: a two-layer pooled
model over its first W tokens (every prefix, as the reference computes it with a padding
mask), and a one-layer per-token model as the window slides (the reference over the window's
tokens with the positions they arrived at); the cache's memory, and bad input
(tests/board/case_stream.py)."""

import numpy as np

from board_cases import board_test
from checks import f32
from stream_models import F, PER_TOKEN, POOLED, S, T, W, noisy, window_config
from tinyattn_host.digits import init_params
from tinyattn_host.reference.sequential import sequential_forward
from tinyattn_host.sequences import padding_mask


def pooled_fixture(rng):
    params = noisy(init_params(POOLED, 3), rng)
    x = f32(rng.standard_normal((1, S * F)))
    prefixes = [sequential_forward(POOLED, params, x, padding_mask([n], S))[0][0]
                for n in range(1, S + 1)]
    return dict(params, config=POOLED, x=x, want=np.array(prefixes))


def sliding_fixture(rng):
    params = noisy(init_params(PER_TOKEN, 4), rng)
    x = f32(rng.standard_normal((T, F)))
    want = []
    for t in range(T):
        first = max(0, t - W + 1)
        p = dict(params, **{"1.P": params["1.P"][first:t + 1]})
        y, _ = sequential_forward(window_config(t + 1 - first), p, x[first:t + 1])
        want.append(y[-1])
    return dict(params, config=PER_TOKEN, x=x, want=np.array(want), W=W)


def make_fixtures():
    rng = np.random.default_rng(2127)
    return {"pooled": pooled_fixture(rng), "sliding": sliding_fixture(rng)}


test_stream_on_board = board_test("case_stream", make_fixtures)
