"""Integer kernels of the int8 decoder (a language model's block): RMSNorm, the rotary turn
of q and k, and SwiGLU's product, each an @micropython.viper function on int8 rows.

The arithmetic is tinyattn_host.reference.int8_decoder's, bit for bit. A header is an
array('i') made once (rmsnorm_header, rotary_header, product_header); int8 data are bytes.
RMSNorm of a row x (E values): W = sum x^2 + eps_q, scaled by 4^k into [2^28, 2^30),
r = isqrt(W) (floor, bit by bit), inv = round(2^28 / r), z_i = (x_i inv + 2^(sh-1)) >> sh
with sh = 16 - k (x / sqrt(W) in Q12), then z_i gamma_i requantized to int8 (the multiplier
holds sqrt(E) and the scales). Rotary: each pair (a, b) of a head becomes
((a c - b s + 2^13) >> 14, (a s + b c + 2^13) >> 14), saturated; c and s Q14
(rotary_fixed.py). Product: a_i b_i requantized. The requantize (clamp, multiply, shift,
saturate) is kernels.py's, written out again.
"""

import array

import micropython
from micropython import const

from .fixedpoint import valid_multiplier
from .kernels import EXT

# header fields: the requantize, then each kernel's own
_M = const(0)
_S = const(1)
_P = const(2)
_CAP = const(3)
_EXT = const(4)
_N = const(5)  # rmsnorm: E; product: items; rotary: heads
_EPS = const(6)  # rmsnorm: eps_q; rotary: head_dim
_STYLE = const(7)  # rotary: 0 pairs, 1 halves
_ADD = const(8)  # rotary: 128 writes offset binary (a key cache's row)
_OFF = const(9)  # rotary: where in dst the row goes (bytes: a key cache's position)
_TABLE = const(10)  # rotary: cos (D/2 ints), then sin (D/2 ints)

MAX_RMS_WIDTH = 16384
"""Longest RMSNorm row: sum x^2 + eps_q stays below 2^30."""
MAX_RMS_EPS = 1 << 29


@micropython.viper
def rmsnorm(src: ptr8, dst: ptr8, gamma: ptr8, x: ptr32):
    """One int8 row src (E) normalized into dst; gamma offset binary (E bytes)."""
    ext = x[_EXT]
    E = x[_N]
    m = x[_M]
    s = x[_S]
    p = x[_P]
    cap = x[_CAP]
    half = (1 << s) >> 1
    W = x[_EPS]
    for c in range(E):
        v = (src[c] ^ 128) - 128
        W += v * v
    low = 1 << 28
    k = 0
    while W < low:
        W = W << 2
        k += 1
    r = 0
    bit = low
    while bit:
        if W >= r + bit:
            W -= r + bit
            r = (r >> 1) + bit
        else:
            r = r >> 1
        bit = bit >> 2
    inv = (low + (r >> 1)) // r
    sh = 16 - k
    zhalf = (1 << sh) >> 1
    for c in range(E):
        z = (((src[c] ^ 128) - 128) * inv + zhalf) >> sh
        v = ((z * (gamma[c] - 128)) << ext) >> ext
        if v > cap:
            v = cap
        elif v < 0 - cap:
            v = 0 - cap
        y = ((v >> p) * m + half) >> s
        if y > 127:
            y = 127
        elif y < -128:
            y = -128
        dst[c] = y


@micropython.viper
def rotate(src: ptr8, dst: ptr8, x: ptr32):
    """Every head's pairs of the int8 row src turned into dst (+ the header's add)."""
    ext = x[_EXT]
    heads = x[_N]
    D = x[_EPS]
    style = x[_STYLE]
    add = x[_ADD]
    half = D >> 1
    dst = ptr8(int(dst) + x[_OFF])
    for h in range(heads):
        base = h * D
        for i in range(half):
            c = (x[_TABLE + i] << ext) >> ext
            sn = (x[_TABLE + half + i] << ext) >> ext
            if style:
                ia = base + i
                ib = ia + half
            else:
                ia = base + 2 * i
                ib = ia + 1
            a = (src[ia] ^ 128) - 128
            b = (src[ib] ^ 128) - 128
            u = (a * c - b * sn + 8192) >> 14
            v = (a * sn + b * c + 8192) >> 14
            if u > 127:
                u = 127
            elif u < -128:
                u = -128
            if v > 127:
                v = 127
            elif v < -128:
                v = -128
            dst[ia] = u + add
            dst[ib] = v + add


@micropython.viper
def product(a: ptr8, b: ptr8, dst: ptr8, x: ptr32):
    """dst_i = a_i b_i requantized, int8 rows of the header's items."""
    n = x[_N]
    m = x[_M]
    s = x[_S]
    p = x[_P]
    cap = x[_CAP]
    half = (1 << s) >> 1
    for i in range(n):
        v = ((a[i] ^ 128) - 128) * ((b[i] ^ 128) - 128)
        if v > cap:
            v = cap
        elif v < 0 - cap:
            v = 0 - cap
        y = ((v >> p) * m + half) >> s
        if y > 127:
            y = 127
        elif y < -128:
            y = -128
        dst[i] = y


# ---- headers: made and checked once ------------------------------------------------------------
def _header(fields, mult):
    h = array.array("i", bytes(4 * fields))
    h[_EXT] = EXT
    if mult is not None:
        if not valid_multiplier(*mult):
            raise ValueError("multiplier %r is not one fixed_point makes" % (mult,))
        h[_M], h[_S], h[_P], h[_CAP] = mult
    return h


def rmsnorm_header(E, eps_q, mult):
    """RMSNorm of rows of E int8 values, eps_q in units of sum x^2, mult: z gamma to int8."""
    if not 1 <= E <= MAX_RMS_WIDTH:
        raise ValueError("RMSNorm of %d values: 1 .. %d" % (E, MAX_RMS_WIDTH))
    if not isinstance(eps_q, int) or not 1 <= eps_q <= MAX_RMS_EPS:
        raise ValueError("eps_q must be an int in [1, 2^29], got %r" % (eps_q,))
    h = _header(_TABLE, mult)
    h[_N], h[_EPS] = E, eps_q
    return h


def rotary_header(heads, head_dim, halves, add=0):
    """The turn of `heads` heads of head_dim (even) values; set_angles before each call."""
    if head_dim % 2:
        raise ValueError("rotary positions need an even head_dim, got %d" % head_dim)
    h = _header(_TABLE + head_dim, None)
    h[_N], h[_EPS], h[_STYLE], h[_ADD] = heads, head_dim, 1 if halves else 0, add
    return h


def set_angles(h, cos_sin, offset=0):
    """The position's Q14 [cos..., sin...] (rotary_fixed.table) into a rotary header, and
    where in dst its row goes."""
    h[_OFF] = offset
    for i in range(len(cos_sin)):
        h[_TABLE + i] = cos_sin[i]


def product_header(n, mult):
    h = _header(_TABLE, mult)
    h[_N] = n
    return h
