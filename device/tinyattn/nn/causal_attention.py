"""The decoder's attention: grouped-query causal self-attention with rotary positions,
projections without biases (Llama's), and the step of one token against a key/value cache;
the core is scaled_dot_product_attention (sdpa.py)."""

import math

from ulab import numpy as np

from .attention import add_product
from .layer import Layer
from .rotary import angles, rotate
from .sdpa import scaled_dot_product_attention
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
        a = scaled_dot_product_attention(q, k, v, x.shape[0], self.n_heads,
                                         num_kv_heads=self.n_kv_heads, causal=True)
        if training:
            self.cache = (x, q, k, v, a, cos, sin)
        return np.dot(a, self.wo.transpose())

    def step(self, x, pos, keys, values):
        """One row x (1, E) at position pos: its k and v written to row pos of the caches
        (keys, values (capacity, H_kv*D)), attention over rows 0..pos; returns (1, E)."""
        q, k, v, _, _ = self.project(x, pos)
        keys[pos, :] = k[0, :]
        values[pos, :] = v[0, :]
        a = scaled_dot_product_attention(q, keys[:pos + 1, :], values[:pos + 1, :], 1,
                                         self.n_heads, pos + 1, self.n_kv_heads)
        return np.dot(a, self.wo.transpose())

    def backward(self, grad_out):
        """Gradients of wq, wk, wv, wo (accumulated); returns dx."""
        if self.cache is None:
            raise ValueError("backward() called before forward(x, training=True)")
        from .sdpa_grad import scaled_dot_product_attention_backward

        x, q, k, v, a, cos, sin = self.cache
        self.cache = None
        self.collect_params()
        add_product(self.dwo, grad_out, a)
        dq, dk, dv, _ = scaled_dot_product_attention_backward(
            np.dot(grad_out, self.wo), q, k, v, x.shape[0], self.n_heads,
            num_kv_heads=self.n_kv_heads, causal=True)
        dq = rotate(dq, self.n_heads, cos, sin, self.rope, True)
        dk = rotate(dk, self.n_kv_heads, cos, sin, self.rope, True)
        add_product(self.dwq, dq, x)
        add_product(self.dwk, dk, x)
        add_product(self.dwv, dv, x)
        return np.dot(dq, self.wq) + np.dot(dk, self.wk) + np.dot(dv, self.wv)

    def clear_caches(self):
        self.cache = None
