"""The int8 mean over each sequence's kept tokens (a padding mask), an @micropython.viper kernel.

Same calling convention as kernels.py (read its docstring): the kernel takes (header, keep),
keep the B*S bytes of a padding mask (0: token s of sequence b is padding). The header holds,
after the fields, one multiplier (m, s, p, cap) for every count n = 1..S of kept tokens:
s_x / n / s_y. The sum of the n kept tokens (|sum| <= 128 S, far inside int32) is requantized
with the multiplier of its n, as reference.int8.masked_pool does, bit for bit; a sequence
with no kept token gets zeros (the float layer refuses one). The sum and the requantize are
kernels._pool's loops written out again with the mask test inside: a viper function calls
another only as a Python call, one per item.
"""

import micropython
from micropython import const

from .kernels import address_distance, need, need_int, new_header, set_multiplier

# the fields every header of kernels.py starts with
_M = const(0)
_S = const(1)
_P = const(2)
_CAP = const(3)
_EXT = const(6)
_ROWS = const(7)
_SRC = const(8)
_K_S = const(9)
_K_COLS = const(10)
_K_DST = const(11)
_K_TABLE = const(12)  # then: (m, s, p, cap) for 1, 2, ..., S kept tokens


@micropython.viper
def _pool_keep(x: ptr32, keep: ptr8):
    h = int(x)
    ext = x[_EXT]
    groups = x[_ROWS]
    tokens = x[_K_S]
    cols = x[_K_COLS]
    src = ptr8(h + ((x[_SRC] << ext) >> ext))
    dst = ptr8(h + ((x[_K_DST] << ext) >> ext))
    for g in range(groups):
        first = g * tokens
        n = 0
        for t in range(tokens):
            if keep[first + t]:
                n += 1
        entry = _K_TABLE + 4 * (n - 1)
        if n == 0:
            entry = _K_TABLE
        m = x[entry]
        s = x[entry + 1]
        p = x[entry + 2]
        cap = x[entry + 3]
        half = (1 << s) >> 1
        for c in range(cols):
            v = 0
            at = first * cols + c
            for t in range(tokens):
                if keep[first + t]:
                    v += (src[at] ^ 128) - 128
                at += cols
            if v > cap:
                v = cap
            elif v < 0 - cap:
                v = 0 - cap
            y = ((v >> p) * m + half) >> s
            if y > 127:
                y = 127
            elif y < -128:
                y = -128
            dst[g * cols + c] = y


def pool_keep_header(seq_len, cols, mults):
    """The header of the masked mean: mults[n - 1] is the multiplier of n kept tokens."""
    need_int("seq_len", seq_len, 1)
    need_int("cols", cols, 1)
    if len(mults) != seq_len:
        raise ValueError("masked pooling needs %d multipliers (1..%d kept tokens), got %d"
                         % (seq_len, seq_len, len(mults)))
    h = new_header(_K_TABLE + 4 * seq_len, None)
    for n, mult in enumerate(mults):
        set_multiplier(h, mult)  # checks it
        for i in range(4):
            h[_K_TABLE + 4 * n + i] = h[i]
    h[_K_S], h[_K_COLS] = seq_len, cols
    return h


def bind_pool_keep(h, groups, src, dst):
    """Point a masked pooling header at int8 src (groups * S, cols) and int8 dst (groups, cols)."""
    need_int("groups", groups)
    S, cols = h[_K_S], h[_K_COLS]
    need("src", src, 1, groups * S * cols)
    need("dst", dst, 1, groups * cols)
    h[_ROWS] = groups
    h[_SRC], h[_K_DST] = address_distance(src, h), address_distance(dst, h)


def check_keep(h, keep):
    """ValueError unless keep is a buffer of exactly the bound header's groups * S bytes."""
    need("keep", keep, 1, h[_ROWS] * h[_K_S])
    if len(keep) != h[_ROWS] * h[_K_S]:
        raise ValueError("the mask holds %d sequences of %d, the batch has %d"
                         % (len(keep) // h[_K_S], h[_K_S], h[_ROWS]))


def pool_keep(h, keep):
    """Run a bound masked pooling header with its keep bytes (check_keep them first)."""
    _pool_keep(h, keep)
