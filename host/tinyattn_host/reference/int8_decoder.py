"""NumPy reference of the int8 language model (device/tinyattn/int8/decoder.py, lm.py,
kernels_decoder.py), bit for bit: a position at a time against an int8 key/value cache of
H_kv heads, int32 logits.

RMSNorm: W = sum x^2 + eps_q, r = isqrt(W 4^k) (W 4^k in [2^28, 2^30)), inv = round(2^28 / r),
z = (x inv + 2^(sh-1)) >> sh, sh = 16 - k; y = requantize(z gamma). Rotary: a pair (a, b)
to ((a c - b s + 2^13) >> 14, (a s + b c + 2^13) >> 14) saturated, c and s in Q14 from the
device's own rotary_fixed.py. The attention core is int8_attend.attend (seq_len 1 against
the kept keys); every other step int8.py's and int8_encoder.py's.
"""

import math

import numpy as np

from ..device_modules import device_module
from . import int8 as ref
from . import int8_encoder as qref
from .int8_attend import attend

ROTARY = device_module("int8/rotary_fixed")


def rmsnorm(x, gamma, eps, mult):
    """int8 row(s) x (rows, E) -> int8, every intermediate checked in int32."""
    x = ref._int8(x, "x")
    W = ref.int32((x * x).sum(axis=1, keepdims=True) + eps, "rmsnorm sum x^2 + eps")
    assert W.max() < 2 ** 30 and W.min() >= 1
    W = W.astype(np.int64)
    k = np.zeros_like(W)
    while (W < 2 ** 28).any():
        small = W < 2 ** 28
        W = np.where(small, W << 2, W)
        k = k + small
    r = np.array([[math.isqrt(int(v))] for v in W[:, 0]], dtype=np.int64)
    inv = ((1 << 28) + (r >> 1)) // r
    sh = 16 - k
    z = ref.int32(x * inv + ((1 << sh) >> 1), "rmsnorm x inv + half").astype(np.int64) >> sh
    acc = ref.int32(z * ref._int8(gamma, "gamma")[None, :], "rmsnorm z gamma")
    return ref.requantize(acc, tuple(mult))


def rotate(x, heads, cos_sin, halves):
    """int8 row x (heads * D,) with each head's pairs turned, saturated to int8."""
    x = ref._int8(x, "x").copy()
    D = len(x) // heads
    half = D // 2
    c, s = np.array(cos_sin[:half], dtype=np.int64), np.array(cos_sin[half:], dtype=np.int64)
    out = x.copy()
    for h in range(heads):
        i = np.arange(half)
        ia = h * D + (i if halves else 2 * i)
        ib = ia + (half if halves else 1)
        a, b = x[ia], x[ib]
        out[ia] = np.clip((a * c - b * s + 8192) >> 14, -128, 127)
        out[ib] = np.clip((a * s + b * c + 8192) >> 14, -128, 127)
    return out.astype(np.int8)


def linear(x, part, arrays, prefix):
    """A part's QDense on one int8 row: its int8 output."""
    W = np.asarray(arrays[prefix + "W"]).reshape(part["out"], part["in"])
    return ref.requantize(ref.matmul_xwt(np.asarray(x).reshape(1, -1), W), tuple(part["mult"]))[0]


def embedding_step(x, spec, arrays, prefix, cache, pos):
    """QEmbedding: row x (a token id) of W, int8."""
    return np.asarray(arrays[prefix + "W"]).reshape(spec["V"], spec["E"])[x]


def rmsnorm_step(x, spec, arrays, prefix, cache, pos):
    """QRMSNorm of the int8 row x."""
    return rmsnorm(x[None, :], arrays[prefix + "gamma"], spec["eps"], spec["mult"])[0]


def classifier_step(x, spec, arrays, prefix, cache, pos):
    """QClassifier: the int32 logits (V,) of the int8 row x; a tied one takes the W of the
    Embedding, a language model's layer 0."""
    W = arrays[("0." if spec["tied"] else prefix) + "W"]
    return ref.matmul_xwt(x[None, :], np.asarray(W).reshape(spec["V"], spec["E"]))[0]


def block_step(x, spec, arrays, prefix, cache, pos):
    """QDecoderBlock.step: the int8 row x at position pos, its key and value added to cache
    (keys, values: lists of int8 rows)."""
    a_, p = arrays, prefix
    parts = spec["parts"]
    H, H_kv, D = spec["H"], spec["H_kv"], spec["E"] // spec["H"]
    n1 = parts["attention_norm"]
    a = rmsnorm(x[None, :], a_[p + "attention_norm.gamma"], n1["eps"], n1["mult"])[0]
    q, k, v = (linear(a, parts[n], a_, p + n + ".") for n in ("wq", "wk", "wv"))
    angles = ROTARY.table(pos, ROTARY.frequencies(D, spec["theta"]))
    q = rotate(q, H, angles, spec["rope"] == "half")
    k = rotate(k, H_kv, angles, spec["rope"] == "half")
    cache[0].append(k)
    cache[1].append(v)
    K, V = np.array(cache[0]), np.array(cache[1])
    ctx = attend(q[None, :], K, V, 1, H, tuple(spec["score"]), tuple(spec["ctx"]),
                 kv_len=len(K), num_kv_heads=H_kv)["ctx"][0]
    o = linear(ctx, parts["wo"], a_, p + "wo.")
    h = qref.add(x, o, spec["adds"][0])
    n2 = parts["ffn_norm"]
    b = rmsnorm(h[None, :], a_[p + "ffn_norm.gamma"], n2["eps"], n2["mult"])[0]
    g = ref.lookup(linear(b, parts["w1"], a_, p + "w1."), a_[p + "silu"])
    u = linear(b, parts["w3"], a_, p + "w3.")
    m = ref.requantize(ref.int32(g.astype(np.int64) * u, "gate product"),
                       tuple(spec["gate"]))
    f = linear(m, parts["w2"], a_, p + "w2.")
    return qref.add(h, f, spec["adds"][1])
