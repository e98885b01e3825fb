"""Float64 NumPy reference of the Attention layer: forward and hand-written backward, the
projections around the reference of scaled_dot_product_attention (sdpa.py).

Layout is the device's: a batch of B sequences of S tokens is a 2-D array (B*S, E), one token a
row; head h is the column slice h*D:(h+1)*D with D = E/H; with num_kv_heads H_kv, K and V are
(B*S_kv, H_kv*D) and query head h reads their head h // (H / H_kv). Block b*H + h of the
weights is rows (b*H + h)*S ... of A_cache.
"""

import numpy as np

from . import int8_attend
from ..device_modules import device_module
from .kinds import declare
from .sdpa import sdpa_backward, sdpa_forward

attention_sources = device_module("nn/sources").attention_sources
"""(key source, value source, roles) of a call: the device's own rule (nn/sources.py)."""

_WEIGHTS = ("Wq", "Wk", "Wv", "Wo")
_BIASES = ("bq", "bk", "bv", "bo")
ATTENTION_PARAMS = _WEIGHTS + _BIASES
TORCH = {"in_proj_weight": ["Wq", "Wk", "Wv"], "in_proj_bias": ["bq", "bk", "bv"],
         "out_proj.weight": ["Wo"], "out_proj.bias": ["bo"]}
"""nn.MultiheadAttention's names: in_proj_weight (3E, E) = [Wq; Wk; Wv], ..."""


def padding_mask(lengths, seq_len):
    """Return a (B, seq_len) float mask: 1.0 at positions < lengths[b], 0.0 after."""
    lengths = np.asarray(lengths)
    if lengths.ndim != 1:
        raise ValueError("lengths must be 1-D (one length per sequence), got shape %s" % (lengths.shape,))
    if np.any(lengths < 0) or np.any(lengths > seq_len):
        raise ValueError("lengths must lie in 0..%d (seq_len), got %s" % (seq_len, lengths.tolist()))
    return (np.arange(seq_len)[None, :] < lengths[:, None]).astype(np.float64)


def attention_forward(x, p, num_heads, seq_len, mask=None, causal=False, kv=None, kv_len=None,
                      keep=None, dropout=0.0, key=None, value=None, num_kv_heads=None):
    """Multi-head attention forward pass; return (y, cache).

    key, value: (B*S_kv, E) each, PyTorch's key and value (value defaults to key); kv= is
    key = value = kv. Which distinct inputs there are is nn/sources.py's rule (by identity).

    x: (B*S, E) queries (and keys/values unless kv is given). p: Wq, Wo (E, E), Wk, Wv
    (E_kv, E) (E_kv = num_kv_heads * E/H, E without it) and bq, bk, bv, bo or None. mask:
    (B, S_kv) of 0/1, 0 = padding key. causal: query i sees keys 0..i. kv: (B*S_kv, E)
    key/value source for cross-attention; kv_len defaults to its rows/B.
    keep: (B*H*S, S_kv) of 0/1, rows block by block; the context then uses A * keep / (1 - dropout).
    Without keep no dropout is applied (dropout only scales keep). A row with every key masked
    averages every value (the -1e9 scores' uniform softmax), as the device layer.
    """
    x = _matrix(x, "x")
    E = x.shape[1]
    _check_sizes(x, E, num_heads, seq_len)
    H_kv = num_heads if num_kv_heads is None else num_kv_heads
    if H_kv < 1 or num_heads % H_kv:
        raise ValueError("num_kv_heads %r does not divide num_heads %d" % (num_kv_heads, num_heads))
    W = _check_params(p, E, E // num_heads * H_kv)
    H, S = num_heads, seq_len
    B = x.shape[0] // S
    key, value, roles = attention_sources(x, kv, key, value)
    if roles == (0, 0):
        if kv_len is not None and kv_len != S:
            raise ValueError("kv_len=%r without kv: self-attention uses kv_len = seq_len = %d" % (kv_len, S))
        src_k = src_v = x
        S_kv = S
    else:
        src_k = x if roles[0] == 0 else _matrix(key, "key")
        src_v = x if roles[1] == 0 else _matrix(value, "value")
        S_kv = _check_kv(src_k, E, B, kv_len)
        if src_v.shape != src_k.shape:
            raise ValueError("value must have the key's shape %s, got %s" % (src_k.shape, src_v.shape))
    if mask is not None:
        mask = np.asarray(mask, dtype=np.float64)
        if mask.shape != (B, S_kv):
            raise ValueError("mask must have shape (B, S_kv) = (%d, %d), got %s" % (B, S_kv, mask.shape))
        if not np.all((mask == 0) | (mask == 1)):
            raise ValueError("mask must hold only 0 (padding key) and 1 (real key)")
    if not 0.0 <= dropout < 1.0:
        raise ValueError("dropout must be in [0, 1), got %r" % (dropout,))
    if keep is not None:
        keep = np.asarray(keep, dtype=np.float64)
        if keep.shape != (B * H * S, S_kv):
            raise ValueError("keep must have shape (B*H*S, S_kv) = (%d, %d), got %s"
                             % (B * H * S, S_kv, keep.shape))

    Q = _linear(x, W["Wq"], W["bq"])
    K = _linear(src_k, W["Wk"], W["bk"])
    V = _linear(src_v, W["Wv"], W["bv"])
    drop = None if keep is None else keep / (1.0 - dropout)
    ctx, core = sdpa_forward(Q, K, V, S, H, S_kv, H_kv, mask=mask, causal=causal, drop=drop,
                             empty_rows="uniform")
    y = _linear(ctx, W["Wo"], W["bo"])

    cache = {
        "x_cache": x, "key_cache": src_k, "value_cache": src_v, "roles": roles,
        "Q_cache": Q, "K_cache": K, "V_cache": V, "core": core,
        "A_cache": core.A.reshape(B * H * S, S_kv), "ctx_cache": ctx,
        "mask": mask, "causal": causal, "keep": keep, "dropout": dropout,
        "num_heads": H, "num_kv_heads": H_kv, "seq_len": S, "kv_len": S_kv,
    }
    return y, cache


def attention_backward(grad_out, p, cache):
    """Backward pass for loss gradient grad_out (B*S, E); return a dict of gradients.

    Keys: dx, dkv (keys and values from one input that is not x), dkey and dvalue (a key,
    a value that is neither x nor the other), each None when that input is not there (its
    gradient is in dx or dkv; input_grads lists the present ones), dWq, dWk, dWv, dWo, and
    dbq, dbk, dbv, dbo (None for an absent bias).
    """
    x, ctx = cache["x_cache"], cache["ctx_cache"]
    src_k, src_v, roles = cache["key_cache"], cache["value_cache"], cache["roles"]
    E = x.shape[1]
    W = _check_params(p, E, cache["K_cache"].shape[1])
    grad_out = _matrix(grad_out, "grad_out")
    if grad_out.shape != ctx.shape:
        raise ValueError("grad_out must have the output's shape %s, got %s" % (ctx.shape, grad_out.shape))

    # Wo: y = ctx @ Wo.T + bo
    g = {"dWo": grad_out.T @ ctx, "dbo": _bias_grad(grad_out, W["bo"])}
    dQ, dK, dV, _ = sdpa_backward(grad_out @ W["Wo"], cache["core"])

    # Wq, Wk, Wv: Proj = input @ W.T + b
    for name, dP, inp in (("q", dQ, x), ("k", dK, src_k), ("v", dV, src_v)):
        g["dW" + name] = dP.T @ inp
        g["db" + name] = _bias_grad(dP, W["b" + name])
    dinputs = [dQ @ W["Wq"]]
    for role, d in ((roles[0], dK @ W["Wk"]), (roles[1], dV @ W["Wv"])):
        if role < len(dinputs):
            dinputs[role] = dinputs[role] + d
        else:
            dinputs.append(d)
    g["dx"] = dinputs[0]
    g["dkv"] = dinputs[1] if roles == (1, 1) else None  # keys and values from one input
    g["dkey"] = dinputs[1] if roles == (1, 2) else None  # a key that is neither x nor value
    g["dvalue"] = dinputs[-1] if roles[1] == len(dinputs) - 1 != roles[0] else None
    return g


def input_grads(g):
    """The gradients of a call's distinct inputs, in order: [dx], [dx, dkv], [dx, dkey,
    dvalue] or [dx, dvalue] (a key that is x), as the device's backward returns them."""
    return [d for d in (g["dx"], g["dkv"], g["dkey"], g["dvalue"]) if d is not None]


def _matrix(a, name):
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError("%s must be 2-D (rows = tokens), got shape %s" % (name, a.shape))
    return a


def _check_params(p, E, E_kv):
    """The parameters as float64: Wq, Wo (E, E), Wk, Wv (E_kv, E), biases of those rows."""
    W = {}
    for name in _WEIGHTS:
        rows, what = (E_kv, "E_kv") if name in ("Wk", "Wv") else (E, "E")
        if name not in p:
            raise ValueError("params lack %s" % name)
        W[name] = np.asarray(p[name], dtype=np.float64)
        if W[name].shape != (rows, E):
            raise ValueError("%s must have shape (%s, E) = (%d, %d), got %s"
                             % (name, what, rows, E, W[name].shape))
    for name in _BIASES:
        rows, what = (E_kv, "E_kv") if name in ("bk", "bv") else (E, "E")
        b = p.get(name)
        W[name] = None if b is None else np.asarray(b, dtype=np.float64)
        if b is not None and W[name].shape != (rows,):
            raise ValueError("%s must have shape (%s,) = (%d,), got %s"
                             % (name, what, rows, W[name].shape))
    return W


def _check_sizes(x, E, num_heads, seq_len):
    if num_heads < 1:
        raise ValueError("num_heads must be at least 1, got %r" % (num_heads,))
    if E % num_heads != 0:
        raise ValueError("embed_dim %d is not divisible by num_heads %d" % (E, num_heads))
    if seq_len < 1:
        raise ValueError("seq_len must be at least 1, got %r" % (seq_len,))
    if x.shape[0] % seq_len != 0:
        raise ValueError("x has %d rows, not a multiple of seq_len %d" % (x.shape[0], seq_len))


def _check_kv(kv, E, B, kv_len):
    if kv.shape[1] != E:
        raise ValueError("kv has width %d, expected embed_dim %d" % (kv.shape[1], E))
    if kv_len is None:
        if kv.shape[0] % B != 0:
            raise ValueError("kv has %d rows, not a multiple of the batch size %d" % (kv.shape[0], B))
        kv_len = kv.shape[0] // B
    if kv_len < 1 or kv.shape[0] != B * kv_len:
        raise ValueError("kv must have B*kv_len = %d*%d rows, got %d" % (B, kv_len, kv.shape[0]))
    return kv_len


def _linear(a, W, b):
    return a @ W.T if b is None else a @ W.T + b


def _bias_grad(dP, b):
    return None if b is None else dP.sum(axis=0)


# ---- the SelfAttention kind (reference/kinds.py) ----------------------------------------------
def _attention_backward(spec, p, cache, grad_out):
    g = attention_backward(grad_out, p, cache)
    return g["dx"], {n: g["d" + n] for n in ATTENTION_PARAMS if g["d" + n] is not None}


def _attention_out_scale(q):
    """QAttention.out_scale(): y's, or its accumulator's s_ctx s_wo (float32) when it keeps it."""
    from ..quantize.numbers import times

    s = q["scales"]
    return times(s["ctx"], s["wo"]) if q["mults"]["out"] is None else s["y"]


declare("SelfAttention",
        lambda spec, p, x, mask=None: attention_forward(
            x, p, spec[2], spec[3], mask=mask, num_kv_heads=spec[7] if len(spec) > 7 else None),
        _attention_backward, torch=TORCH,
        int8=(int8_attend.attention_layer, int8_attend.attention_run),
        in_scale=lambda q: q["scales"]["x"], out_scale=_attention_out_scale,
        in_width=lambda q, after: q["E"], in_rows=lambda q: q["seq_len"],
        quantize="kinds.quantize_attention", calibrate="calibrate.attention_stats")
