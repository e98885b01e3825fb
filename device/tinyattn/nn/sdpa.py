"""scaled_dot_product_attention: the attention core as a function, ONNX Attention's semantics
(opset 23) in tinyattn's 2-D layout.

B sequences of S queries and S_kv keys; H query heads of size D, H_kv key/value heads (H_kv
divides H) with values of size Dv:

    q (B*S, H*D), k (B*S_kv, H_kv*D), v (B*S_kv, H_kv*Dv) -> out (B*S, H*Dv)

Query head h reads key/value head g = h // (H / H_kv). For each sequence b and head h:

    Z = scale * q_bh k_bg^T              (S, S_kv), scale = 1/sqrt(D) unless given
    Z = softcap * tanh(Z / softcap)      when softcap > 0: before the bias, as ONNX
    Z = Z + bias                         bias (S, S_kv), or block b*H + h of (B*H*S, S_kv)
    A = softmax of Z over allowed keys   0 at a masked key; a row with none is all 0 (ONNX)
    out_bh = A v_bg

Key j is allowed to query i of sequence b when mask[b, j] = 1 (padding, (B, S_kv)), keep[i, j]
= 1 ((S, S_kv), every sequence and head) and, causal, j <= i + causal_offset. The checks of
the arguments are sdpa_checks.py's, the backward sdpa_backward.py's, the public backward
sdpa_grad.py's (each imported on first use: a layer that is only run pays for none).
"""

import math

from ulab import numpy as np

MASKED_SCORE = -1e9  # the score a masked key gets before the softmax (its weight is then 0)


def scaled_dot_product_attention(q, k, v, seq_len, num_heads, kv_len=None, num_kv_heads=None,
                                 mask=None, keep=None, bias=None, causal=False,
                                 causal_offset=0, scale=None, softcap=0.0):
    """The attention of the module docstring: a new (B*S, H*Dv) array."""
    from .sdpa_checks import checked

    c = Call(*checked(q, k, v, seq_len, num_heads, kv_len, num_kv_heads, mask, keep, bias,
                      causal, causal_offset, scale, softcap))
    out = np.zeros((c.B * c.S, c.H * c.Dv))
    forward(c, q, k, v, out)
    return out


class Call:
    """The shapes and options of one call (checked by sdpa_checks.checked for a public call;
    a layer passes what it made), and its mask buffers, made once."""

    def __init__(self, B, S, S_kv, H, H_kv, D, Dv, mask=None, keep=None, bias=None,
                 causal=False, causal_offset=0, scale=None, softcap=0.0,
                 empty_rows_uniform=False):
        self.B, self.S, self.S_kv, self.H, self.H_kv, self.D, self.Dv = B, S, S_kv, H, H_kv, D, Dv
        self.group = H // H_kv
        self.mask, self.bias = mask, bias
        self.bias_blocks = bias is not None and bias.shape[0] != S
        self.scale = 1.0 / math.sqrt(D) if scale is None else scale
        self.softcap = softcap
        self.empty_rows_uniform = empty_rows_uniform
        self.allowed = None  # (keep, penalty) every sequence shares, when there is no mask
        self.base = None  # keep times the causal keep, (S, S_kv), when either is given
        if causal:
            self.base = causal_keep(S, S_kv, causal_offset)
            if keep is not None:
                self.base *= keep
        elif keep is not None:
            self.base = keep
        if mask is not None:
            self.allowed = (np.zeros((S, S_kv)), np.zeros((S, S_kv)))  # filled per sequence
        elif self.base is not None:
            self.allowed = (self.base, _penalty(self.base, np.zeros((S, S_kv))))

    def allowed_keys(self, b):
        """(keep, penalty) of sequence b: 0/1 (S, S_kv) and the score each key adds (0, or
        MASKED_SCORE where keep is 0); None when every key is allowed."""
        if self.mask is None:
            return self.allowed
        keep, penalty = self.allowed
        keep[:, :] = 1.0
        keep *= self.mask[b:b + 1, :]
        if self.base is not None:
            keep *= self.base
        return keep, _penalty(keep, penalty)

    def bias_block(self, b, h):
        """The bias of block (b, h), or None."""
        if not self.bias_blocks:
            return self.bias
        r0 = (b * self.H + h) * self.S
        return self.bias[r0:r0 + self.S, :]


def causal_keep(S, S_kv, offset=0):
    """(S, S_kv): 1 where key j <= query i + offset, else 0."""
    keep = np.zeros((S, S_kv))
    for i in range(S):
        last = min(S_kv, i + offset + 1)
        if last > 0:
            keep[i:i + 1, :last] = 1.0
    return keep


def weights(c, qb, kb, allowed, bias):
    """The attention weights A (S, S_kv) of one block: q_bh (S, D), k_bg (S_kv, D)."""
    z = np.dot(qb, kb.transpose())
    z *= c.scale
    if c.softcap:
        z *= 1.0 / c.softcap
        z = np.tanh(z)
        z *= c.softcap
    if bias is not None:
        z += bias
    if allowed is not None:
        z *= allowed[0]
        z += allowed[1]
    rows = z.shape[0]
    z -= np.max(z, axis=1).reshape((rows, 1))
    e = np.exp(z)
    if allowed is not None and not c.empty_rows_uniform:
        e *= allowed[0]  # a row with no allowed key is now 0; any other still has its top's 1
        e /= np.maximum(np.sum(e, axis=1), 1.0).reshape((rows, 1))
    else:
        e /= np.sum(e, axis=1).reshape((rows, 1))
    return e


def forward(c, q, k, v, out, cache=None, dropout=None):
    """out (B*S, H*Dv, zeros) += the attention of call c. cache (B*H*S, S_kv, zeros) or None
    receives the weights, block b*H + h at rows (b*H + h)*S...; dropout (next_keep, kept) or
    None: next_keep() the next block's 0/1 keep array, kept the factor of what it keeps."""
    S, S_kv, H, D, Dv, group = c.S, c.S_kv, c.H, c.D, c.Dv, c.group
    for b in range(c.B):
        allowed = c.allowed_keys(b)
        q0, k0 = b * S, b * S_kv
        for h in range(H):
            g = h // group
            A = weights(c, q[q0:q0 + S, h * D:(h + 1) * D], k[k0:k0 + S_kv, g * D:(g + 1) * D],
                        allowed, c.bias_block(b, h))
            if cache is not None:
                block = cache[(b * H + h) * S:(b * H + h + 1) * S, :]
                block += A  # the cache is zero there: A itself
            if dropout is not None:
                A *= dropout[0]()
                A *= dropout[1]
            part = out[q0:q0 + S, h * Dv:(h + 1) * Dv]
            part += np.dot(A, v[k0:k0 + S_kv, g * Dv:(g + 1) * Dv])
            A = None  # before the next block's weights are made


def _penalty(keep, out):
    """out = (keep - 1) * -MASKED_SCORE: 0 at an allowed key, MASKED_SCORE at another."""
    out[:, :] = 0.0
    out += keep
    out -= 1.0
    out *= -MASKED_SCORE
    return out
