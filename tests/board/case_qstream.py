"""The int8 stream against the integer reference's stream, bit for bit, and against the
device's own forward_int of every padded prefix (t < W); its int8 cache as stated; bad input
refused (tests/device/test_qstream.py makes the fixtures)."""

import array

import check
from int8_check import read_bytes  # noqa: F401  (the case's raw fixtures)
from tinyattn.int8 import load
from tinyattn.int8.stream import QStream


def model_of(name):
    return load(check.path(name + ".bin")), check.fixture(name)


def frame(f, t, F=3):
    return array.array("b", f["xq"][t * F:(t + 1) * F])


def want(f, t):
    n = f["out"]
    return f["want"][t * n:(t + 1) * n]


def test_a_pooled_two_layer_stream_is_the_reference_and_the_full_forward_of_every_prefix():
    qm, f = model_of("pooled")
    S = f["W"]
    s = QStream(qm, S)
    for n in range(1, S + 1):
        y, rows, cols = s.step_int(frame(f, n - 1))
        check.equal((rows, cols), (1, f["out"]), "shape")
        check.equal(y, want(f, n - 1), "token %d against the reference" % (n - 1))
        padded = array.array("b", bytes(3 * S))
        padded[:3 * n] = array.array("b", f["xq"][:3 * n])
        keep = bytearray([1] * n + [0] * (S - n))
        full = qm.forward_int(padded, 1, 3 * S, keep=keep)[0]
        check.equal(y, full, "token %d against the device's full forward_int" % (n - 1))
    message = check.raises(ValueError, s.step_int, frame(f, 0))
    assert "reset()" in message, message
    s.reset()
    check.equal(s.step_int(frame(f, 0))[0], want(f, 0), "after reset")


def test_a_sliding_window_keeps_each_token_as_it_arrived():
    for name in ("sliding", "pooled_sliding"):
        qm, f = model_of(name)
        s = QStream(qm, f["W"])
        for t in range(len(f["xq"]) // 3):
            check.equal(s.step_int(frame(f, t))[0], want(f, t), "%s, token %d" % (name, t))
    x0 = frame(f, 0)
    check.heap_returns(lambda: (s.reset(), s.step_int(x0)), what="a step")


def test_a_float_frame_is_quantized_at_the_models_input_scale():
    qm, f = model_of("sliding")
    floats, ints = QStream(qm, f["W"]), QStream(qm, f["W"])
    x = f["x"]
    for t in range(4):
        got = floats.step(x[t:t + 1, :])
        y, rows, cols = ints.step_int(frame(f, t))
        from tinyattn.int8.numbers import dequantize

        check.equal(got, dequantize(y, rows, cols, qm.layers[-1].out_scale()), "token %d" % t)


def test_the_int8_cache_holds_what_it_states():
    qm, f = model_of("pooled")
    E = f["E"]
    QStream(qm, 1)  # the modules it imports, before measuring
    for W in (3, 6):
        made = []
        grown = check.allocates(lambda: made.append(QStream(qm, W)))  # and its temporaries
        s = made[0]
        # two encoder layers' K and V (int8) and keep bytes, the pool's rows and keep bytes
        check.equal(s.cache_bytes(), 2 * (2 * W * E + W) + W * E + W, "cache_bytes at W=%d" % W)
        print("int8 stream W=%d: cache %d bytes; making the QStream allocated %d bytes"
              % (W, s.cache_bytes(), grown))
        assert grown >= s.cache_bytes(), (grown, s.cache_bytes())
        s = made = None


def test_bad_input_gets_a_clear_value_error():
    from tinyattn import Sequential
    from tinyattn.int8 import quantize
    from ulab import numpy as np

    qm, f = model_of("pooled")
    noncausal = Sequential.from_config([["TransformerEncoderLayer", 8, 2, 12, 0.0, "relu",
                                         False, 1e-5, 4, False]])
    qnon = quantize(noncausal, np.zeros((4, 8)) + 0.5)
    cases = [
        (lambda: QStream(noncausal, 4), "int8 QSequential"),
        (lambda: QStream(qm, 0), "window must be an int >= 1"),
        (lambda: QStream(qm, 7), "W <= the pool's seq_len"),
        (lambda: QStream(qnon, 4), "causal=True"),
        (lambda: QStream(qm, 4).step_int(array.array("b", [1, 2])), "one token of 3"),
        (lambda: QStream(qm, 4).step(np.zeros((2, 3))), "one token"),
    ]
    for call, words in cases:
        message = check.raises(ValueError, call)
        assert words in message, "%r lacks %r" % (message, words)
