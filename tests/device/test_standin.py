"""The ulab stand-in (or a real ulab, with MICROPYTHON set) against NumPy in float32."""

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host.unixport import has_ulab, interpreter

RNG = np.random.default_rng(7)
A = RNG.standard_normal((5, 7)).astype(np.float32)
B = RNG.standard_normal((7, 3)).astype(np.float32)
ROW = RNG.standard_normal(7).astype(np.float32)
COL = RNG.standard_normal((5, 1)).astype(np.float32) + 3.0  # away from 0: it divides


def run(code):
    return run_device(code, {"a": A, "b": B, "row": ROW, "col": COL})


def close(got, want):
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(has_ulab(interpreter()), reason="a real ulab stores its build's float")
def test_values_are_stored_as_float32():
    out = run("OUT['x'] = np.array([0.1, 1/3, 1e-9])")
    assert np.array_equal(out["x"], np.array([0.1, 1 / 3, 1e-9], dtype=np.float32))


def test_dot_of_arrays_and_of_views():
    out = run("""
a, b = IN['a'], IN['b']
OUT['ab'] = np.dot(a, b)
OUT['view'] = np.dot(a[1:4, 2:6], a[0:3, 1:5].transpose())
OUT['aat'] = np.dot(a, a.transpose())
""")
    close(out["ab"], A @ B)
    close(out["view"], A[1:4, 2:6] @ A[0:3, 1:5].T)
    close(out["aat"], A @ A.T)


@pytest.mark.parametrize("op", ["+", "-", "*", "/"])
def test_broadcasting_arithmetic(op):
    out = run(f"""
a, row, col = IN['a'], IN['row'], IN['col']
OUT['scalar'] = a {op} 2.5
OUT['rscalar'] = 2.5 {op} col
OUT['row'] = a {op} row
OUT['col'] = a {op} col
OUT['same'] = a {op} (a * 0.5 + 4.0)
""")
    f = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}[op]
    close(out["scalar"], f(A, np.float32(2.5)))
    close(out["rscalar"], f(np.float32(2.5), COL))
    close(out["row"], f(A, ROW))
    close(out["col"], f(A, COL))
    close(out["same"], f(A, A * np.float32(0.5) + np.float32(4.0)))


def test_views_share_memory_and_inplace_ops_write_through():
    out = run("""
a = IN['a'].copy()
v = a[1:3, 2:5]
v += 10.0
t = a.transpose()
t[0, 4] = -7.0
r = a.reshape((7, 5))
r[6, 4] = 99.0
a[0:2, :] *= np.array([[2.0], [3.0]])
a[4, 0:3] = 0.0
a[3:4, 1:3] = np.array([[5.0, 6.0]])
OUT['a'] = a
OUT['shapes'] = [list(v.shape), list(t.shape), list(r.shape), list(a[2].shape), len(a)]
OUT['item'] = a[4, 5]
""")
    want = A.copy()
    want[1:3, 2:5] += 10.0
    want[4, 0] = -7.0
    want[4, 6] = 99.0
    want[0:2, :] *= np.array([[2.0], [3.0]], dtype=np.float32)
    want[4, 0:3] = 0.0
    want[3, 1:3] = [5.0, 6.0]
    close(out["a"], want)
    assert out["shapes"] == [[2, 3], [7, 5], [7, 5], [7], 5]
    assert out["item"] == pytest.approx(float(want[4, 5]))


def test_reductions_and_elementwise_functions():
    out = run("""
a = IN['a']
OUT['sum0'] = np.sum(a, axis=0)
OUT['sum1'] = np.sum(a, axis=1)
OUT['max1'] = np.max(a, axis=1)
OUT['max0'] = np.max(a, axis=0)
OUT['total'] = np.sum(a)
OUT['top'] = np.max(a)
OUT['exp'] = np.exp(a)
OUT['sqrt'] = np.sqrt(a * a)
OUT['tanh'] = np.tanh(a)
OUT['relu'] = np.maximum(a, 0.0)
OUT['gt'] = a * (a > 0.0)
OUT['neg'] = -a
OUT['sq'] = a ** 2
OUT['flat'] = a[1:3, 0:2].flatten()
""")
    close(out["sum0"], A.sum(axis=0))
    close(out["sum1"], A.sum(axis=1))
    close(out["max1"], A.max(axis=1))
    close(out["max0"], A.max(axis=0))
    assert out["total"] == pytest.approx(float(A.sum()), rel=1e-6)
    assert out["top"] == pytest.approx(float(A.max()))
    close(out["exp"], np.exp(A))
    close(out["sqrt"], np.abs(A))
    close(out["tanh"], np.tanh(A))
    close(out["relu"], np.maximum(A, 0))
    close(out["gt"], A * (A > 0))
    close(out["neg"], -A)
    close(out["sq"], A ** 2)
    close(out["flat"], A[1:3, 0:2].ravel())


def test_shape_errors_are_raised():
    from tinyattn_host.unixport import MicroPythonError

    with pytest.raises(MicroPythonError, match="ValueError"):
        run("np.dot(IN['a'], IN['a'])")
    with pytest.raises(MicroPythonError, match="ValueError"):
        run("IN['a'] + IN['b']")


def test_float_to_uint8_rounds_half_away_from_zero_like_c_round():
    out = run("OUT['u'] = np.array(np.array([0.5, 1.5, 2.49, 2.5, 254.5, 7.0]), dtype=np.uint8)")
    assert out["u"].tolist() == [1, 2, 2, 3, 255, 7]


def test_frombuffer_views_a_buffer_without_copying():
    out = run_device("""
import array
b = bytearray(6)
u = np.frombuffer(b, dtype=np.uint8).reshape((2, 3))
b[1] = 1
b[5] = 1
f = array.array('f', bytes(8))
v = np.frombuffer(f, dtype=np.float).reshape((1, 2))
f[0] = 0.375
f[1] = -2.5
a = np.zeros((2, 3)) + 2.5
a *= u
z = np.zeros((1, 2))
z += v
OUT['u'], OUT['scaled'], OUT['v'] = u * 1.0, a, z
""")
    keep = np.array([[0, 1, 0], [0, 0, 1]], dtype=np.float32)
    assert np.array_equal(out["u"], keep)
    assert np.array_equal(out["scaled"], np.float32(2.5) * keep)
    assert np.array_equal(out["v"], np.array([[0.375, -2.5]]))
