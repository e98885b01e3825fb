"""Rotary position embedding (RoPE) of query and key rows, in place of a positional table.

Each head's pairs of features turn by an angle that grows with the position: position p,
pair i by p * theta^(-2i/D). "pairs" turns (2i, 2i+1), llama2.c's and Meta's convention;
"half" turns (i, i + D/2), Hugging Face's. The angles' cos and sin come from math (no ulab
cos needed), one row a position.
"""

import math

from ulab import numpy as np


def angles(start, rows, head_size, theta):
    """(cos, sin), each (rows, head_size / 2): positions start .. start + rows - 1."""
    half = head_size // 2
    freqs = [theta ** (-2.0 * i / head_size) for i in range(half)]
    cos, sin = np.zeros((rows, half)), np.zeros((rows, half))
    for r in range(rows):
        p = start + r
        cos[r, :] = np.array([math.cos(p * f) for f in freqs])
        sin[r, :] = np.array([math.sin(p * f) for f in freqs])
    return cos, sin


def rotate(x, heads, cos, sin, style, inverse=False):
    """x (rows, heads * D) with each head's pairs turned (a new array); inverse: turned back,
    which is the backward of the turn (a rotation's transpose)."""
    rows, width = x.shape
    D = width // heads
    out = np.zeros((rows, width))
    sin = -sin if inverse else sin
    for h in range(heads):
        base = h * D
        if style == "pairs":
            a, b = x[:, base:base + D:2], x[:, base + 1:base + D:2]
            out[:, base:base + D:2] = a * cos - b * sin
            out[:, base + 1:base + D:2] = a * sin + b * cos
        else:
            a, b = x[:, base:base + D // 2], x[:, base + D // 2:base + D]
            out[:, base:base + D // 2] = a * cos - b * sin
            out[:, base + D // 2:base + D] = a * sin + b * cos
    return out
