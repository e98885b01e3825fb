"""The int8 formats on the host in float64, as device/tinyattn/int8/numbers.py makes them:
scales held as the float32 a board holds, rounding half up, the device's own fixed_point and bias room (int8/fixedpoint.py, loaded here)."""

import math

import numpy as np

from tinyattn_host.device_modules import device_module

FIXED_POINT = device_module("int8/fixedpoint")


def round_half_up(v):
    return np.floor(np.asarray(v, dtype=np.float64) + 0.5).astype(np.int64)


def max_abs(a):
    return float(np.abs(a).max())


def scale_for(m):
    """max(m, 1e-6) / 127 as the float32 a board holds (so that the board and the host agree)."""
    return float(np.float32(max(m, 1e-6) / 127.0))


def quantize_tensor(x, scale, low=-128):
    """saturate(round(x / scale), low, 127) as int8, rounded half up (quantize_tensor's)."""
    return round_half_up(np.clip(np.asarray(x) / scale, low, 127)).astype(np.int8)


def int8_weights(W):
    s_w = scale_for(max_abs(W))
    return quantize_tensor(W, s_w, low=-127), s_w


def int32_bias(b, scale, depth):
    """b / scale as int32, checked so that depth * 2^14 + |b_q| stays inside int32."""
    q = round_half_up(np.asarray(b) / scale)
    if np.abs(q).max() > FIXED_POINT.bias_room(depth):
        raise ValueError("a bias of %r at scale %r overflows the int32 accumulator"
                         % (float(np.abs(b).max()), scale))
    return q.astype(np.int32)


def multiplier(s_in, s_out, limit=128):
    return list(FIXED_POINT.fixed_point(s_in / s_out, limit))


def add_multipliers(s_a, s_b, s_y):
    """int8/norm.py's add_multipliers: one shift s, the larger multiplier in [2^14, 2^15)."""
    top = max(s_a, s_b) / s_y
    if not math.floor(top + 0.5) < 32768:
        raise ValueError("an add's input scale is over 2^15 its output's")
    s = 0
    while s < 30 and math.floor(top * (1 << (s + 1)) + 0.5) < 32768:
        s += 1
    return [math.floor(s_a / s_y * (1 << s) + 0.5), math.floor(s_b / s_y * (1 << s) + 0.5), s]
