"""tinyattn.scaled_dot_product_attention_backward: the gradients of the public function
(nn/sdpa.py), its arguments checked (sdpa_checks.py), the core's backward (sdpa_backward.py)."""

from ulab import numpy as np

from .sdpa import Call
from .sdpa_backward import backward
from .sdpa_checks import checked


def scaled_dot_product_attention_backward(grad_out, q, k, v, seq_len, num_heads, kv_len=None,
                                          num_kv_heads=None, mask=None, keep=None, bias=None,
                                          causal=False, causal_offset=0, scale=None,
                                          softcap=0.0):
    """(dq, dk, dv, dbias) of the call with the same arguments for the gradient grad_out
    (B*S, H*Dv) of its output; dbias is None without a bias. The weights are recomputed."""
    c = Call(*checked(q, k, v, seq_len, num_heads, kv_len, num_kv_heads, mask, keep, bias,
                      causal, causal_offset, scale, softcap))
    shape = getattr(grad_out, "shape", None)
    if shape != (c.B * c.S, c.H * c.Dv):
        raise ValueError("grad_out must have the output's shape (%d, %d), got %r"
                         % (c.B * c.S, c.H * c.Dv, shape))
    dq, dk, dv = np.zeros(q.shape), np.zeros(k.shape), np.zeros(v.shape)
    dbias = None if bias is None else np.zeros(bias.shape)
    backward(c, grad_out, q, k, v, dq, dk, dv, dbias)
    return dq, dk, dv, dbias
