"""The checks of scaled_dot_product_attention's arguments (nn/sdpa.py): one ValueError each,
naming the argument. Imported by the public functions only: a layer passes shapes it made."""

from ulab import numpy as np

from .checks import is_int, is_number
from .checks import all_finite, finite, require_float_rows, require_rows


def checked(q, k, v, seq_len, num_heads, kv_len=None, num_kv_heads=None, mask=None, keep=None,
            bias=None, causal=False, causal_offset=0, scale=None, softcap=0.0):
    """scaled_dot_product_attention's arguments, each checked (ValueError naming the first
    that is wrong), as sdpa.Call takes them: (B, S, S_kv, H, H_kv, D, Dv, mask, keep, bias,
    causal, causal_offset, scale, softcap)."""
    rows, width = require_float_rows("q", q)
    k_rows, k_width = require_float_rows("k", k)
    v_rows, v_width = require_float_rows("v", v)
    B = require_rows("q", rows, seq_len)
    S = seq_len
    H = _heads("num_heads", num_heads, "q", width)
    if num_kv_heads is None:
        num_kv_heads = H
    H_kv = _heads("num_kv_heads", num_kv_heads, "k", k_width)
    if H % H_kv:
        raise ValueError("num_kv_heads=%d does not divide num_heads=%d" % (H_kv, H))
    if v_width % H_kv:
        raise ValueError("v has %d columns, not a multiple of num_kv_heads=%d" % (v_width, H_kv))
    D = width // H
    if k_width // H_kv != D:
        raise ValueError("k's heads have %d columns, q's %d: they must be equal"
                         % (k_width // H_kv, D))
    if kv_len is None:
        if k_rows % B:
            raise ValueError("k has %d rows: not one sequence of keys for each of the "
                             "%d of q" % (k_rows, B))
        kv_len = k_rows // B
    if not is_int(kv_len) or kv_len < 1 or k_rows != B * kv_len:
        raise ValueError("k must have B*kv_len = %d*%r rows, got %d" % (B, kv_len, k_rows))
    if v_rows != k_rows:
        raise ValueError("v must have k's %d rows, got %d" % (k_rows, v_rows))
    S_kv = kv_len
    mask = _zero_one("mask", mask, (B, S_kv), "(batch, keys)", " (padding) and 1 (a key)")
    keep = _zero_one("keep", keep, (S, S_kv), "(queries, keys)", " and 1")
    if bias is not None:
        shape = getattr(bias, "shape", None)
        if shape != (S, S_kv) and shape != (B * H * S, S_kv):
            raise ValueError("bias must have shape (%d, %d) or (B*H*S, S_kv) = (%d, %d), "
                             "got %r" % (S, S_kv, B * H * S, S_kv, shape))
        if not all_finite(bias):
            raise ValueError("bias must be finite (mask keys with mask= or keep=)")
    if not isinstance(causal, bool):
        raise ValueError("causal must be True or False, got %r" % (causal,))
    if not is_int(causal_offset):
        raise ValueError("causal_offset must be an int, got %r" % (causal_offset,))
    if scale is not None and (not is_number(scale) or not finite(scale)):
        raise ValueError("scale must be a finite number, got %r" % (scale,))
    if not is_number(softcap) or not finite(softcap) or softcap < 0:
        raise ValueError("softcap must be a finite number >= 0, got %r" % (softcap,))
    return (B, S, S_kv, H, H_kv, D, v_width // H_kv, mask, keep, bias, causal, causal_offset,
            scale, softcap)


def _heads(name, value, array_name, width):
    """A head count that splits `width` columns evenly."""
    if not is_int(value) or value < 1:
        raise ValueError("%s must be an int >= 1, got %r" % (name, value))
    if width % value:
        raise ValueError("%s has %d columns, not a multiple of %s=%d"
                         % (array_name, width, name, value))
    return value


def _zero_one(name, a, shape, what, values):
    """a, checked: None, or an array of `shape` holding only 0 and 1 (`values` says what
    they mean)."""
    if a is None:
        return None
    got = getattr(a, "shape", None)
    if got != shape:
        raise ValueError("%s must have shape (%d, %d) %s, got %r" % (name, shape[0], shape[1],
                                                                      what, got))
    t = a * (a - 1.0)
    if float(np.max(np.maximum(t, -t))) != 0.0:
        raise ValueError("%s must hold only 0%s" % (name, values))
    return a
