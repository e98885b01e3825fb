"""The decoder's attention: grouped-query causal self-attention with rotary positions,
projections without biases (Llama's), and the step of one token against a key/value cache."""

import math

from ulab import numpy as np

from .attention import add_product
from .layer import Layer
from .rotary import angles, rotate
from ..rng import Rng


class CausalSelfAttention(Layer):
    """wq (H*D, E), wk and wv (H_kv*D, E), wo (E, H*D); query head h reads key/value head
    h // (H / H_kv). Rows are the positions of one sequence, the first at `start`; query i
    sees keys 0 .. i + start. Built by DecoderBlock (its `attention` part)."""

    PARAMS = ("wq", "wk", "wv", "wo")

    def __init__(self, dim, n_heads, n_kv_heads, rope, theta, seed=None):
        self.dim, self.n_heads, self.n_kv_heads = dim, n_heads, n_kv_heads
        self.head_dim = dim // n_heads
        self.rope, self.theta = rope, theta
        rng = Rng(seed)
        bound = math.sqrt(6.0 / (2 * dim))
        kv = n_kv_heads * self.head_dim
        self.wq = rng.uniform_matrix(dim, dim, -bound, bound)
        self.wk = rng.uniform_matrix(kv, dim, -bound, bound)
        self.wv = rng.uniform_matrix(kv, dim, -bound, bound)
        self.wo = rng.uniform_matrix(dim, dim, -bound, bound)
        self.dwq = self.dwk = self.dwv = self.dwo = None
        self.cache = None

    def project(self, x, start):
        """q, k (turned to their positions) and v of rows x at positions start..."""
        cos, sin = angles(start, x.shape[0], self.head_dim, self.theta)
        q = rotate(np.dot(x, self.wq.transpose()), self.n_heads, cos, sin, self.rope)
        k = rotate(np.dot(x, self.wk.transpose()), self.n_kv_heads, cos, sin, self.rope)
        return q, k, np.dot(x, self.wv.transpose()), cos, sin

    def forward(self, x, training=False, start=0):
        """x (S, E) to (S, E), positions start .. start + S - 1 (keys the same rows)."""
        q, k, v, cos, sin = self.project(x, start)
        a, probs = attend(q, k, v, self.n_heads, self.n_kv_heads, 0, training)
        if training:
            self.cache = (x, q, k, v, probs, a, cos, sin)
        return np.dot(a, self.wo.transpose())

    def step(self, x, pos, keys, values):
        """One row x (1, E) at position pos: its k and v written to row pos of the caches
        (keys, values (capacity, H_kv*D)), attention over rows 0..pos; returns (1, E)."""
        q, k, v, _, _ = self.project(x, pos)
        keys[pos, :] = k[0, :]
        values[pos, :] = v[0, :]
        a, _ = attend(q, keys[:pos + 1, :], values[:pos + 1, :], self.n_heads,
                      self.n_kv_heads, pos, False)
        return np.dot(a, self.wo.transpose())

    def backward(self, grad_out):
        """Gradients of wq, wk, wv, wo (accumulated); returns dx."""
        if self.cache is None:
            raise ValueError("backward() called before forward(x, training=True)")
        x, q, k, v, probs, a, cos, sin = self.cache
        self.cache = None
        self.collect_params()
        add_product(self.dwo, grad_out, a)
        dq, dk, dv = attend_backward(np.dot(grad_out, self.wo), q, k, v, probs,
                                     self.n_heads, self.n_kv_heads)
        dq = rotate(dq, self.n_heads, cos, sin, self.rope, True)
        dk = rotate(dk, self.n_kv_heads, cos, sin, self.rope, True)
        add_product(self.dwq, dq, x)
        add_product(self.dwk, dk, x)
        add_product(self.dwv, dv, x)
        return np.dot(dq, self.wq) + np.dot(dk, self.wk) + np.dot(dv, self.wv)

    def clear_caches(self):
        self.cache = None


def attend(q, k, v, H, H_kv, start, keep):
    """softmax(q_h k_g^T / sqrt(D), causal: key j for query i iff j <= i + start) v_g for
    each head h, g = h // (H / H_kv); (out (S, H*D), [probabilities of each head] if keep)."""
    S, S_kv = q.shape[0], k.shape[0]
    D = q.shape[1] // H
    group = H // H_kv
    scale = 1.0 / math.sqrt(D)
    penalty = None
    if S_kv > 1 + start or S > 1:  # some key is in the future of some query
        penalty = np.zeros((S, S_kv))
        for i in range(S):
            if i + start + 1 < S_kv:
                penalty[i, i + start + 1:] = -1e9
    out = np.zeros((S, H * D))
    kept = []
    for h in range(H):
        g = h // group
        scores = np.dot(q[:, h * D:(h + 1) * D], k[:, g * D:(g + 1) * D].transpose())
        scores *= scale
        if penalty is not None:
            scores += penalty
        scores -= np.max(scores, axis=1).reshape((S, 1))
        p = np.exp(scores)
        p /= np.sum(p, axis=1).reshape((S, 1))
        out[:, h * D:(h + 1) * D] = np.dot(p, v[:, g * D:(g + 1) * D])
        if keep:
            kept.append(p)
    return out, kept


def attend_backward(grad_out, q, k, v, probs, H, H_kv):
    """(dq, dk, dv) of attend; a key/value head's gradient sums its group's heads'."""
    S, S_kv = q.shape[0], k.shape[0]
    D = q.shape[1] // H
    group = H // H_kv
    scale = 1.0 / math.sqrt(D)
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    for h in range(H):
        g = h // group
        p = probs[h]
        gh = grad_out[:, h * D:(h + 1) * D]
        kg, vg = k[:, g * D:(g + 1) * D], v[:, g * D:(g + 1) * D]
        dvg = dv[:, g * D:(g + 1) * D]
        dvg += np.dot(p.transpose(), gh)
        dp = np.dot(gh, vg.transpose())
        ds = p * (dp - np.sum(dp * p, axis=1).reshape((S, 1))) * scale
        dq[:, h * D:(h + 1) * D] = np.dot(ds, kg)
        dkg = dk[:, g * D:(g + 1) * D]
        dkg += np.dot(ds.transpose(), q[:, h * D:(h + 1) * D])
    return dq, dk, dv
