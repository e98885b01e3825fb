"""The ulab stand-in (tools/standin) against NumPy in float32; with a real ulab, the real thing
against the same expectations (tests/device/test_standin.py writes them)."""

import array

import check
from ulab import numpy as np

TOL = 1e-6  # rtol and atol, item by item (NumPy's assert_allclose)


def close(got, want, what):
    check.close_each(got, want, atol=TOL, rtol=TOL, what=what)


def approx(got, want, what, rel=1e-6):
    """pytest.approx: within rel of want, or 1e-12."""
    check.close_each(got, want, atol=1e-12, rtol=rel, what=what)


def inputs():
    return check.fixture("inputs")


def test_values_are_stored_as_the_builds_float():
    """The stand-in, on a MicroPython whose floats are doubles, stores them as NumPy's float32
    (as a firmware ulab does). Where the floats are float32 already (a board, a unix port
    built with MICROPY_FLOAT_IMPL_FLOAT) or ulab stores doubles (itemsize 8), the array holds
    the Python float unchanged: NumPy's rounding cannot be asked of a float32 build, whose
    parser may put a literal such as 1e-9 one ulp away from the nearest float32."""
    values = [0.1, 1 / 3, 1e-9]
    x = np.array(values)
    float32_build = array.array("f", [0.1])[0] == 0.1
    if x.itemsize == 4 and not float32_build:
        check.equal(x, check.fixture("float32")["x"], "stored values")
    else:
        check.equal(x, values, "stored values (itemsize %d)" % x.itemsize)


def test_dot_of_arrays_and_of_views():
    a, b = inputs()["a"], inputs()["b"]
    want = check.fixture("dot")
    close(np.dot(a, b), want["ab"], "a b")
    close(np.dot(a[1:4, 2:6], a[0:3, 1:5].transpose()), want["view"], "views")
    close(np.dot(a, a.transpose()), want["aat"], "a a^T")


OPS = {
    "+": lambda x, y: x + y,
    "-": lambda x, y: x - y,
    "*": lambda x, y: x * y,
    "/": lambda x, y: x / y,
}


def test_broadcasting_arithmetic():
    given = inputs()
    a, row, col = given["a"], given["row"], given["col"]
    names = check.names("arith")
    check.equal(len(names), 4, "operators")
    for name in names:
        want = check.fixture(name)
        op = want["op"]
        f = OPS[op]
        close(f(a, 2.5), want["scalar"], "a %s 2.5" % op)
        close(f(2.5, col), want["rscalar"], "2.5 %s col" % op)
        close(f(a, row), want["row"], "a %s row" % op)
        close(f(a, col), want["col"], "a %s col" % op)
        close(f(a, a * 0.5 + 4.0), want["same"], "a %s (a * 0.5 + 4.0)" % op)


def test_views_share_memory_and_inplace_ops_write_through():
    a = inputs()["a"].copy()
    v = a[1:3, 2:5]
    v += 10.0
    t = a.transpose()
    t[0, 4] = -7.0
    r = a.reshape((7, 5))
    r[6, 4] = 99.0
    a[0:2, :] *= np.array([[2.0], [3.0]])
    a[4, 0:3] = 0.0
    a[3:4, 1:3] = np.array([[5.0, 6.0]])
    want = check.fixture("views")
    close(a, want["a"], "a after writes through views")
    shapes = [list(v.shape), list(t.shape), list(r.shape), list(a[2].shape), len(a)]
    check.equal(shapes[:4], [[2, 3], [7, 5], [7, 5], [7]], "view shapes")
    check.equal(shapes[4], 5, "len(a)")
    approx(a[4, 5], want["item"], "a[4, 5]")


def test_reductions_and_elementwise_functions():
    a = inputs()["a"]
    want = check.fixture("reductions")
    close(np.sum(a, axis=0), want["sum0"], "sum axis 0")
    close(np.sum(a, axis=1), want["sum1"], "sum axis 1")
    close(np.max(a, axis=1), want["max1"], "max axis 1")
    close(np.max(a, axis=0), want["max0"], "max axis 0")
    approx(np.sum(a), want["total"], "sum")
    approx(np.max(a), want["top"], "max")
    close(np.exp(a), want["exp"], "exp")
    close(np.sqrt(a * a), want["sqrt"], "sqrt(a a)")
    close(np.tanh(a), want["tanh"], "tanh")
    close(np.maximum(a, 0.0), want["relu"], "maximum(a, 0)")
    close(a * (a > 0.0), want["gt"], "a * (a > 0)")
    close(-a, want["neg"], "-a")
    close(a ** 2, want["sq"], "a ** 2")
    close(a[1:3, 0:2].flatten(), want["flat"], "flatten of a view")


def test_shape_errors_are_raised():
    given = inputs()
    a, b = given["a"], given["b"]
    check.raises(ValueError, np.dot, a, a)
    check.raises(ValueError, lambda: a + b)


def test_float_to_uint8_rounds_half_away_from_zero_like_c_round():
    want = check.fixture("uint8")
    u = np.array(np.array(want["x"]), dtype=np.uint8)
    check.equal(u.tolist(), want["u"], "uint8 of %s" % want["x"])


def test_frombuffer_views_a_buffer_without_copying():
    b = bytearray(6)
    u = np.frombuffer(b, dtype=np.uint8).reshape((2, 3))
    b[1] = 1
    b[5] = 1
    f = array.array("f", bytes(8))
    v = np.frombuffer(f, dtype=np.float).reshape((1, 2))
    f[0] = 0.375
    f[1] = -2.5
    a = np.zeros((2, 3)) + 2.5
    a *= u
    z = np.zeros((1, 2))
    z += v
    want = check.fixture("frombuffer")
    check.equal(u * 1.0, want["keep"], "uint8 view of a bytearray")
    check.equal(a, want["scaled"], "2.5 * the uint8 view")
    check.equal(z, want["v"], "float view of an array.array")
