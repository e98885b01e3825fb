"""NumPy reference of the int8 path (device/tinyattn/int8/kernels.py, int8/layers.py), bit for bit.

Every intermediate is computed in int64 and checked into int32 (`int32`): on the ESP32-S3 a
viper int is 32 bits and wraps, which the 64-bit unix port never shows. `worst_case_bounds`
gives, for a configuration, the largest magnitude each intermediate can reach with the most
extreme int8 inputs and asserts that all of them fit; `worst_case_*_inputs` build those
inputs so a run of the reference reaches the bounds.

Formats: int8 tensors (rows, cols); int32 accumulators; softmax probabilities unsigned Q0.15
(32768 = 1.0). A real multiplier r is (m, s, p, cap) (see fixed_point):
    v * r ~ ((clamp(v, -cap, cap) >> p) * m + 2^(s-1)) >> s     (round half up)
"""

import numpy as np

from ..device_modules import device_module

INT32_MIN, INT32_MAX = -(2 ** 31), 2 ** 31 - 1
_CONSTANTS = device_module("int8/constants")  # the kernels' own (device/tinyattn/int8/constants.py)
EXP_HI = np.array(_CONSTANTS.EXP_HI, dtype=np.int64)  # round(32768 exp(-k / 8)), k = 0..88
EXP_LO = np.array(_CONSTANTS.EXP_LO, dtype=np.int64)  # round(32768 exp(-j / 256)), j = 0..31
EXP_STEPS, EXP_LIMIT, PROB_ONE = _CONSTANTS.EXP_STEPS, _CONSTANTS.EXP_LIMIT, _CONSTANTS.PROB_ONE


class Int32Overflow(AssertionError):
    """An intermediate left the int32 range: on the ESP32-S3 it would wrap."""


def int32(values, what):
    """values (any int array or int) as int32, after asserting they fit."""
    a = np.asarray(values, dtype=np.int64)
    if a.size and (a.min() < INT32_MIN or a.max() > INT32_MAX):
        raise Int32Overflow("%s leaves int32: range [%d, %d]" % (what, a.min(), a.max()))
    return a.astype(np.int32)


def _int8(a, what):
    a = np.asarray(a)
    if a.size and (a.min() < -128 or a.max() > 127):
        raise ValueError("%s is not int8: range [%d, %d]" % (what, a.min(), a.max()))
    return a.astype(np.int64)


# ---- fixed-point multipliers -------------------------------------------------------------
_FIXED_POINT = device_module("int8/fixedpoint")
fixed_point = _FIXED_POINT.fixed_point
"""(m, s, p, cap) for a real multiplier r > 0: the device's own definition
(device/tinyattn/int8/fixedpoint.py). The device runs it in its float (float32 on a board); the
bit-exact tests pass the device's integers to the reference."""


def check_multiplier(mult):
    """mult within the bounds the kernels take (the device's valid_multiplier)."""
    assert _FIXED_POINT.valid_multiplier(*(int(v) for v in mult)), mult


def apply_multiplier(v, mult, what):
    """((clamp(v, -cap, cap) >> p) * m + 2^(s-1)) >> s, each step checked in int32."""
    check_multiplier(mult)
    m, s, p, cap = mult
    v = np.clip(np.asarray(v, dtype=np.int64), -cap, cap) >> p
    product = int32(v * m + ((1 << s) >> 1), what + " (v >> p) * m + half")
    return product.astype(np.int64) >> s


# ---- kernels -----------------------------------------------------------------------------
def matmul_xwt(x, w, bias=None):
    """x (rows, depth) int8 @ w (cols, depth).T int8 + bias int32 -> int32 (rows, cols)."""
    x, w = _int8(x, "x"), _int8(w, "w")
    products = x[:, None, :] * w[None, :, :]
    start = np.zeros((x.shape[0], w.shape[0]), dtype=np.int64)
    if bias is not None:
        start += int32(bias, "bias")
    # every partial sum lies within start +- sum |products|
    reach = np.abs(start) + np.abs(products).sum(axis=2)
    int32(reach, "matmul partial sums")
    return int32(start + products.sum(axis=2), "matmul accumulator")


def requantize(acc, mult, lo=-128, hi=127):
    """int32 -> int8: saturate(apply_multiplier(acc), lo, hi)."""
    y = apply_multiplier(int32(acc, "requantize input"), mult, "requantize")
    return np.clip(y, lo, hi).astype(np.int8)


def exp_q15(idx):
    """2^15 exp(-idx / 256) from the two tables; 0 from EXP_LIMIT on."""
    idx = np.asarray(idx, dtype=np.int64)
    inside = idx < EXP_LIMIT
    safe = np.where(inside, idx, 0)
    prod = int32(EXP_HI[safe >> 5] * EXP_LO[safe & 31] + 16384, "exp table product")
    return np.where(inside, prod.astype(np.int64) >> 15, 0)


def allowed_keys(rows, cols, keep=None, causal=False):
    """(rows, cols) bool: key j allowed for row i (keep[j] != 0, and j <= i when causal)."""
    ok = np.ones((rows, cols), dtype=bool)
    if keep is not None:
        ok &= (np.asarray(keep) != 0)[None, :]
    if causal:
        ok &= np.arange(cols)[None, :] <= np.arange(rows)[:, None]
    return ok


def softmax(scores, mult, keep=None, causal=False):
    """Row-wise integer softmax of int32 scores into Q0.15 probabilities (uint16).

    Masked keys (keep == 0, or j > i when causal) get 0; a row with every key masked is
    uniform, round(2^15 / cols) each.
    """
    scores = int32(scores, "scores").astype(np.int64)
    rows, cols = scores.shape
    assert cols < 65536, "softmax row sum needs cols < 2^16"
    ok = allowed_keys(rows, cols, keep, causal)
    top = np.where(ok, scores, np.iinfo(np.int64).min).max(axis=1, keepdims=True)
    diff = int32(np.where(ok, top - scores, 0), "softmax top - score")
    idx = apply_multiplier(np.minimum(diff, mult[3]), mult, "softmax index")
    e = np.where(ok, exp_q15(idx), 0)
    e[~ok.any(axis=1)] = PROB_ONE  # every key masked: uniform (the float -1e9 scores)
    total = int32(e.sum(axis=1, keepdims=True), "softmax sum")
    inv = int32((1 << 30) + (total.astype(np.int64) >> 1), "softmax 2^30 + sum/2") // total
    probs = int32(e * inv + 16384, "softmax e * inv").astype(np.int64) >> 15
    return probs.astype(np.uint16)


def probs_v(probs, v):
    """Q0.15 probs (rows, cols) @ int8 v (cols, depth) -> int32 (rows, depth)."""
    probs = np.asarray(probs, dtype=np.int64)
    v = _int8(v, "v")
    int32(probs @ np.abs(v), "probs x v partial sums")
    return int32(probs @ v, "probs x v")


def lookup(x, table):
    """table[x & 255] elementwise: table is 256 int8 values indexed by the int8's byte."""
    return np.asarray(table, dtype=np.int8)[_int8(x, "x").astype(np.int64) & 255]


def sum_tokens(x, tokens):
    """int8 (groups*tokens, cols) -> int32 (groups, cols): the sum over each group's tokens."""
    x = _int8(x, "x")
    return int32(x.reshape(-1, tokens, x.shape[1]).sum(axis=1), "token sum")


def masked_pool(x, tokens, mask, mults):
    """int8 (B*tokens, cols) -> int8 (B, cols): the sum of each sequence's kept tokens (mask
    (B, tokens), 0 = padding) requantized with mults[n - 1], n its kept tokens (0: zeros)."""
    x = _int8(x, "x")
    keep = np.asarray(mask) != 0
    sums = int32((x.reshape(keep.shape[0], tokens, -1) * keep[:, :, None]).sum(axis=1),
                 "token sum")
    out = np.zeros(sums.shape, dtype=np.int8)
    for b, n in enumerate(keep.sum(axis=1)):
        if n:
            out[b] = requantize(sums[b], tuple(mults[n - 1]))
    return out


# ---- layers ------------------------------------------------------------------------------
def dense(x, layer):
    """{"W": int8 (out, in), "b": int32 or None, "mult": ... or None} -> (acc, y).

    y is the requantized int8, or None for a layer that keeps its int32 output (mult None).
    """
    acc = matmul_xwt(x, layer["W"], layer.get("b"))
    mult = layer.get("mult")
    return acc, None if mult is None else requantize(acc, mult, layer.get("lo", -128))


# ---- worst cases -------------------------------------------------------------------------
def worst_case_bounds(depth=0, bias_max=0, head_dim=0, keys=0, tokens=0, mult=None):
    """The largest magnitude of each int32 intermediate for int8 inputs in [-128, 127].

    depth/bias_max: a matmul x @ W.T + b of that inner size; head_dim/keys: the scores
    (no bias), softmax and P V of one head; tokens: a pooling sum; mult: a multiplier.
    Asserts (Int32Overflow) that every bound fits in int32; returns {name: bound}.
    """
    q15 = 2 ** 15
    bounds = {}
    if depth:
        bounds["matmul accumulator"] = depth * 128 * 128 + bias_max
    if head_dim:
        score = head_dim * 128 * 128
        bounds["score"] = score
        bounds["softmax top - score"] = 2 * score
    if keys:
        bounds["exp table product"] = q15 * q15 + 16384
        bounds["softmax sum"] = keys * q15
        bounds["softmax 2^30 + sum/2"] = 2 ** 30 + keys * q15 // 2
        bounds["softmax e * inv"] = q15 * q15 + 16384  # e <= 2^15, inv <= 2^15 (sum >= 2^15)
        # sum_j P_j <= inv * sum / 2^15 + keys/2 <= 2^15 + keys
        bounds["probs x v"] = 128 * (q15 + keys)
    if tokens:
        bounds["token sum"] = tokens * 128
    if mult is not None:
        m, s, p, cap = mult
        check_multiplier(mult)
        bounds["(v >> p) * m + half"] = 2 ** 15 * m + ((1 << s) >> 1)
    over = {k: v for k, v in bounds.items() if v > INT32_MAX}
    if over:
        raise Int32Overflow("intermediates leave int32 in the worst case: %r" % (over,))
    return bounds


def worst_case_matmul_inputs(rows, cols, depth, bias_max):
    """x = -128 everywhere and w = -128 / +127 by row: the largest positive and negative sums,
    and the bias at +-bias_max with the same sign."""
    x = np.full((rows, depth), -128, dtype=np.int8)
    w = np.where((np.arange(cols) % 2 == 0)[:, None], -128, 127).astype(np.int8)
    w = np.repeat(w, depth, axis=1)
    bias = np.where(np.arange(cols) % 2 == 0, bias_max, -bias_max).astype(np.int32)
    return x, w, bias


def worst_case_score_rows(rows, keys, head_dim):
    """Scores spanning the widest range a head can produce: alternately +-head_dim*2^14."""
    extreme = head_dim * 128 * 128
    return np.where((np.arange(rows)[:, None] + np.arange(keys)[None, :]) % 2 == 0,
                    extreme, -extreme).astype(np.int32)


# ---- each kind's int8 layer: from the device's spec and arrays, and run (reference/kinds.py)
def dense_layer(spec, arrays, p):
    """Dense: {"W" (out, in), "b", "mult", "lo"} from the arrays named p + <name>."""
    W = np.asarray(arrays[p + "W"]).reshape(spec["out"], spec["in"])
    return {"kind": spec["kind"], "W": W, "b": _optional(arrays, p + "b"),
            "mult": _mult(spec["mult"]), "lo": spec.get("lo", -128)}


def dense_run(x, layer):
    """The requantized output, or the int32 one when the layer keeps it (mult None)."""
    acc, y = dense(x, layer)
    return acc if y is None else y


def activation_layer(spec, arrays, p):
    return {"kind": spec["kind"], "table": np.asarray(arrays[p + "table"])}


def activation_run(x, layer):
    return lookup(x, layer["table"])


def tokens_layer(spec, arrays, p):
    """Tokens and GlobalAvgPool: {"seq_len", "mult", "by_count"} (by_count: a masked pool's
    multiplier for each number of kept tokens)."""
    return {"kind": spec["kind"], "seq_len": spec["seq_len"], "mult": _mult(spec.get("mult")),
            "by_count": spec.get("by_count")}


def tokens_run(x, layer):
    return x.reshape(x.shape[0] * layer["seq_len"], -1)


def pool_run(x, layer, mask=None):
    """The mean of each sequence's tokens, or of its kept ones with a padding mask (B, S)."""
    if mask is not None:
        return masked_pool(x, layer["seq_len"], mask, layer["by_count"])
    return requantize(sum_tokens(x, layer["seq_len"]), layer["mult"])


def _optional(arrays, name):
    return None if arrays.get(name) is None else np.asarray(arrays[name])


def _mult(value):
    return None if value is None else tuple(value)
