"""int8/float_io.py, a model's float input to int8 by steps and its int outputs to float32,
against ulab's own arithmetic (numbers.py's path where ulab lends no buffer), bit for bit
(tests/device/test_float_io.py; a real ulab only: the stand-in lends no buffers)."""

import array

import check
from tinyattn import iris_model
from tinyattn.int8 import quantize
from tinyattn.int8.numbers import _quantize, dequantize, quantize_tensor
from tinyattn.int8.quantizer import Quantizer
from ulab import numpy as np

SCALES = ((0.013, -128), (1.0, -128), (0.5, -127), (3.7e-3, -128), (127.0, -128),
          (1e-30, -128), (1e30, -128), (0.0421, -127))
LOWEST, HIGHEST = -2139095040, 2139095039  # the keys of -max and max float32


def fail(text):
    raise AssertionError(text)


def floats_of_keys(keys):
    """A (1, n) float32 ulab array of the floats whose order keys (float_io) are `keys`."""
    bits = array.array("i", [k if k >= 0 else k ^ 0x7FFFFFFF for k in keys])
    return np.frombuffer(bits, dtype=np.float).reshape((1, len(keys)))


def ready(scale, low):
    q = Quantizer(1.0 / scale, low, 1.0)
    q.quantize_into(np.zeros((1, 1)), array.array("b", [0]))
    if not q.table:
        fail("no steps were found: the fast path would not run")
    return q


def both(q, x):
    """(the steps' int8, ulab's int8) of x."""
    n = x.shape[0] * x.shape[1]
    fast, slow = array.array("b", bytes(n)), array.array("b", bytes(n))
    q.quantize_into(x, fast)
    _quantize(x, q.inverse, q.low_value, q.low, q.high, q.offset, slow)
    return fast, slow


def test_steps_match_ulab_at_every_step_and_tie():
    for scale, low in SCALES:
        q = ready(scale, low)
        keys = []
        for k in range(1, 256):
            step = q.table[3 + k]
            keys += [t for t in range(step - 2, step + 3) if LOWEST <= t <= HIGHEST]
        x = floats_of_keys(keys)
        fast, slow = both(q, x)
        check.equal(fast, slow, "scale %g low %d: the floats next to each step" % (scale, low))
        for k in range(low + 129, 256):  # ulab's own u turns k exactly at the step
            below, at = floats_of_keys([q.table[3 + k] - 1, q.table[3 + k]]), None
            at = floats_of_keys([q.table[3 + k]])
            u = quantize_tensor(below, scale, low)[0] + 128, quantize_tensor(at, scale, low)[0] + 128
            if not u[0] < k <= u[1]:
                fail("scale %g: step %d is not where ulab's u reaches it: %r" % (scale, k, u))
        near = []
        for v in range(-130, 131):
            near += [(v + 0.5) * scale, (v - 0.5) * scale, v * scale, v * scale * 1.0000001]
        near += [0.0, -0.0, 1e-45, -1e-45, 1.2e-38, -1.2e-38, 3.4e38, -3.4e38]
        fast, slow = both(q, np.array([near]))
        check.equal(fast, slow, "scale %g low %d: ties, zeros, tiny and huge" % (scale, low))


def test_a_batch_and_views_and_other_dtypes_as_ulab():
    q = ready(0.02, -128)
    x = (np.array([list(range(-40, 40))]) * 0.0731).reshape((10, 8))
    fast, slow = both(q, x)
    check.equal(fast, slow, "10 rows")
    for what, view in (("columns 2..5 (not dense)", x[:, 2:5]), ("a row", x[3:4, :]),
                       ("uint8", np.array([[0, 1, 2, 200]], dtype=np.uint8)),
                       ("int16", np.array([[-3, 1, 2, 200]], dtype=np.int16))):
        fast, slow = both(q, view)
        check.equal(fast, slow, what)


def test_nan_and_infinity_are_refused_in_one_line():
    q = ready(0.05, -128)
    for bad in (float("nan"), float("inf"), -float("inf")):
        for where in (0, 5):
            values = [0.25] * 6
            values[where] = bad
            message = check.message(ValueError, q.quantize_into, np.array([values[:3], values[3:]]),
                                    array.array("b", bytes(6)))
            if message != "x holds NaN or infinity; the int8 model takes finite input":
                fail("%r at %d: %r" % (bad, where, message))


def test_outputs_round_to_float32_as_ulab():
    q = ready(1.0, -128)
    q.scale = np.array([[1.0]])
    ties = [(2**24 + 1, 16777216.0), (2**24 + 3, 16777220.0), (2**25 + 2, 33554432.0),
            (2**25 + 6, 33554440.0), (-(2**24 + 1), -16777216.0), (2**31 - 1, 2147483648.0),
            (2**24 - 1, 16777215.0), (-(2**31 - 1), -2147483648.0)]
    got = q.dequantize(array.array("i", [v for v, _ in ties]), 1, len(ties))
    check.equal(got, [f for _, f in ties], "int32 to float32, ties to even")
    values = [0, 1, -1, 127, -128, 123456789, -987654321, 2**30 - 1, 5 * 2**26 + 3]
    q.scale = np.array([[0.37]])
    for rows, cols in ((1, 9), (9, 1), (3, 3)):
        got = q.dequantize(array.array("i", values), rows, cols)
        check.equal(got, dequantize(array.array("i", values), rows, cols, q.scale),
                    "int32 (%d, %d)" % (rows, cols))
    ints = array.array("b", range(-128, 128))
    check.equal(q.dequantize(ints, 16, 16), dequantize(ints, 16, 16, q.scale), "int8")


def test_model_forward_is_the_ulab_path_and_fresh_each_call():
    model = iris_model(3)
    x = np.array([list(range(64))]).reshape((16, 4)) * 0.11 - 3.0
    qm = quantize(model, x)
    for rows in (1, 16, 1, 5):
        part = x[0:rows, :]
        first = qm.forward(part)
        xq = quantize_tensor(part, qm.in_scale)
        y, r, c = qm.forward_int(xq, rows, 4)
        want = dequantize(y, r, c, qm.layers[-1].out_scale())
        check.equal(first, want, "batch %d" % rows)
        kept = first.tolist()
        second = qm.forward(part * 0.5)
        if second is first:
            fail("forward returned the same array twice")
        check.equal(first, kept, "batch %d: the first output after a second call" % rows)
