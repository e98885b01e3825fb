"""The NumPy integer reference: its fixed-point formats, its int32 checks, its worst cases."""

import math

import numpy as np
import pytest

from tinyattn_host.reference import int8 as ref


def test_exp_tables_follow_their_formula():
    k, j = np.arange(len(ref.EXP_HI)), np.arange(32)
    assert np.array_equal(ref.EXP_HI, np.round(32768 * np.exp(-k / 8)))
    assert np.array_equal(ref.EXP_LO, np.round(32768 * np.exp(-j / 256)))
    assert ref.EXP_HI[-1] > 0 and round(32768 * math.exp(-len(ref.EXP_HI) / 8)) == 0
    idx = np.arange(ref.EXP_LIMIT + 40)
    exact = 32768 * np.exp(-idx / 256)
    assert np.max(np.abs(ref.exp_q15(idx) - np.where(idx < ref.EXP_LIMIT, exact, 0))) <= 1.5


@pytest.mark.parametrize("limit", [128, ref.EXP_LIMIT])
def test_fixed_point_represents_the_multiplier(limit):
    rng = np.random.default_rng(1)
    for r in 10 ** rng.uniform(-9, 3, size=400):
        mult = ref.fixed_point(float(r), limit)
        ref.check_multiplier(mult)
        m, s, p, cap = mult
        if s < 30 and r * limit < 2 ** 31:  # 15 significant bits unless r is tiny
            assert abs(m / 2 ** (s + p) - r) <= r * 2 ** -14
        assert cap * r > limit and (cap - 1) * r <= limit or cap == ref.INT32_MAX


def test_apply_multiplier_rounds_half_up_within_one_step():
    rng = np.random.default_rng(2)
    for r in 10 ** rng.uniform(-7, 1, size=60):
        mult = ref.fixed_point(float(r), 128)
        v = rng.integers(-int(128 / r), int(128 / r) + 1, size=300)
        got = ref.apply_multiplier(v, mult, "test")
        assert np.max(np.abs(got - np.floor(v * r + 0.5))) <= 1
    # exactly representable multipliers round half up, ties toward +inf
    mult = ref.fixed_point(0.5, 128)
    assert ref.apply_multiplier(np.array([-3, -1, 1, 3]), mult, "t").tolist() == [-1, 0, 1, 2]


def test_requantize_saturates():
    mult = ref.fixed_point(0.01, 128)
    acc = np.array([[-10 ** 9, -12851, -12849, 0, 12700, 12749, 10 ** 9]])
    assert ref.requantize(acc, mult).tolist() == [[-128, -128, -128, 0, 127, 127, 127]]
    assert ref.requantize(acc, mult, lo=0).tolist() == [[0, 0, 0, 0, 127, 127, 127]]


def _float_softmax(scores, r, ok):
    z = np.where(ok, scores * r / ref.EXP_STEPS, -np.inf)
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_integer_softmax_is_close_to_the_float_one():
    rng = np.random.default_rng(3)
    for trial in range(40):
        rows, cols = rng.integers(1, 40, size=2)
        r = float(10 ** rng.uniform(-3, 1.5))
        scores = rng.integers(-3000, 3000, size=(rows, cols))
        keep = rng.random(cols) < 0.7 if trial % 2 else None
        causal = trial % 3 == 0
        mult = ref.fixed_point(r, ref.EXP_LIMIT)
        probs = ref.softmax(scores, mult, keep, causal)
        ok = ref.allowed_keys(rows, cols, keep, causal)
        none = ~ok.any(axis=1)
        ok[none] = True  # a row with every key masked is uniform
        want = _float_softmax(scores, mult[0] / 2 ** (mult[1] + mult[2]), ok)
        want[none] = 1 / cols
        assert np.all(probs[~ok] == 0)
        assert np.max(np.abs(probs / 32768 - want)) < 2e-3
        assert np.all(np.abs(probs.sum(axis=1).astype(int) - 32768) <= cols)


def test_softmax_row_with_every_key_masked_is_uniform():
    mult = ref.fixed_point(1.0, ref.EXP_LIMIT)
    scores = np.array([[5, -300, 0], [0, 0, 7]])
    probs = ref.softmax(scores, mult, keep=np.zeros(3))
    assert probs.tolist() == [[10923] * 3] * 2
    probs = ref.softmax(scores, mult, keep=np.array([0, 1, 0]), causal=True)
    assert probs.tolist() == [[10923] * 3, [0, 32768, 0]]


def test_int32_check_catches_what_would_wrap_on_the_board():
    x = np.full((1, 2 ** 17 + 1), -128)
    with pytest.raises(ref.Int32Overflow, match="matmul"):
        ref.matmul_xwt(x, x)
    with pytest.raises(ref.Int32Overflow, match="bias"):
        ref.matmul_xwt(x[:, :1], x[:, :1], np.array([2 ** 31]))
    with pytest.raises(ref.Int32Overflow):
        ref.worst_case_bounds(depth=2 ** 17)
    with pytest.raises(ref.Int32Overflow):
        ref.worst_case_bounds(keys=2 ** 16)


@pytest.mark.parametrize("E,H,S", [(4, 1, 1), (8, 2, 4), (16, 4, 16), (64, 4, 64), (64, 1, 64),
                                   (256, 2, 1024), (512, 1, 4096)])
def test_worst_case_of_each_configuration_fits_int32(E, H, S):
    """Attention of (E, H, S): projections (depth E, largest bias the quantizer allows),
    scores of head_dim E/H, softmax and P V over S keys; the Iris model's pooling."""
    bias_max = 2 ** 31 - 1 - E * 16384  # quant._bias refuses anything larger
    bounds = ref.worst_case_bounds(depth=E, bias_max=bias_max, head_dim=E // H, keys=S,
                                   tokens=S, mult=ref.fixed_point(1e-9, 128))
    assert max(bounds.values()) <= ref.INT32_MAX
    # and the reference reaches them on the extreme inputs without overflowing
    x, w, bias = ref.worst_case_matmul_inputs(2, 2, E, bias_max)
    acc = ref.matmul_xwt(x, w, bias)
    assert np.abs(acc.astype(np.int64)).max() == bounds["matmul accumulator"]
    ref.requantize(acc, ref.fixed_point(1e-9, 128))
    if S <= 256:
        scores = ref.worst_case_score_rows(S, S, E // H)
        probs = ref.softmax(scores, ref.fixed_point(1e-5, ref.EXP_LIMIT))
        ref.probs_v(probs, np.full((S, 3), -128))


def test_worst_case_of_every_fixed_point_multiplier_fits_int32():
    for r in 10 ** np.linspace(-12, 5, 200):
        for limit in (128, ref.EXP_LIMIT):
            mult = ref.fixed_point(float(r), limit)
            ref.worst_case_bounds(mult=mult)
            v = np.array([ref.INT32_MIN, -mult[3], -1, 0, 1, mult[3], ref.INT32_MAX])
            ref.apply_multiplier(v, mult, "extreme v")
