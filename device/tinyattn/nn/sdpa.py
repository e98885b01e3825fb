"""scaled_dot_product_attention: the attention core as a function, ONNX Attention's semantics
(opset 23) in tinyattn's 2-D layout, and its backward.

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
= 1 ((S, S_kv), every sequence and head) and, causal, j <= i + causal_offset.
"""

import math

from ulab import numpy as np

from .checks import require_float_rows, require_rows, finite, all_finite
from .arguments import is_int, is_number

MASKED_SCORE = -1e9  # the score a masked key gets before the softmax (its weight is then 0)
BLOCK_BYTES = 2048  # the largest temporary a row-wise product makes (a block of rows)


def scaled_dot_product_attention(q, k, v, seq_len, num_heads, kv_len=None, num_kv_heads=None,
                                 mask=None, keep=None, bias=None, causal=False,
                                 causal_offset=0, scale=None, softcap=0.0):
    """The attention of the module docstring: a new (B*S, H*Dv) array."""
    c = Call(q, k, v, seq_len, num_heads, kv_len, num_kv_heads, mask, keep, bias, causal,
             causal_offset, scale, softcap)
    out = np.zeros((c.B * c.S, c.H * c.Dv))
    forward(c, q, k, v, out)
    return out


def scaled_dot_product_attention_backward(grad_out, q, k, v, seq_len, num_heads, kv_len=None,
                                          num_kv_heads=None, mask=None, keep=None, bias=None,
                                          causal=False, causal_offset=0, scale=None,
                                          softcap=0.0):
    """(dq, dk, dv, dbias) of the call with the same arguments for the gradient grad_out
    (B*S, H*Dv) of its output; dbias is None without a bias. The weights are recomputed."""
    c = Call(q, k, v, seq_len, num_heads, kv_len, num_kv_heads, mask, keep, bias, causal,
             causal_offset, scale, softcap)
    shape = getattr(grad_out, "shape", None)
    if shape != (c.B * c.S, c.H * c.Dv):
        raise ValueError("grad_out must have the output's shape (%d, %d), got %r"
                         % (c.B * c.S, c.H * c.Dv, shape))
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    dbias = None if bias is None else np.zeros(bias.shape)
    backward(c, grad_out, q, k, v, dq, dk, dv, dbias)
    return dq, dk, dv, dbias


class Call:
    """The checked shapes and options of one call, and its mask buffers (made once)."""

    def __init__(self, q, k, v, seq_len, num_heads, kv_len=None, num_kv_heads=None, mask=None,
                 keep=None, bias=None, causal=False, causal_offset=0, scale=None, softcap=0.0,
                 empty_rows_uniform=False):
        rows, width = require_float_rows("q", q)
        k_rows, k_width = require_float_rows("k", k)
        v_rows, v_width = require_float_rows("v", v)
        self.B = B = require_rows("q", rows, seq_len)
        self.S = S = seq_len
        H = _heads("num_heads", num_heads, "q", width)
        if num_kv_heads is None:
            num_kv_heads = H
        H_kv = _heads("num_kv_heads", num_kv_heads, "k", k_width)
        if H % H_kv:
            raise ValueError("num_kv_heads=%d does not divide num_heads=%d" % (H_kv, H))
        if v_width % H_kv:
            raise ValueError("v has %d columns, not a multiple of num_kv_heads=%d"
                             % (v_width, H_kv))
        self.H, self.H_kv, self.group = H, H_kv, H // H_kv
        self.D, self.Dv = width // H, v_width // H_kv
        if k_width // H_kv != self.D:
            raise ValueError("k's heads have %d columns, q's %d: they must be equal"
                             % (k_width // H_kv, self.D))
        if kv_len is None:
            if k_rows % B:
                raise ValueError("k has %d rows: not one sequence of keys for each of the "
                                 "%d of q" % (k_rows, B))
            kv_len = k_rows // B
        if not is_int(kv_len) or kv_len < 1 or k_rows != B * kv_len:
            raise ValueError("k must have B*kv_len = %d*%r rows, got %d" % (B, kv_len, k_rows))
        if v_rows != k_rows:
            raise ValueError("v must have k's %d rows, got %d" % (k_rows, v_rows))
        self.S_kv = S_kv = kv_len
        self.mask = _zero_one("mask", mask, (B, S_kv), "(batch, keys)")
        keep = _zero_one("keep", keep, (S, S_kv), "(queries, keys)")
        if bias is not None:
            shape = getattr(bias, "shape", None)
            if shape != (S, S_kv) and shape != (B * H * S, S_kv):
                raise ValueError("bias must have shape (%d, %d) or (B*H*S, S_kv) = (%d, %d), "
                                 "got %r" % (S, S_kv, B * H * S, S_kv, shape))
            if not all_finite(bias):
                raise ValueError("bias must be finite (mask keys with mask= or keep=)")
        self.bias = bias
        self.bias_blocks = bias is not None and bias.shape[0] != S
        if not isinstance(causal, bool):
            raise ValueError("causal must be True or False, got %r" % (causal,))
        if not is_int(causal_offset):
            raise ValueError("causal_offset must be an int, got %r" % (causal_offset,))
        if scale is None:
            scale = 1.0 / math.sqrt(self.D)
        elif not is_number(scale) or not finite(scale):
            raise ValueError("scale must be a finite number, got %r" % (scale,))
        if not is_number(softcap) or not finite(softcap) or softcap < 0:
            raise ValueError("softcap must be a finite number >= 0, got %r" % (softcap,))
        self.scale, self.softcap = scale, softcap
        self.empty_rows_uniform = empty_rows_uniform
        self.allowed = None  # (keep, penalty) every sequence shares, when there is no mask
        self.base = None  # keep times the causal keep, (S, S_kv), when either is given
        if causal:
            self.base = causal_keep(S, S_kv, causal_offset)
            if keep is not None:
                self.base *= keep
        elif keep is not None:
            self.base = keep
        if self.mask is not None:
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


def backward(c, grad_out, q, k, v, dq, dk, dv, dbias=None, cache=None, dropout=None):
    """dq, dk, dv (zeros, or q, k, v themselves: each block is written after its last read)
    and dbias (zeros, or None) of call c for grad_out (B*S, H*Dv); cache and dropout as
    forward's (the weights are recomputed without a cache, the same keeps drawn again)."""
    S, S_kv, H, D, Dv, group = c.S, c.S_kv, c.H, c.D, c.Dv, c.group
    dk_g, dv_g = np.zeros((S_kv, D)), np.zeros((S_kv, Dv))  # one key/value head's sums
    for b in range(c.B):
        allowed = c.allowed_keys(b)
        q0, k0 = b * S, b * S_kv
        for g in range(c.H_kv):
            kb = k[k0:k0 + S_kv, g * D:(g + 1) * D]
            vb = v[k0:k0 + S_kv, g * Dv:(g + 1) * Dv]
            dk_g[:, :] = 0.0
            dv_g[:, :] = 0.0
            for h in range(g * group, (g + 1) * group):
                qb = q[q0:q0 + S, h * D:(h + 1) * D]
                dc = grad_out[q0:q0 + S, h * Dv:(h + 1) * Dv]
                if cache is not None:
                    A = cache[(b * H + h) * S:(b * H + h + 1) * S, :]
                else:
                    A = weights(c, qb, kb, allowed, c.bias_block(b, h))
                dA = np.dot(dc, vb.transpose())
                if dropout is not None:
                    keep = dropout[0]()
                    dropped = A * keep
                    dropped *= dropout[1]
                    dv_g += np.dot(dropped.transpose(), dc)
                    dropped = None
                    dA *= keep
                    dA *= dropout[1]
                else:
                    dv_g += np.dot(A.transpose(), dc)
                # dZ = A * (dA - rowsum(dA * A)): the softmax's; 0 at a masked key
                dA -= row_dots(dA, A)
                dA *= A
                if allowed is not None:
                    dA *= allowed[0]  # (a uniform row with no allowed key passes nothing)
                if dbias is not None:
                    if c.bias_blocks:
                        r0 = (b * H + h) * S
                        part = dbias[r0:r0 + S, :]
                        part += dA
                    else:
                        dbias += dA
                if c.softcap:  # d softcap*tanh(s/softcap) / ds = 1 - tanh^2
                    t = np.dot(qb, kb.transpose())
                    t *= c.scale / c.softcap
                    t = np.tanh(t)
                    t *= t
                    t *= -1.0
                    t += 1.0
                    dA *= t
                    t = None
                dA *= c.scale
                dk_g += np.dot(dA.transpose(), qb)
                dq[q0:q0 + S, h * D:(h + 1) * D] = np.dot(dA, kb)
                A = dA = None
            dk[k0:k0 + S_kv, g * D:(g + 1) * D] = dk_g
            dv[k0:k0 + S_kv, g * Dv:(g + 1) * Dv] = dv_g


def _heads(name, value, array_name, width):
    """A head count that splits `width` columns evenly."""
    if not is_int(value) or value < 1:
        raise ValueError("%s must be an int >= 1, got %r" % (name, value))
    if width % value:
        raise ValueError("%s has %d columns, not a multiple of %s=%d"
                         % (array_name, width, name, value))
    return value


def _zero_one(name, a, shape, what):
    """a, checked: None, or an array of `shape` holding only 0 and 1."""
    if a is None:
        return None
    got = getattr(a, "shape", None)
    if got != shape:
        raise ValueError("%s must have shape (%d, %d) %s, got %r" % (name, shape[0], shape[1],
                                                                      what, got))
    t = a * (a - 1.0)
    if float(np.max(np.maximum(t, -t))) != 0.0:
        raise ValueError("%s must hold only 0 and 1" % name)
    return a


def _penalty(keep, out):
    """out = (keep - 1) * -MASKED_SCORE: 0 at an allowed key, MASKED_SCORE at another."""
    out[:, :] = 0.0
    out += keep
    out -= 1.0
    out *= -MASKED_SCORE
    return out


def row_blocks(rows, cols):
    """(r0, r1) ranges over `rows` rows of `cols` floats, each block BLOCK_BYTES at most."""
    step = max(1, BLOCK_BYTES // (4 * cols))
    for r0 in range(0, rows, step):
        yield r0, min(r0 + step, rows)


def row_dots(a, b):
    """The (rows, 1) column of np.sum(a * b, axis=1), a block of rows at a time (no
    temporary as large as a)."""
    rows, cols = a.shape
    out = np.zeros((rows, 1))
    for r0, r1 in row_blocks(rows, cols):
        part = out[r0:r1, :]
        part += np.sum(a[r0:r1, :] * b[r0:r1, :], axis=1).reshape((r1 - r0, 1))
    return out
