"""The backward of scaled_dot_product_attention's core (nn/sdpa.py): the gradients of q, k, v
and the bias, a key/value head's query heads at a time. Imported by training only, so that a
model that is only run pays none of its heap (the public function is sdpa_grad.py's).

For block (b, h) with weights A and dO = grad_out_bh (dropout's keep and factor applied to A
and to dA as forward applied them):

    dv_bg += A^T dO;  dA = dO v_bg^T;  dZ = A * (dA - rowsum(dA * A))   (0 at a masked key)
    dbias += dZ;  dZ *= 1 - tanh^2 (softcap);  dS = scale * dZ
    dq_bh = dS k_bg;  dk_bg += dS^T q_bh
"""

from ulab import numpy as np

from .layer import row_blocks
from .sdpa import weights


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


def row_dots(a, b):
    """The (rows, 1) column of np.sum(a * b, axis=1), a block of rows at a time (no
    temporary as large as a)."""
    rows, cols = a.shape
    out = np.zeros((rows, 1))
    for r0, r1 in row_blocks(rows, cols):
        part = out[r0:r1, :]
        part += np.sum(a[r0:r1, :] * b[r0:r1, :], axis=1).reshape((r1 - r0, 1))
    return out
