"""A Llama decoder block on ulab arrays (llama2.c's `transformer` layer), with backward:

    h = x + attention(attention_norm(x));  y = h + feed_forward(ffn_norm(h))

attention: grouped-query causal self-attention with rotary positions (causal_attention.py),
feed_forward: SwiGLU, both norms RMSNorm. The rows of a forward are the positions of one
sequence, from 0 (a whole text); `step` runs one position against a key/value cache.
"""

from .layer import Layer


class DecoderBlock(Layer):
    """DecoderBlock(dim, n_heads, n_kv_heads, hidden_dim, seq_len, eps=1e-5, rope="pairs",
    theta=10000.0, seed=None). seq_len: the longest context (a cache's capacity at most);
    rope "pairs" (llama2.c) or "half" (Hugging Face). Parameters, named as Meta's checkpoints:
    "attention_norm.gamma", "attention.wq", "attention.wk", "attention.wv", "attention.wo",
    "ffn_norm.gamma", "feed_forward.w1", "feed_forward.w2", "feed_forward.w3"."""

    def __init__(self, *args, seed=None, **named):
        from .causal_attention import CausalSelfAttention  # imported on first use: the
        from .rmsnorm import RMSNorm  # names of the package (dir()) cost no more than this
        from .swiglu import SwiGLU
        from ..rng import Rng

        E, H, H_kv, F, S, eps, rope, theta = self.arguments(args, named)
        rng = Rng(seed)
        self.dim, self.seq_len = E, S
        self.attention_norm = RMSNorm(E, eps)
        self.attention = CausalSelfAttention(E, H, H_kv, rope, theta, seed=rng.next32())
        self.ffn_norm = RMSNorm(E, eps)
        self.feed_forward = SwiGLU(E, F, seed=rng.next32())
        self._parts = (("attention_norm", self.attention_norm), ("attention", self.attention),
                       ("ffn_norm", self.ffn_norm), ("feed_forward", self.feed_forward))

    def forward(self, x, training=False):
        """x (S, E) to (S, E): one sequence of S <= seq_len positions from 0."""
        if x.shape[0] > self.seq_len:
            raise ValueError("%d positions, but the block's context is seq_len=%d"
                             % (x.shape[0], self.seq_len))
        h = x + self.attention.forward(self.attention_norm.forward(x, training), training)
        return h + self.feed_forward.forward(self.ffn_norm.forward(h, training), training)

    def calibrate(self, x, mask=None):
        """(y, {step: max |.|}) of rows x (positions from 0) through each step its int8 form
        quantizes (int8/convert_lm.py's block_stats; int8.quantize's calibration asks)."""
        from ..int8.convert_lm import block_stats

        return block_stats(self, x)

    def step(self, x, pos, cache):
        """One position's row x (1, E) at `pos`, its key and value added to `cache` (keys,
        values: new_cache's)."""
        h = x + self.attention.step(self.attention_norm.forward(x), pos, cache[0], cache[1])
        return h + self.feed_forward.forward(self.ffn_norm.forward(h))

    def new_cache(self, capacity):
        """(keys, values), each (capacity, n_kv_heads * head_dim) zeros."""
        from ulab import numpy as np

        if not 1 <= capacity <= self.seq_len:
            raise ValueError("a cache of %d positions; the block's context is 1..%d"
                             % (capacity, self.seq_len))
        width = self.attention.n_kv_heads * self.attention.head_dim
        return np.zeros((capacity, width)), np.zeros((capacity, width))

    def backward(self, grad_out):
        """Gradients of the last training forward (accumulated in every part); returns dx."""
        dh = grad_out + self.ffn_norm.backward(self.feed_forward.backward(grad_out))
        return dh + self.attention_norm.backward(self.attention.backward(dh))

    def clear_caches(self):
        for _, part in self._parts:
            part.clear_caches()

    def collect_params(self, grads=True):
        """(name, param, grad) of every part, named "<part>.<name>"."""
        groups = []
        for part, layer in self._parts:
            for name, param, grad in layer.collect_params(grads):
                groups.append((part + "." + name, param, grad))
        return groups
