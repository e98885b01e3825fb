"""Float64 NumPy reference of scaled_dot_product_attention (device nn/sdpa.py): ONNX Attention's
semantics (opset 23) in tinyattn's 2-D layout, forward and hand-written backward.

q (B*S, H*D), k (B*S_kv, H_kv*D), v (B*S_kv, H_kv*Dv) -> (B*S, H*Dv); query head h reads
key/value head h // (H / H_kv). Per sequence b and head h:

    Z = scale * q_bh k_bg^T;  Z = softcap * tanh(Z / softcap) (softcap > 0);  Z += bias
    A = softmax of Z over the allowed keys (0 elsewhere; a row with none: 0, ONNX's rule)
    out_bh = A v_bg

Allowed: mask[b, j] = 1, keep[i, j] = 1 and, causal, j <= i + causal_offset. Here the heads are
4-D arrays (B, H, S, D), each step one batched matmul.
"""

from types import SimpleNamespace

import numpy as np


def scaled_dot_product_attention(q, k, v, seq_len, num_heads, kv_len=None, num_kv_heads=None,
                                 mask=None, keep=None, bias=None, causal=False, causal_offset=0,
                                 scale=None, softcap=0.0):
    """The attention of the module docstring, (B*S, H*Dv)."""
    return sdpa_forward(q, k, v, seq_len, num_heads, kv_len, num_kv_heads, mask, keep, bias,
                        causal, causal_offset, scale, softcap)[0]


def sdpa_forward(q, k, v, seq_len, num_heads, kv_len=None, num_kv_heads=None, mask=None,
                 keep=None, bias=None, causal=False, causal_offset=0, scale=None, softcap=0.0,
                 drop=None, empty_rows="zeros"):
    """(out, cache) of the call; cache is what sdpa_backward needs (the weights A included),
    an object, not a dict: its arrays are views of the inputs, or what an attention layer's
    own cache holds too.

    drop: (B*H*S, S_kv) factors the weights are multiplied by before A v (an attention
    layer's dropout: keep / (1 - p)), or None. empty_rows: "zeros" (ONNX) or "uniform" (a row
    with no allowed key averages every value, as the Attention layer's -1e9 scores make it)."""
    q, k, v = (_matrix(a, n) for a, n in ((q, "q"), (k, "k"), (v, "v")))
    B, S, H, H_kv, S_kv, D, Dv = _sizes(q, k, v, seq_len, num_heads, kv_len, num_kv_heads)
    group = H // H_kv
    allowed = _allowed(mask, keep, causal, causal_offset, B, S, S_kv)  # (B, 1, S, S_kv)
    if bias is not None:
        bias = np.asarray(bias, dtype=np.float64)
        if bias.shape not in ((S, S_kv), (B * H * S, S_kv)):
            raise ValueError("bias must have shape (%d, %d) or (B*H*S, S_kv) = (%d, %d), got %s"
                             % (S, S_kv, B * H * S, S_kv, bias.shape))
    scale = 1.0 / np.sqrt(D) if scale is None else float(scale)
    Qh = heads(q, S, H)
    Kh = np.repeat(heads(k, S_kv, H_kv), group, axis=1)  # (B, H, S_kv, D): head h reads h//group
    Vh = np.repeat(heads(v, S_kv, H_kv), group, axis=1)

    Z = scale * (Qh @ Kh.swapaxes(-1, -2))
    T = None
    if softcap:
        T = np.tanh(Z / softcap)
        Z = softcap * T
    if bias is not None:
        Z = Z + bias.reshape(-1, H, S, S_kv) if bias.shape[0] != S or B * H == 1 else Z + bias
    A = _softmax(Z, allowed, empty_rows)
    factor = 1.0 if drop is None else np.asarray(drop, dtype=np.float64).reshape(B, H, S, S_kv)
    out = merge(A * factor @ Vh)
    cache = SimpleNamespace(Qh=Qh, Kh=Kh, Vh=Vh, A=A, T=T, factor=factor, allowed=allowed,
                            scale=scale, group=group,
                            bias_shape=None if bias is None else bias.shape)
    return out, cache


def sdpa_backward(grad_out, cache):
    """(dq, dk, dv, dbias) for the gradient grad_out (B*S, H*Dv) of sdpa_forward's output;
    dbias None without a bias, else the bias's shape."""
    Qh, Kh, Vh, A = cache.Qh, cache.Kh, cache.Vh, cache.A
    B, H, S, _ = Qh.shape
    S_kv = Kh.shape[2]
    dO = heads(_matrix(grad_out, "grad_out"), S, H)
    if dO.shape[:3] != (B, H, S) or dO.shape[3] != Vh.shape[3]:
        raise ValueError("grad_out must have the output's shape")
    factor = cache.factor
    dV = (A * factor).swapaxes(-1, -2) @ dO
    dA = (dO @ Vh.swapaxes(-1, -2)) * factor
    dZ = A * (dA - (dA * A).sum(axis=-1, keepdims=True))
    if cache.allowed is not None:
        dZ = np.where(cache.allowed, dZ, 0.0)  # a masked score is a constant
    dbias = None
    if cache.bias_shape is not None:
        dbias = dZ.sum(axis=(0, 1)) if cache.bias_shape[0] == S and B * H > 1 \
            else dZ.reshape(B * H * S, S_kv)
    if cache.T is not None:
        dZ = dZ * (1.0 - cache.T ** 2)
    dS = dZ * cache.scale
    dQ = dS @ Kh
    dK = dS.swapaxes(-1, -2) @ Qh
    group = cache.group
    return (merge(dQ), merge(_group_sum(dK, group)), merge(_group_sum(dV, group)), dbias)


def heads(M, L, H):
    """(B*L, H*D) -> (B, H, L, D): head h of sequence b is M[b*L:(b+1)*L, h*D:(h+1)*D]."""
    BL, E = M.shape
    return M.reshape(BL // L, L, H, E // H).transpose(0, 2, 1, 3)


def merge(Mh):
    """(B, H, L, D) -> (B*L, H*D): the inverse of heads."""
    B, H, L, D = Mh.shape
    return Mh.transpose(0, 2, 1, 3).reshape(B * L, H * D)


def causal_keep(S, S_kv, offset=0):
    """(S, S_kv) bool: key j <= query i + offset."""
    return np.arange(S_kv)[None, :] <= np.arange(S)[:, None] + offset


def _group_sum(M, group):
    """(B, H, L, D) -> (B, H/group, L, D): each key/value head's sum over the query heads
    that read it."""
    B, H, L, D = M.shape
    return M.reshape(B, H // group, group, L, D).sum(axis=2)


def _softmax(Z, allowed, empty_rows):
    """Softmax over the last axis of the allowed scores, 0 at the others; a row with no
    allowed key: zeros, or 1/S_kv everywhere (empty_rows="uniform")."""
    if allowed is None:
        e = np.exp(Z - Z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)
    allowed = np.broadcast_to(allowed, Z.shape)
    top = np.where(allowed, Z, -np.inf).max(axis=-1, keepdims=True)
    e = np.where(allowed, np.exp(Z - np.where(np.isfinite(top), top, 0.0)), 0.0)
    total = e.sum(axis=-1, keepdims=True)
    A = e / np.where(total > 0, total, 1.0)
    if empty_rows == "uniform":
        A = np.where(total > 0, A, 1.0 / Z.shape[-1])
    return A


def _allowed(mask, keep, causal, offset, B, S, S_kv):
    """(B, 1, S, S_kv) bool, True where a key is allowed; None when every one is."""
    if mask is None and keep is None and not causal:
        return None
    allowed = np.ones((B, 1, S, S_kv), dtype=bool)
    if mask is not None:
        allowed &= _zero_one(mask, "mask", (B, S_kv))[:, None, None, :]
    if keep is not None:
        allowed &= _zero_one(keep, "keep", (S, S_kv))
    if causal:
        allowed &= causal_keep(S, S_kv, int(offset))
    return allowed


def _zero_one(a, name, shape):
    a = np.asarray(a, dtype=np.float64)
    if a.shape != shape:
        raise ValueError("%s must have shape %s, got %s" % (name, shape, a.shape))
    if not np.all((a == 0) | (a == 1)):
        raise ValueError("%s must hold only 0 and 1" % name)
    return a == 1


def _sizes(q, k, v, S, H, S_kv, H_kv):
    """(B, S, H, H_kv, S_kv, D, Dv), checked."""
    if S < 1 or q.shape[0] % S:
        raise ValueError("q has %d rows, not a multiple of seq_len %r" % (q.shape[0], S))
    B = q.shape[0] // S
    H_kv = H if H_kv is None else H_kv
    if H < 1 or H_kv < 1 or H % H_kv or q.shape[1] % H or k.shape[1] % H_kv or v.shape[1] % H_kv:
        raise ValueError("heads %d/%d do not split q %s, k %s, v %s"
                         % (H, H_kv, q.shape, k.shape, v.shape))
    D = q.shape[1] // H
    if k.shape[1] // H_kv != D:
        raise ValueError("k's heads have %d columns, q's %d" % (k.shape[1] // H_kv, D))
    S_kv = k.shape[0] // B if S_kv is None else S_kv
    if k.shape[0] != B * S_kv or v.shape[0] != k.shape[0]:
        raise ValueError("k and v must have B*S_kv = %d*%d rows, got %d and %d"
                         % (B, S_kv, k.shape[0], v.shape[0]))
    return B, S, H, H_kv, S_kv, D, v.shape[1] // H_kv


def _matrix(a, name):
    a = np.asarray(a, dtype=np.float64)
    if a.ndim != 2:
        raise ValueError("%s must be 2-D (rows = tokens), got shape %s" % (name, a.shape))
    return a
