"""The int8 attention core with grouped-query heads, an additive bias and causal offsets
(kernels_attend) against tinyattn_host.reference.int8_attend bit for bit
(tests/board/case_attend_gqa.py on the board), and the reference's int8 result against the float
function (ONNX's Attention, written here in NumPy) within the int8 tolerance.

The configurations are drawn from seeds: H = 8 with H_kv = 2, 1, 4, 8 and other groupings,
queries S and keys T apart (decoding: T = past + S), head sizes around the 8-way unrolling,
biases shared or per (sequence, head) with saturated entries, causal offsets from -2 to the
past length, padding keys, rows with every key masked (zeros, or uniform for the 2017 layer).
"""

from functools import lru_cache

import numpy as np
import pytest

from board_cases import board_test
from tinyattn_host.reference import int8 as ref
from tinyattn_host.reference import int8_attend as gqa

HEADS = [(8, 2), (8, 1), (8, 4), (8, 8), (6, 3), (3, 1)]
INT8_TOLERANCE = 0.06
"""max |int8 - float| <= 0.06 max |float|: the int8 cases' bound (tests/board/case_quant.py)."""


def gqa_config(seed):
    rng = np.random.default_rng(3500 + seed)
    H, H_kv = HEADS[seed % len(HEADS)]
    S = int(rng.choice([1, 2, 5, 7, 9, 16]))
    past = int(rng.choice([0, 0, 1, 3, 8]))
    T, B, D = S + past, int(rng.integers(1, 4)), int(rng.choice([1, 3, 8, 9, 16, 5]))
    c = dict(S=S, T=T, B=B, H=H, H_kv=H_kv, D=D, causal=seed % 3 != 0,
             offset=past if seed % 2 else int(rng.integers(-2, 3)), uniform=seed % 7 == 6)
    spread = int(rng.choice([8, 40, 127]))
    c["q"] = rng.integers(-spread, spread + 1, size=B * S * H * D).tolist()
    c["k"], c["v"] = (rng.integers(-spread, spread + 1, size=B * T * H_kv * D).tolist()
                      for _ in range(2))
    c["score_mult"] = ref.fixed_point(float(10 ** rng.uniform(-3, 0.5)), ref.EXP_LIMIT)
    c["ctx_mult"] = ref.fixed_point(float(10 ** rng.uniform(-5.5, -4)), 128)
    c["keep"] = None
    if seed % 5 == 4:
        keep = (rng.random(B * T) < 0.6).astype(int)
        keep[:T] = 0  # a sequence with every key masked
        c["keep"] = keep.tolist()
    kind = seed % 3  # no bias, one (S, T) block for all, one per (sequence, head)
    c["bias"] = None
    if kind:
        rows = S if kind == 1 else B * H * S
        bias = rng.integers(-(2 ** int(rng.integers(4, 16))), 2 ** 12, size=(rows, T))
        bias[rng.random((rows, T)) < 0.1] = -gqa.BIAS_LIMIT  # a saturated -inf
        c["bias"] = bias.ravel().tolist()
    return c


def gqa_reference(c):
    S, T, B, H, H_kv, D = (c[n] for n in ("S", "T", "B", "H", "H_kv", "D"))
    bias = None if c["bias"] is None else np.array(c["bias"]).reshape(-1, T)
    out = gqa.attend(np.array(c["q"]).reshape(B * S, H * D),
                     np.array(c["k"]).reshape(B * T, H_kv * D),
                     np.array(c["v"]).reshape(B * T, H_kv * D), S, H, c["score_mult"],
                     c["ctx_mult"], kv_len=T, num_kv_heads=H_kv, keep=c["keep"], bias=bias,
                     causal=c["causal"], causal_offset=c["offset"], uniform=c["uniform"])
    return {k: v.ravel() for k, v in out.items()}


GQA_CONFIGS = [gqa_config(seed) for seed in range(36)]


def test_configurations_vary():
    cs = GQA_CONFIGS
    assert {(c["H"], c["H_kv"]) for c in cs} >= {(8, 2), (8, 1)}
    assert {c["bias"] is None for c in cs} == {True, False}
    assert any(c["bias"] is not None and len(c["bias"]) > c["S"] * c["T"] for c in cs)
    assert {c["offset"] for c in cs if c["causal"]} >= {-2, -1, 0, 1, 2, 3, 8}
    assert any(c["T"] > c["S"] for c in cs) and any(c["keep"] is not None for c in cs)
    assert {c["D"] % 8 for c in cs} >= {0, 1, 3}


def test_reference_masks_rows_and_reads_each_kv_head_by_its_group():
    """Hand-checked: a causal offset of -1 hides every key from query 0 (zeros); query head
    h's scores use K head h // (H / H_kv)."""
    mult = ref.fixed_point(0.01, ref.EXP_LIMIT)
    ctx_mult = ref.fixed_point(1 / 32768, 128)
    Q = np.array([[1, 0, 0, 1], [0, 1, 1, 0]])  # S = 2, H = 4, D = 1
    K = np.array([[3, -5], [7, 2]])  # T = 2, H_kv = 2
    V = np.array([[100, -100], [50, 20]])
    out = gqa.attend(Q, K, V, 2, 4, mult, ctx_mult, num_kv_heads=2, causal=True,
                     causal_offset=-1)
    scores = out["scores"].reshape(4, 2, 2)  # head, query, key
    assert scores[0].tolist() == [[3, 7], [0, 0]] and scores[2].tolist() == [[0, 0], [-5, 2]]
    assert out["ctx"][0].tolist() == [0, 0, 0, 0]  # query 0 sees no key
    assert out["ctx"][1].tolist() == [100, 100, -100, -100]  # query 1 sees key 0 only


@lru_cache(maxsize=None)
def float_case(name):
    """(float output, int8 output dequantized) of one named case: random q, k, v and bias
    quantized per tensor (max |.| / 127), the int8 core, the float function."""
    shapes = {"gqa8x2": (8, 2, 16, 16, None, False, 0), "mqa8x1": (8, 1, 9, 9, None, False, 0),
              "alibi": (8, 2, 12, 12, "alibi", True, 0), "decode": (8, 1, 4, 13, None, True, 9),
              "bias-per-head": (4, 2, 7, 7, "random", False, 0)}
    H, H_kv, S, T, bias_kind, causal, offset = shapes[name]
    rng = np.random.default_rng(len(name))
    B, D = 2, 8
    q = rng.normal(size=(B * S, H * D))
    k, v = rng.normal(size=(2, B * T, H_kv * D))
    scale = 1 / np.sqrt(D)
    bias = None
    if bias_kind == "alibi":  # one slope a head, -slope (i - j)
        slopes = 2.0 ** (-8 * (np.arange(H) + 1) / H)
        dist = np.arange(S)[:, None] - np.arange(T)[None, :]
        bias = np.concatenate([np.concatenate([-s * dist for s in slopes])] * B)
    elif bias_kind == "random":
        bias = rng.normal(scale=2.0, size=(B * H * S, T))
    want = sdpa_float(q, k, v, S, H, T, H_kv, bias, causal, offset, scale)
    s = {n: np.abs(a).max() / 127 for n, a in (("q", q), ("k", k), ("v", v))}
    q8, k8, v8 = (np.clip(np.floor(a / s[n] + 0.5), -128, 127).astype(int)
                  for n, a in (("q", q), ("k", k), ("v", v)))
    unit = s["q"] * s["k"] * scale
    out = gqa.attend(q8, k8, v8, S, H, ref.fixed_point(unit * ref.EXP_STEPS, ref.EXP_LIMIT),
                     ref.fixed_point(1 / ref.PROB_ONE, 128), kv_len=T, num_kv_heads=H_kv,
                     bias=None if bias is None else gqa.quantize_bias(bias, unit),
                     causal=causal, causal_offset=offset)
    return want, out["ctx"] * s["v"]


def sdpa_float(q, k, v, S, H, T, H_kv, bias, causal, offset, scale):
    """ONNX's Attention in the 2-D layout, float64, written out: softmax(q k^T scale + bias)
    v per sequence and query head, head h on K/V head h // (H / H_kv)."""
    B, D = q.shape[0] // S, q.shape[1] // H
    out = np.zeros((B * S, H * D))
    for b, h in np.ndindex(B, H):
        g = h // (H // H_kv)
        qh = q[b * S:(b + 1) * S, h * D:(h + 1) * D]
        kh, vh = (a[b * T:(b + 1) * T, g * D:(g + 1) * D] for a in (k, v))
        s = qh @ kh.T * scale
        if bias is not None:
            s = s + bias[(b * H + h) * S:(b * H + h + 1) * S]
        if causal:
            s = np.where(np.arange(T)[None, :] <= np.arange(S)[:, None] + offset, s, -np.inf)
        e = np.exp(s - s.max(axis=1, keepdims=True))
        out[b * S:(b + 1) * S, h * D:(h + 1) * D] = e / e.sum(axis=1, keepdims=True) @ vh
    return out


@pytest.mark.parametrize("name", ["gqa8x2", "mqa8x1", "alibi", "decode", "bias-per-head"])
def test_int8_core_is_within_the_int8_tolerance_of_float(name):
    want, got = float_case(name)
    err = np.abs(got - want).max() / np.abs(want).max()
    assert err <= INT8_TOLERANCE, err
    assert err > 0  # the int8 path did round something


def make_fixtures():
    fixtures = {}
    for seed, c in enumerate(GQA_CONFIGS):
        want = gqa_reference(c)
        fixtures["gqa%02d" % seed] = dict({"seed": seed, "c": c},
                                          **{k: v.tolist() for k, v in want.items()})
    return fixtures


test_attend_gqa_on_board = board_test("case_attend_gqa", make_fixtures)
