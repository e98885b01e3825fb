"""NumPy reference of the int8 attention core with grouped-query heads, an additive bias and
causal offsets (device/tinyattn/int8/kernels_attend.py), and of the int8 attention layer
(int8/attention.py) built on it, bit for bit.

The float semantics are ONNX's Attention (opset 23) in tinyattn's 2-D layout: Q (B*S, H*D),
K and V (B*T, H_kv*D) (T keys a sequence), query head h reads key/value head h // (H / H_kv);
scores q.k scale + bias; query i sees key j iff j <= i + offset when causal; a row with every
key masked gives zeros. In integers: scores are int32 in units of s_q s_k (times `scale` they
are the float scores), the bias is int32 in the same units, saturated to +-BIAS_LIMIT
(`quantize_bias`: a -inf bias is a masked key for every practical score multiplier), the
softmax and P V are int8.py's.
"""

import numpy as np

from . import int8 as ref

BIAS_LIMIT = 2 ** 29 - 1
"""|bias| in score units: with |q.k| <= D 2^14 <= 2^29 (D <= 32768) every biased score and
every top - score fits int32."""


def quantize_bias(bias, unit):
    """A float bias in score units (unit = s_q s_k scale: one score unit in the float scores'
    units) as int32: round half up, saturated to +-BIAS_LIMIT (infinities too; NaN refused)."""
    b = np.asarray(bias, dtype=np.float64) / unit
    if np.isnan(b).any():
        raise ValueError("bias has NaN")
    return np.clip(np.floor(np.clip(b, -2.0 ** 31, 2.0 ** 31) + 0.5), -BIAS_LIMIT,
                   BIAS_LIMIT).astype(np.int64)


def allowed(S, T, keep=None, causal=False, offset=0):
    """(S, T) bool: key j allowed for query i: keep[j] != 0, and j <= i + offset when causal."""
    ok = np.ones((S, T), dtype=bool)
    if keep is not None:
        ok &= (np.asarray(keep) != 0)[None, :]
    if causal:
        ok &= np.arange(T)[None, :] <= np.arange(S)[:, None] + offset
    return ok


def softmax(scores, mult, ok, uniform=False):
    """Row-wise integer softmax (int8.softmax's steps) of int32 scores over the allowed keys
    ok; a row with none gives zeros (uniform: round(2^15 / T) each, the 2017 layer's)."""
    scores = ref.int32(scores, "scores").astype(np.int64)
    assert scores.shape[1] < 65536, "softmax row sum needs T < 2^16"
    top = np.where(ok, scores, np.iinfo(np.int64).min).max(axis=1, keepdims=True)
    gap = ref.int32(np.where(ok, top - scores, 0), "softmax top - score")
    idx = ref.apply_multiplier(np.minimum(gap, mult[3]), mult, "softmax index")
    e = np.where(ok, ref.exp_q15(idx), 0)
    empty = ~ok.any(axis=1)
    e[empty] = ref.PROB_ONE if uniform else 0
    total = ref.int32(e.sum(axis=1, keepdims=True), "softmax sum").astype(np.int64)
    inv = ref.int32((1 << 30) + (total >> 1), "softmax 2^30 + sum/2") // np.maximum(total, 1)
    probs = ref.int32(e * inv + 16384, "softmax e * inv").astype(np.int64) >> 15
    return probs.astype(np.uint16)


def attend(Q, K, V, seq_len, num_heads, mult_score, mult_ctx, kv_len=None, num_kv_heads=None,
           keep=None, bias=None, causal=False, causal_offset=0, uniform=False):
    """The int8 attention core: {"scores" (B*H*S, T) int32 with the bias, "probs" (B*H*S, T)
    uint16 Q0.15, "ctx" (B*S, H*D) int8}.

    Q int8 (B*S, H*D); K, V int8 (B*T, H_kv*D); keep (B*T) 0/1 padding keys or None; bias
    int32 score units, (S, T) for every sequence and head or (B*H*S, T) one block per
    (sequence, head), or None; mult_score: softmax index units per score unit; mult_ctx: P V
    (V's units / 2^15) to the context's int8.
    """
    S, H = seq_len, num_heads
    T = S if kv_len is None else kv_len
    H_kv = H if num_kv_heads is None else num_kv_heads
    Q, K, V = (ref._int8(a, n) for a, n in ((Q, "Q"), (K, "K"), (V, "V")))
    B, D = Q.shape[0] // S, Q.shape[1] // H
    assert Q.shape == (B * S, H * D) and K.shape == V.shape == (B * T, H_kv * D)
    assert H % H_kv == 0, "H_kv must divide H"
    group = H // H_kv
    if bias is not None:
        bias = np.asarray(bias, dtype=np.int64)
        assert np.abs(bias).max(initial=0) <= BIAS_LIMIT
        bias = np.tile(bias, (B * H, 1)) if bias.shape == (S, T) else bias
        assert bias.shape == (B * H * S, T), bias.shape
    scores = np.zeros((B * H * S, T), dtype=np.int64)
    probs = np.zeros((B * H * S, T), dtype=np.uint16)
    ctx = np.zeros((B * S, H * D), dtype=np.int8)
    for b in range(B):
        q_rows, k_rows = slice(b * S, (b + 1) * S), slice(b * T, (b + 1) * T)
        ok = allowed(S, T, None if keep is None else np.asarray(keep)[k_rows], causal,
                     causal_offset)
        for h in range(H):
            cols = slice(h * D, (h + 1) * D)
            kv = slice((h // group) * D, (h // group + 1) * D)
            block = slice((b * H + h) * S, (b * H + h + 1) * S)
            s = ref.matmul_xwt(Q[q_rows, cols], K[k_rows, kv]).astype(np.int64)
            if bias is not None:
                s = s + bias[block]
            scores[block] = ref.int32(s, "biased score")
            probs[block] = softmax(scores[block], mult_score, ok, uniform)
            ctx[q_rows, cols] = ref.requantize(ref.probs_v(probs[block], V[k_rows, kv]),
                                               mult_ctx)
    return {"scores": ref.int32(scores, "scores"), "probs": probs, "ctx": ctx}


# ---- the int8 attention layer (SelfAttention): projections, the core, the output --------
def attention(x, layer, seq_len, mask=None, causal=False):
    """Quantized self-attention of int8 x (B*S, E); returns a dict of every intermediate.

    layer: E, H, H_kv (absent: H), Wq, Wo int8 (E, E), Wk, Wv (H_kv D, E), bq..bo int32 or
    None, mult_q, mult_k, mult_v (projection requantize), mult_score (softmax index units per
    score unit), mult_ctx (P V to int8), mult_out (output to int8, or None to keep int32).
    The core is attend's with the 2017 layer's uniform rows.
    """
    out = {}
    for name in "qkv":
        out[name.upper()] = ref.requantize(
            ref.matmul_xwt(x, layer["W" + name], layer.get("b" + name)), layer["mult_" + name])
    core = attend(out["Q"], out["K"], out["V"], seq_len, layer["H"], layer["mult_score"],
                  layer["mult_ctx"], num_kv_heads=layer.get("H_kv") or layer["H"],
                  keep=None if mask is None else np.asarray(mask).ravel(), causal=causal,
                  uniform=True)
    out["scores"], out["probs"], out["ctx"] = core["scores"], core["probs"], core["ctx"]
    out["acc"], out["y"] = ref.dense(out["ctx"], {"W": layer["Wo"], "b": layer.get("bo"),
                                                "mult": layer.get("mult_out")})
    return out


def attention_layer(spec, arrays, p):
    """SelfAttention: {"E", "H", "H_kv", "seq_len", "Wq".."bo", "mult_<name>"}."""
    E, H = spec["E"], spec["H"]
    H_kv = spec.get("H_kv") or H
    layer = {"kind": spec["kind"], "E": E, "H": H, "H_kv": H_kv, "seq_len": spec["seq_len"]}
    for n in "qkvo":
        rows = H_kv * (E // H) if n in "kv" else E
        layer["W" + n] = np.asarray(arrays[p + "W" + n]).reshape(rows, E)
        layer["b" + n] = ref._optional(arrays, p + "b" + n)
    for n, value in spec["mults"].items():
        layer["mult_" + n] = ref._mult(value)
    return layer


def attention_run(x, layer, mask=None):
    res = attention(x, layer, layer["seq_len"], mask=mask)
    return res["acc"] if res["y"] is None else res["y"]
