"""Integer kernels of the int8 encoder: LayerNorm and the add of two int8 tensors.

Same calling convention as kernels.py (read its docstring): a kernel takes (header, buffer),
the header an array('i') made once, other buffers reached by their byte distance from it.
The arithmetic is tinyattn_host.reference.int8_encoder's, bit for bit; every intermediate
fits int32 (its worst_case_bounds), so it is exact with 32-bit wrapping viper ints too; a
bias loaded by ptr32 (zero-extended on a 64-bit port) is added, then the total sign-extended
with EXT before it is compared or shifted.

LayerNorm of an int8 row x (E values): S = sum x, V = E sum x^2 - S^2, W = V + eps_q;
W scaled by 4^k into [2^28, 2^30), r = isqrt (floor, bit by bit), inv = round(2^28 / r);
z_i = ((E x_i - S) inv + 2^(sh-1)) >> sh with sh = 16 - k (xhat in Q12); then
z_i gamma_i + beta_i is requantized to int8. Add: (a ma + b mb + 2^(s-1)) >> s, saturated;
b repeats every `period` rows (the positional table), or not at all (a residual).
The requantize (clamp, multiply, shift, saturate) is kernels.py's, written out again: a
viper function calls another only as a Python call, one per item.
"""

import micropython
from micropython import const

from .constants import MAX_EPS, MAX_NORM_WIDTH as MAX_WIDTH, NORM_FRACTION as FRACTION
from .fixedpoint import ADD_RULE, valid_add
from .kernels import address_distance, need, need_int, new_header

# the fields every header of kernels.py starts with
_M = const(0)
_S = const(1)
_P = const(2)
_CAP = const(3)
_LO = const(4)
_HI = const(5)
_EXT = const(6)
_ROWS = const(7)
_SRC = const(8)
# LayerNorm
_N_E = const(9)
_N_EPS = const(10)
_N_DST = const(11)
_NORM = const(12)  # then: beta (E ints)
# add
_D_COLS = const(9)
_D_MB = const(10)
_D_DST = const(11)
_D_PERIOD = const(12)
_ADD = const(13)


@micropython.viper
def norm(x: ptr32, w: ptr8):
    """Run a bound LayerNorm header with its gamma (offset binary, E bytes)."""
    h = int(x)
    ext = x[_EXT]
    rows = x[_ROWS]
    E = x[_N_E]
    eps = x[_N_EPS]
    src = h + ((x[_SRC] << ext) >> ext)
    dst = h + ((x[_N_DST] << ext) >> ext)
    m = x[_M]
    s = x[_S]
    p = x[_P]
    cap = x[_CAP]
    lo = ((x[_LO] << ext) >> ext)
    hi = x[_HI]
    half = (1 << s) >> 1
    beta = ptr32(h + _NORM * 4)
    low = 1 << 28
    high = low << 2
    for i in range(rows):
        row = ptr8(src + i * E)
        total = 0
        squares = 0
        for c in range(E):
            v = (row[c] ^ 128) - 128
            total += v
            squares += v * v
        W = E * squares - total * total + eps
        k = 0
        while W < low:
            W = W << 2
            k += 1
        if W >= high:
            W = W >> 2
            k = 0 - 1
        r = 0  # floor(sqrt(W)), one bit a step; W in [2^28, 2^30) so r in [2^14, 2^15)
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
        out = ptr8(dst + i * E)
        for c in range(E):
            z = ((E * ((row[c] ^ 128) - 128) - total) * inv + zhalf) >> sh
            v = ((z * (w[c] - 128) + beta[c]) << ext) >> ext
            if v > cap:
                v = cap
            elif v < 0 - cap:
                v = 0 - cap
            y = ((v >> p) * m + half) >> s
            if y > hi:
                y = hi
            elif y < lo:
                y = lo
            out[c] = y


@micropython.viper
def add(x: ptr32, w: ptr8):
    """Run a bound add header with its second input b (int8; repeating every period rows)."""
    h = int(x)
    ext = x[_EXT]
    n = x[_ROWS] * x[_D_COLS]
    wrap = x[_D_PERIOD] * x[_D_COLS]
    ma = x[_M]
    s = x[_S]
    mb = x[_D_MB]
    half = (1 << s) >> 1
    a = ptr8(h + ((x[_SRC] << ext) >> ext))
    dst = ptr8(h + ((x[_D_DST] << ext) >> ext))
    j = 0
    for i in range(n):
        v = (((a[i] ^ 128) - 128) * ma + ((w[j] ^ 128) - 128) * mb + half) >> s
        if v > 127:
            v = 127
        elif v < -128:
            v = -128
        dst[i] = v
        j += 1
        if j == wrap:
            j = 0


# ---- headers: made and checked once ----------------------------------------------------------
def norm_header(E, beta, eps, mult):
    """The header of a LayerNorm of rows of E int8 values.

    beta: int32 (E,) at the scale of z gamma; eps: eps_q in [1, MAX_EPS]; mult: the requantize
    of z gamma + beta to the int8 output.
    """
    need_int("E", E, 1)
    if E > MAX_WIDTH:
        raise ValueError("LayerNorm of %d values is over %d: V + eps could leave int32"
                         % (E, MAX_WIDTH))
    if not isinstance(eps, int) or not 1 <= eps <= MAX_EPS:
        raise ValueError("eps_q must be an int in [1, %d], got %r" % (MAX_EPS, eps))
    need("beta", beta, 4, E)
    room = 2147483647 - 128 * (1 << FRACTION) * 16  # |z| < 2^16 for E <= 256
    h = new_header(_NORM + E, mult)
    h[_N_E], h[_N_EPS] = E, eps
    for j in range(E):
        if not -room <= beta[j] <= room:
            raise ValueError("beta %d is %d: z gamma + beta could leave int32" % (j, beta[j]))
        h[_NORM + j] = beta[j]
    return h


def header_beta(h):
    """The int32 beta a LayerNorm header holds (a new array of its E items)."""
    return h[_NORM:_NORM + h[_N_E]]


def bind_norm(h, gamma, rows, src, dst):
    """Point a LayerNorm header at int8 src and dst (rows, E); gamma offset binary (E,)."""
    E = h[_N_E]
    need_int("rows", rows)
    need("gamma", gamma, 1, E)
    need("src", src, 1, rows * E)
    need("dst", dst, 1, rows * E)
    h[_ROWS] = rows
    h[_SRC], h[_N_DST] = address_distance(src, h), address_distance(dst, h)


def add_header(cols, mults):
    """The header of y = a + b on rows of `cols` int8 values; mults (ma, mb, s)."""
    need_int("cols", cols, 1)
    ma, mb, s = mults
    if not valid_add(ma, mb, s):
        raise ValueError("add multipliers (ma=%r, mb=%r, s=%r) must be %s: use "
                         "int8.norm.add_multipliers" % (ma, mb, s, ADD_RULE))
    h = new_header(_ADD, None)
    h[_D_COLS], h[_M], h[_D_MB], h[_S] = cols, ma, mb, s
    return h


def bind_add(h, rows, a, b, dst, period=None):
    """Point an add header at int8 a and dst (rows, cols); b (int8) holds `period` rows that
    repeat (None: rows, b as large as a)."""
    cols = h[_D_COLS]
    need_int("rows", rows)
    period = rows if period is None else need_int("period", period, 1)
    if period and rows % period:
        raise ValueError("%d rows are not whole periods of %d" % (rows, period))
    need("a", a, 1, rows * cols)
    need("b", b, 1, period * cols)
    need("dst", dst, 1, rows * cols)
    h[_ROWS], h[_D_PERIOD] = rows, period
    h[_SRC], h[_D_DST] = address_distance(a, h), address_distance(dst, h)

