"""Cases: arithmetic and comparison operators, ulab's result dtypes, abs()."""

from ulab import numpy as np

from registry import A, B, V, a, case, path, u8  # noqa: F401


@case
def arithmetic_float():
    x, row, col = a(), np.array([1.0, 2, -4]), np.array([[2.0], [-0.5]])
    return [x + 1, x - row, x * col, x / 4, x / row, x ** 2, -x, 1 - x, 2 * x, 1 / row, 2 ** row,
            row + x, x / 0, x + x.T.T, col * row]


@case
def arithmetic_broadcast_bad():
    return a() + np.array([1, 2])


@case
def arithmetic_int_dtypes():
    out = []
    for d1 in (np.uint8, np.int8, np.uint16, np.int16, np.bool):
        for d2 in (np.uint8, np.int8, np.uint16, np.int16, np.float, np.bool):
            s = np.array([3, 1], dtype=d1) + np.array([2, 1], dtype=d2)
            p = np.array([3, 1], dtype=d1) * np.array([2, 1], dtype=d2)
            out.append([s, p])
    return out


@case
def arithmetic_int_scalars():
    out = []
    for d in (np.uint8, np.int8, np.uint16, np.int16):
        for s in (2, 200, 300, -1, -200, 70000, 2.5, True):
            out.append(np.array([3, 5], dtype=d) * s)
    return out


@case
def arithmetic_wraps():
    x = np.array([200, 100], dtype=np.uint8)
    return [x + x, x * 2, x - 201, -x, -np.array([-1, 2], dtype=np.int8), 2 + x]


@case
def arithmetic_int_float():
    x = u8()
    return [x / 255.0, x * 0.5, x + np.array([0.5]), x ** 2, np.array([1.0]) / x[:1],
            (x > 0) * np.array([1.5, 2, 3, 4]), (x > 0) + (x > 1)]


@case
def abs_():
    # (not abs of a uint8 above 127: ulab 6.12 gives abs(uint8 250) as 122)
    return [abs(a()), abs(np.array([-3, 2], dtype=np.int16)), abs(u8()[:3]), abs(a() > 0)]


@case
def comparisons():
    x = a()
    return [x > 0, x < 3, x >= 3, x <= -2.5, x == 4, x != 4, x > np.array([0.0, 0, 0]),
            np.array([1.0, 2]) < np.array([2.0, 2]), u8() > 1, u8() == 2.0]


@case
def comparison_reflected():
    return 3 > np.array([1.0, 5])


@case
def inplace():
    x = a()
    v = x[:, 1:]
    v += 10  # (only += and -= reach a Python class's method on MicroPython: docs/testing.md)
    x[:, 1:] *= np.array([1.0, 2])
    x -= 1
    x /= 2
    y = np.array([1.0, 2])
    y **= 2
    z = u8()
    z += 1
    return [x, y, z]


@case
def inplace_cast():
    z = u8()
    z += 1.5
    return z
