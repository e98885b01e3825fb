"""The int8 reference stream (reference/int8_stream.py) against the integer reference's full
causal forward: every prefix of a pooled two-layer model (a padding mask), and a one-layer
per-token model as the window slides (the window's tokens with the positions they arrived
at), bit for bit."""

import numpy as np

from stream_models import PER_TOKEN, POOLED, S, T, W, frames, int8_model
from tinyattn_host.reference.int8_stream import Int8Stream
from tinyattn_host.reference.sequential import int8_forward
from tinyattn_host.sequences import padding_mask


def test_a_pooled_two_layer_stream_is_the_causal_forward_of_every_prefix():
    rng = np.random.default_rng(5)
    specs, _, layers, _ = int8_model(POOLED, 3, 8, rng)
    _, xq = frames(specs, S, rng)
    stream = Int8Stream(layers, S)
    for n in range(1, S + 1):
        got = stream.step(xq[n - 1])
        padded = np.zeros((1, S * xq.shape[1]), dtype=np.int64)
        padded[0, :n * xq.shape[1]] = xq[:n].ravel()
        want = int8_forward(padded, layers, padding_mask([n], S))[-1]
        assert got.dtype.kind == "i" and np.array_equal(got, want), n


def test_a_sliding_window_is_the_forward_of_its_tokens_at_their_arrival_positions():
    rng = np.random.default_rng(6)
    specs, _, layers, _ = int8_model(PER_TOKEN, 4, T, rng)
    _, xq = frames(specs, T, rng)
    stream = Int8Stream(layers, W)
    for t in range(T):
        got = stream.step(xq[t])
        first = max(0, t - W + 1)
        window = [dict(layer) for layer in layers]
        window[1]["P"] = layers[1]["P"][first:t + 1]
        window[2]["seq_len"] = t + 1 - first
        want = int8_forward(xq[first:t + 1], window)[-1][-1:]
        assert np.array_equal(got, want), t
    stream.reset()
    assert np.array_equal(stream.step(xq[0]), int8_forward(xq[:1], _first_token(layers))[-1])


def _first_token(layers):
    one = [dict(layer) for layer in layers]
    one[1]["P"], one[2]["seq_len"] = layers[1]["P"][:1], 1
    return one
