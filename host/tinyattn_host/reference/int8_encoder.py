"""NumPy reference of the int8 encoder ops (device/tinyattn/int8/kernels_norm.py, int8/norm.py,
int8/encoder.py), bit for bit, every intermediate checked into int32 as in `int8`.

LayerNorm of an int8 row x of E values (scale s_x; the normalisation does not depend on it):
    S = sum x,  V = E sum x^2 - S^2  (= E^2 var, exact),  W = V + eps_q  (eps_q = E^2 eps / s_x^2)
    c_i = E x_i - S  (= E (x_i - mean), exact)
    xhat_i ~ c_i / sqrt(W), in Q12:  z_i = c_i 2^12 / sqrt(W)
The square root: W is scaled by 4^k into [2^28, 2^30) (k = -1: W >> 2 when W >= 2^30),
r = isqrt(W 4^k) in [2^14, 2^15) (floor), inv = round(2^28 / r) in [2^13, 2^14] (one division
a row), z_i = (c_i inv + 2^(sh-1)) >> sh with sh = 16 - k (round half up). Then
acc_i = z_i gamma_i + beta_i (gamma int8 at s_g, beta int32 at s_g / 2^12) is requantized
to int8 like a Dense output.

Residual (and positional) add of int8 a (scale s_a) and b (s_b) to scale s_y: with one shift
s and ma = round(2^s s_a / s_y), mb = round(2^s s_b / s_y) (the larger in [2^14, 2^15)),
    y = saturate((a ma + b mb + 2^(s-1)) >> s)
so each input is requantized to the output scale and rounded once.
"""

import math

import numpy as np

from . import int8, int8_attend
from .int8 import INT32_MAX, Int32Overflow, int32

_CONSTANTS = int8.device_module("int8/constants")  # the kernels' own
NORM_FRACTION = _CONSTANTS.NORM_FRACTION
"""Bits after the point of the normalised value z = xhat 2^12."""
MAX_NORM_WIDTH = _CONSTANTS.MAX_NORM_WIDTH
"""Longest LayerNorm row: V + eps_q fits int32 when 16384 E^2 + 2^30 - 1 <= 2^31 - 1."""
MAX_EPS = _CONSTANTS.MAX_EPS
"""eps_q is clamped to [1, 2^30 - 1]."""


def _int8(a, what):
    a = np.asarray(a)
    if a.size and (a.min() < -128 or a.max() > 127):
        raise ValueError("%s is not int8: range [%d, %d]" % (what, a.min(), a.max()))
    return a.astype(np.int64)


# ---- LayerNorm -------------------------------------------------------------------------------
def eps_units(eps, E, s_x):
    """eps in the units of V = E^2 var / s_x^2: round(E^2 eps / s_x^2), in [1, 2^30 - 1]."""
    f32 = np.float32  # a board's float: its order of operations, rounded as it rounds
    v = min(f32(E * E) * f32(eps) / (f32(s_x) * f32(s_x)), f32(2.0 ** 31))
    return max(1, min(MAX_EPS, int(math.floor(v + f32(0.5)))))


def isqrt_scaled(W):
    """(r, k) per element: r = floor(sqrt(W 4^k)) in [2^14, 2^15), W 4^k in [2^28, 2^30)
    (k = -1: W >> 2, for W >= 2^30)."""
    W = int32(W, "norm V + eps").astype(np.int64)
    assert W.min() >= 1, "V + eps must be >= 1"
    k = np.zeros_like(W)
    w = W.copy()
    while (w < 2 ** 28).any():
        small = w < 2 ** 28
        w = np.where(small, w << 2, w)
        k = k + small
    big = w >= 2 ** 30
    w = np.where(big, w >> 2, w)
    k = np.where(big, -1, k)
    int32(w, "norm scaled W")
    r = np.array([math.isqrt(int(v)) for v in w.ravel()], dtype=np.int64).reshape(w.shape)
    return r, k


def layernorm(x, layer):
    """{"gamma": int8 (E,), "beta": int32 (E,), "eps": eps_q, "mult"} -> dict of intermediates,
    "y" the int8 output."""
    x = _int8(x, "x")
    E = x.shape[1]
    assert E <= MAX_NORM_WIDTH, "LayerNorm rows of at most %d values" % MAX_NORM_WIDTH
    eps = layer["eps"]
    assert 1 <= eps <= MAX_EPS, eps
    S = int32(x.sum(axis=1, keepdims=True), "norm sum")
    Q = int32((x * x).sum(axis=1, keepdims=True), "norm sum of squares")
    EQ = int32(E * Q.astype(np.int64), "norm E sum x^2")
    S2 = int32(S.astype(np.int64) ** 2, "norm sum^2")
    V = int32(EQ.astype(np.int64) - S2, "norm V")
    assert V.min() >= 0
    W = int32(V.astype(np.int64) + eps, "norm V + eps")
    r, k = isqrt_scaled(W)
    inv = int32((2 ** 28 + (r >> 1)), "norm 2^28 + r/2").astype(np.int64) // r
    c = int32(E * x - S.astype(np.int64), "norm E x - sum")
    sh = 16 - k
    t = int32(c.astype(np.int64) * inv + ((1 << sh) >> 1), "norm c inv + half")
    z = int32(t.astype(np.int64) >> sh, "norm z")
    gamma = _int8(layer["gamma"], "gamma")
    beta = int32(layer["beta"], "beta").astype(np.int64)
    acc = int32(z.astype(np.int64) * gamma[None, :] + beta[None, :], "norm z gamma + beta")
    y = int8.requantize(acc, layer["mult"])
    return {"sum": S, "V": V, "r": r, "k": k, "inv": inv, "z": z, "acc": acc, "y": y}


# ---- residual and positional add --------------------------------------------------------------
def add(a, b, mults):
    """int8 a + int8 b (same shape) to int8: (a ma + b mb + 2^(s-1)) >> s, saturated."""
    ma, mb, s = mults
    assert 0 <= ma < 32768 and 0 <= mb < 32768 and 0 <= s <= 30, mults
    a, b = _int8(a, "a"), _int8(b, "b")
    v = int32(a * ma + b * mb + ((1 << s) >> 1), "add a ma + b mb + half")
    return np.clip(v.astype(np.int64) >> s, -128, 127).astype(np.int8)


def positional(x, P, mults):
    """int8 x (B*S, E) plus int8 P (S, E) on every sequence, to int8."""
    S = P.shape[0]
    return add(x, np.tile(np.asarray(P), (x.shape[0] // S, 1)), mults)


# ---- the encoder layer -----------------------------------------------------------------------
def dense(x, layer):
    """A Dense part: int8 out, saturated at [lo, 127] (lo 0: the ReLU folded in)."""
    acc = int8.matmul_xwt(x, layer["W"], layer.get("b"))
    return int8.requantize(acc, layer["mult"], layer.get("lo", -128), 127)


def encoder_layer(x, layer, seq_len, mask=None, causal=False, attend=None):
    """A quantized TransformerEncoderLayer on int8 x (B*S, E); dict of every intermediate.
    attend: a function of the attention's input to int8.attention's dict in place of it (a
    stream's cached attention, int8_stream.py).

    layer: "norm_first", "self_attn" (as int8.attention wants, mult_out not None),
    "linear1" and "linear2" (dense), "table" (the GELU table, or None: ReLU is folded into
    linear1), "norm1", "norm2" (layernorm), "add1", "add2" (add mults).
    """
    out = {}

    def ff(z):
        f = dense(z, layer["linear1"])
        out["f1"] = f
        if layer.get("table") is not None:
            f = int8.lookup(f, layer["table"])
            out["act"] = f
        out["f2"] = dense(f, layer["linear2"])
        return out["f2"]

    def sa(z):
        res = attend(z) if attend is not None else int8_attend.attention(
            z, layer["self_attn"], seq_len, mask=mask, causal=causal)
        out["attention"] = res
        return res["y"]

    if layer["norm_first"]:
        out["n1"] = layernorm(x, layer["norm1"])["y"]
        out["h"] = add(x, sa(out["n1"]), layer["add1"])
        out["n2"] = layernorm(out["h"], layer["norm2"])["y"]
        out["y"] = add(out["h"], ff(out["n2"]), layer["add2"])
    else:
        out["h0"] = add(x, sa(x), layer["add1"])
        out["h"] = layernorm(out["h0"], layer["norm1"])["y"]
        out["y0"] = add(out["h"], ff(out["h"]), layer["add2"])
        out["y"] = layernorm(out["y0"], layer["norm2"])["y"]
    return out


# ---- worst cases -----------------------------------------------------------------------------
def worst_case_bounds(E=0, beta_max=0, add_shift=None):
    """The largest magnitude of each int32 intermediate of LayerNorm rows of E int8 values
    (gamma int8, |beta| <= beta_max) and of an add with shift add_shift; asserts they fit.

    V = E^2 var <= 2^14 E^2 (var <= 127.5^2); |c| <= 255 (E - 1); inv <= 2^14;
    |z| <= 2^12 sqrt(E - 1) (1 + 2^-12) + 1 (|xhat| <= sqrt(E - 1) for any row).
    """
    bounds = {}
    if E:
        bounds["norm sum"] = 128 * E
        bounds["norm sum of squares"] = 16384 * E
        bounds["norm E sum x^2"] = bounds["norm sum^2"] = bounds["norm V"] = 16384 * E * E
        bounds["norm V + eps"] = 16384 * E * E + MAX_EPS
        bounds["norm 2^28 + r/2"] = 2 ** 28 + 2 ** 14
        bounds["norm E x - sum"] = 255 * (E - 1)
        bounds["norm c inv + half"] = 255 * (E - 1) * 2 ** 14 + 2 ** 16
        z = int(2 ** NORM_FRACTION * math.sqrt(E - 1) * (1 + 2.0 ** -12)) + 1
        bounds["norm z"] = z
        bounds["norm z gamma + beta"] = z * 128 + beta_max
    if add_shift is not None:
        bounds["add a ma + b mb + half"] = 2 * 128 * 32767 + ((1 << add_shift) >> 1)
    over = {k: v for k, v in bounds.items() if v > INT32_MAX}
    if over:
        raise Int32Overflow("intermediates leave int32 in the worst case: %r" % (over,))
    return bounds


def worst_case_norm_rows(E):
    """Rows that drive LayerNorm's intermediates to their bounds: one 127 among -128s (the
    largest |E x - sum| and |xhat|), half -128 half 127 (the largest V), a constant row
    (V = 0), a single 1 among 0s (the smallest V > 0, the largest k), and 127 everywhere."""
    rows = [np.full(E, -128), np.where(np.arange(E) % 2 == 0, -128, 127), np.full(E, 5),
            np.eye(1, E, E // 2)[0], np.full(E, 127)]
    rows[0][0] = 127
    return np.stack(rows).astype(np.int8)


# ---- each kind's int8 layer: from the device's spec and arrays, and run (reference/kinds.py)
def norm_layer(spec, arrays, p):
    """LayerNorm: {"gamma", "beta", "eps", "mult"} (as `layernorm` takes it)."""
    return {"kind": spec.get("kind", "LayerNorm"), "gamma": np.asarray(arrays[p + "gamma"]),
            "beta": np.asarray(arrays[p + "beta"]), "eps": spec["eps"], "mult": spec["mult"]}


def norm_run(x, layer):
    return layernorm(x, layer)["y"]


def positional_layer(spec, arrays, p):
    return {"kind": spec["kind"], "mults": spec["mults"],
            "P": np.asarray(arrays[p + "P"]).reshape(spec["seq_len"], spec["E"])}


def positional_run(x, layer):
    return positional(x, layer["P"], layer["mults"])


def encoder_layer_of(spec, arrays, p):
    """TransformerEncoderLayer: its parts' layers (arrays "<part>.<name>"), adds, table."""
    parts = spec["parts"]
    layer = {"kind": spec["kind"], "seq_len": spec["seq_len"], "causal": spec["causal"],
             "norm_first": spec["norm_first"], "add1": spec["adds"][0], "add2": spec["adds"][1],
             "table": None}
    for name in ("norm1", "norm2"):
        layer[name] = norm_layer(parts[name], arrays, p + name + ".")
    layer["self_attn"] = int8_attend.attention_layer(parts["self_attn"], arrays, p + "self_attn.")
    for name in ("linear1", "linear2"):
        layer[name] = int8.dense_layer(parts[name], arrays, p + name + ".")
    if "act" in parts:
        layer["table"] = np.asarray(arrays[p + "act.table"])
    return layer


def encoder_run(x, layer, mask=None):
    return encoder_layer(x, layer, layer["seq_len"], mask=mask, causal=layer["causal"])["y"]
