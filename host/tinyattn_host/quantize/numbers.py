"""The int8 formats on the host as device/tinyattn/int8/numbers.py makes them on a board, in
the board's float32: each product, ratio and rounding of a scale is done on np.float32 values
in the device's order (NumPy 2 keeps a Python number with a float32 in float32), so the
multipliers, weights and biases are the board's bit for bit. Scales are Python floats holding
float32 values; the device's own scale_range, fixed_point and bias room (int8/fixedpoint.py,
loaded here) make the rest."""

import math

import numpy as np

from ..device_modules import device_module

FIXED_POINT = device_module("int8/fixedpoint")
f32 = np.float32  # a board's float


def times(a, b):
    """a b as a board's float32 product."""
    return float(f32(a) * f32(b))


def over(a, b):
    """a / b as a board's float32 quotient."""
    return float(f32(a) / f32(b))


def round_half_up(v):
    """floor(v + 0.5) of a float32 v, the + 0.5 in float32 (numbers.round_half_up on a board)."""
    return int(math.floor(f32(v) + f32(0.5)))


def max_abs(a):
    return float(np.abs(a).max())


def scale_for(m):
    """scale_range(m) / 127 in float32: the scale for values up to m (a step up, fixedpoint.py)."""
    return over(FIXED_POINT.scale_range(float(m)), 127.0)


def quantize_tensor(x, scale, low=-128):
    """saturate(round(x / scale), low, 127) as int8, as quantize_tensor on a board: x (float32)
    times the float32 1 / scale, clamped, + 128 in float32, rounded half away from zero."""
    inverse = f32(1.0) / f32(scale)
    u = np.minimum(np.maximum(np.asarray(x, np.float32) * inverse, f32(low)), f32(127))
    u = u + f32(128)
    return (np.floor(u.astype(np.float64) + 0.5) - 128).astype(np.int8)


def int8_weights(W):
    s_w = scale_for(max_abs(W))
    return quantize_tensor(W, s_w, low=-127), s_w


def int32_bias(b, scale, depth):
    """b / scale rounded half up, in float32, as int32; ValueError unless depth 2^14 + |b_q|
    stays inside int32."""
    q = np.floor(np.asarray(b, np.float32) / f32(scale) + f32(0.5)).astype(np.int64)
    if np.abs(q).max() > FIXED_POINT.bias_room(depth):
        raise ValueError("a bias of %r at scale %r overflows the int32 accumulator"
                         % (float(np.abs(b).max()), scale))
    return q.astype(np.int32)


def multiplier(s_in, s_out, limit=128):
    """The fixed-point form of the float32 s_in / s_out."""
    return list(FIXED_POINT.fixed_point(f32(s_in) / f32(s_out), limit))


def add_multipliers(s_a, s_b, s_y):
    """int8/norm_convert.py's add_multipliers in float32: one shift s, the larger multiplier in
    [2^14, 2^15)."""
    a, b, y = f32(s_a), f32(s_b), f32(s_y)
    top = max(a, b) / y
    if not round_half_up(top) < 32768:
        raise ValueError("an add's input scale is over 2^15 its output's")
    s = 0
    while s < 30 and round_half_up(top * (1 << (s + 1))) < 32768:
        s += 1
    return [round_half_up(a / y * (1 << s)), round_half_up(b / y * (1 << s)), s]
