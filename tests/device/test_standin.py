"""The ulab stand-in (or a real ulab, with MICROPYTHON set) against NumPy in float32
(tests/board/case_standin.py on the board)."""

import numpy as np

from board_cases import board_test
from checks import f32

RNG = np.random.default_rng(7)
A = RNG.standard_normal((5, 7)).astype(np.float32)
B = RNG.standard_normal((7, 3)).astype(np.float32)
ROW = RNG.standard_normal(7).astype(np.float32)
COL = RNG.standard_normal((5, 1)).astype(np.float32) + 3.0  # away from 0: it divides
OPS = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.divide}
HALF = np.float32(0.5)


def c_round(v):
    """C's round(): half away from zero."""
    return int(np.floor(abs(v) + 0.5) * np.sign(v))


def make_fixtures():
    fixtures = {
        "inputs": {"a": f32(A), "b": f32(B), "row": f32(ROW), "col": f32(COL)},
        "float32": {"x": f32(np.array([0.1, 1 / 3, 1e-9], dtype=np.float32))},
        "dot": {"ab": f32(A @ B), "view": f32(A[1:4, 2:6] @ A[0:3, 1:5].T), "aat": f32(A @ A.T)},
    }
    for k, (op, f) in enumerate(OPS.items()):
        fixtures["arith%d" % k] = {
            "op": op, "scalar": f32(f(A, np.float32(2.5))), "rscalar": f32(f(np.float32(2.5), COL)),
            "row": f32(f(A, ROW)), "col": f32(f(A, COL)),
            "same": f32(f(A, A * HALF + np.float32(4.0)))}
    want = A.copy()
    want[1:3, 2:5] += 10.0
    want[4, 0] = -7.0
    want[4, 6] = 99.0
    want[0:2, :] *= np.array([[2.0], [3.0]], dtype=np.float32)
    want[4, 0:3] = 0.0
    want[3, 1:3] = [5.0, 6.0]
    fixtures["views"] = {"a": f32(want), "item": float(want[4, 5])}
    fixtures["reductions"] = {
        "sum0": f32(A.sum(axis=0)), "sum1": f32(A.sum(axis=1)), "max1": f32(A.max(axis=1)),
        "max0": f32(A.max(axis=0)), "total": float(A.sum()), "top": float(A.max()),
        "exp": f32(np.exp(A)), "sqrt": f32(np.abs(A)), "tanh": f32(np.tanh(A)),
        "relu": f32(np.maximum(A, 0)), "gt": f32(A * (A > 0)), "neg": f32(-A),
        "sq": f32(A ** 2), "flat": f32(A[1:3, 0:2].ravel())}
    x = [0.5, 1.5, 2.49, 2.5, 254.5, 7.0]
    fixtures["uint8"] = {"x": x, "u": [c_round(v) for v in x]}
    keep = np.array([[0, 1, 0], [0, 0, 1]], dtype=np.float32)
    fixtures["frombuffer"] = {"keep": f32(keep), "scaled": f32(np.float32(2.5) * keep),
                              "v": np.array([[0.375, -2.5]])}
    return fixtures


def test_c_round_is_half_away_from_zero():
    assert [c_round(v) for v in [0.5, 1.5, 2.49, 2.5, 254.5, 7.0, -0.5, -2.5]] == \
        [1, 2, 2, 3, 255, 7, -1, -3]


test_standin_on_board = board_test("case_standin", make_fixtures)
