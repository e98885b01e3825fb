"""The NumPy reference of the int8 encoder ops: it is LayerNorm, it checks int32, its bounds."""

import numpy as np
import pytest

from tinyattn_host.reference import int8 as ref
from tinyattn_host.reference import int8_encoder as qref


def _norm(x, eps=37):
    E = x.shape[1]
    layer = {"gamma": np.ones(E), "beta": np.zeros(E), "eps": eps,
             "mult": ref.fixed_point(1 / 4096, 128)}
    return qref.layernorm(x, layer)


def test_norm_reference_is_layernorm():
    """z / 2^12 is (x - mean) / sqrt(var + eps) of the float formula, to 2^-11 relative."""
    rng = np.random.default_rng(5)
    for E in (1, 4, 24, 256):
        x = rng.integers(-128, 128, size=(50, E))
        x[1] = 3
        x[2] = 0
        x[2, 0] = 1  # the smallest variance
        eps = 37
        z = _norm(x, eps)["z"] / 4096.0
        var = x.var(axis=1, keepdims=True)
        want = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(var + eps / E ** 2)
        assert np.abs(z - want).max() <= 2 ** -11 * max(1.0, np.abs(want).max())


def test_isqrt_scaled_is_the_floor_square_root_at_every_scale():
    W = np.array([1, 2, 3, 4, 255, 2 ** 20 + 7, 2 ** 28 - 1, 2 ** 28, 2 ** 30 - 1, 2 ** 30,
                  2 ** 31 - 1])
    r, k = qref.isqrt_scaled(W)
    assert ((r >= 2 ** 14) & (r < 2 ** 15)).all()
    for w, rr, kk in zip(W, r, k):
        scaled = int(w) << (2 * kk) if kk >= 0 else int(w) >> 2
        assert rr * rr <= scaled < (rr + 1) ** 2
    assert k.tolist()[-3:] == [0, -1, -1] and k[0] == 14


def test_add_rounds_once_half_up_and_saturates():
    a, b = np.array([3, 1, 127, -128, -1]), np.array([0, 1, 127, -128, 0])
    # a / 2 + b / 2 with s = 1: (a + b + 1) >> 1
    assert qref.add(a, b, (1, 1, 1)).tolist() == [2, 1, 127, -128, 0]
    assert qref.add(a, b, (32767, 32767, 14)).tolist() == [6, 4, 127, -128, -2]


def test_worst_case_bounds_refuse_rows_over_256():
    assert qref.worst_case_bounds(E=256, beta_max=2 ** 31 - 1 - 2 ** 23, add_shift=30)
    with pytest.raises(qref.Int32Overflow):
        qref.worst_case_bounds(E=257)
    with pytest.raises(qref.Int32Overflow):
        qref.worst_case_bounds(E=8, beta_max=2 ** 31 - 2 ** 20)


def test_reference_asserts_int32_where_the_chip_would_wrap():
    """Past the bounds the reference refuses instead of computing what the chip cannot."""
    x = np.array([[127, -128, -128, -128]])
    layer = {"gamma": np.array([127, 1, 1, 1]), "beta": np.array([2 ** 31 - 100, 0, 0, 0]),
             "eps": 1, "mult": ref.fixed_point(1e-9, 128)}
    with pytest.raises(qref.Int32Overflow, match="z gamma"):
        qref.layernorm(x, layer)
    with pytest.raises(AssertionError, match="at most 256"):
        _norm(np.zeros((1, 257), dtype=int))
