"""Stream against the reference (relative error under 1e-4) and against the device's own full
causal forward (under 1e-5); its cache memory as stated; bad input refused."""

import gc

import check
from tinyattn import Sequential, padding_mask
from tinyattn.nn.stream import Stream
from ulab import numpy as np

TOL, SELF_TOL = 1e-4, 1e-5


def model_of(f):
    m = Sequential.from_config(f["config"], seed=2)
    for name, p, _ in m.collect_params():
        p[:] = f[name]
    return m


def test_a_pooled_two_layer_stream_is_the_full_causal_forward_of_every_prefix():
    f = check.fixture("pooled")
    m = model_of(f)
    S, F = f["config"][0][1], f["config"][1][1]
    x = f["x"]
    s = Stream(m, S)
    for n in range(1, S + 1):
        y = s.step(x[:, (n - 1) * F:n * F])
        check.rel_error_below(y, f["want"][n - 1:n, :], TOL, what="token %d" % (n - 1))
        full = m.forward(x, False, padding_mask([n], S))
        check.rel_error_below(y, full, SELF_TOL, what="token %d, the device's full forward" % n)
    message = check.raises(ValueError, s.step, x[:, :F])
    assert "reset()" in message, message
    s.reset()
    check.rel_error_below(s.step(x[:, :F]), f["want"][0:1, :], TOL, what="after reset")


def test_a_sliding_window_keeps_each_token_as_it_arrived():
    f = check.fixture("sliding")
    m = model_of(f)
    s = Stream(m, f["W"])
    x = f["x"]
    for t in range(x.shape[0]):
        y = s.step(x[t:t + 1, :])
        check.rel_error_below(y, f["want"][t:t + 1, :], TOL, what="token %d" % t)
    check.heap_returns(lambda: (s.reset(), s.step(x[0:1, :])), what="a step")


def test_the_cache_holds_what_it_states():
    import ulab

    f = check.fixture("pooled")
    m = model_of(f)
    E = f["config"][1][2]
    for W in (6, 64):
        gc.collect()
        before = gc.mem_alloc()
        s = Stream(m, W)
        gc.collect()
        grown = gc.mem_alloc() - before
        # two encoder layers' K and V, the pool's rows: (2 * 2 + 1) W E floats (4 bytes
        # each on a board, 8 on a float64 build)
        check.equal(s.cache_bytes(), 5 * W * E * np.zeros(1).itemsize, "cache_bytes at W=%d" % W)
        print("stream W=%d: cache %d bytes, the Stream object %d bytes in all"
              % (W, s.cache_bytes(), grown))
        if ulab.__version__ != "stand-in":  # its arrays are lists: no byte count to hold
            # and the objects around them (arrays, caches, the steps list): a fixed 2 KB at most
            assert s.cache_bytes() <= grown <= s.cache_bytes() + 2048, (grown, s.cache_bytes())
        s = None


def test_bad_input_gets_a_clear_value_error():
    f = check.fixture("pooled")
    m = model_of(f)
    noncausal = Sequential.from_config([["TransformerEncoderLayer", 8, 2, 12, 0.0, "relu", False,
                                         1e-5, 4, False]])
    cases = [
        (lambda: Stream(m, 0), "window must be an int >= 1"),
        (lambda: Stream(noncausal, 4), "causal=True"),
        (lambda: Stream(Sequential.from_config([["SelfAttention", 8, 2, 4]]), 4),
         "cannot run a SelfAttention"),
        (lambda: Stream(m, 4).step(np.zeros((2, 3))), "one token"),
    ]
    for call, words in cases:
        message = check.raises(ValueError, call)
        assert words in message, "%r lacks %r" % (message, words)
