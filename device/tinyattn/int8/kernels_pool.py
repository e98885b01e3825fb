"""The int8 mean over each sequence's tokens, all of them or the kept ones (a padding mask):
two @micropython.viper kernels, same calling convention as kernels.py (read its docstring).

The plain mean's header holds one multiplier, s_x / S / s_y, for the sum of a sequence's S
tokens. The masked kernel takes (header, keep), keep the B*S bytes of a padding mask (0: token
s of sequence b is padding); its header holds, after the fields, one multiplier (m, s, p, cap)
for every count n = 1..S of kept tokens: s_x / n / s_y. The sum of the n kept tokens
(|sum| <= 128 S, far inside int32) is requantized with the multiplier of its n, as
reference.int8.masked_pool does, bit for bit; a sequence with no kept token gets zeros (the
float layer refuses one). The masked kernel is _pool's loops written out again with the mask
test inside: a viper function calls another only as a Python call, one per item.
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
# the plain mean
_POOL_S = const(9)
_POOL_COLS = const(10)
_POOL_DST = const(11)
_POOL = const(12)
# the masked mean
_K_S = const(9)
_K_COLS = const(10)
_K_DST = const(11)
_K_TABLE = const(12)  # then: (m, s, p, cap) for 1, 2, ..., S kept tokens


# ---- the mean of every token: their sum, requantized ------------------------------------
@micropython.viper
def _pool(x: ptr32, w: ptr8):
    h = int(x)
    ext = x[_EXT]
    groups = x[_ROWS]
    tokens = x[_POOL_S]
    cols = x[_POOL_COLS]
    src = ptr8(h + ((x[_SRC] << ext) >> ext))
    dst = ptr8(h + ((x[_POOL_DST] << ext) >> ext))
    m = x[_M]
    s = x[_S]
    p = x[_P]
    cap = x[_CAP]
    half = (1 << s) >> 1
    for g in range(groups):
        base = g * tokens * cols
        for c in range(cols):
            v = 0
            at = base + c
            for t in range(tokens):
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


def pool_header(seq_len, cols, mult):
    """The header of a mean over each sequence's tokens: the int sum times mult."""
    need_int("seq_len", seq_len, 1)
    need_int("cols", cols, 1)
    h = new_header(_POOL, mult)
    h[_POOL_S], h[_POOL_COLS] = seq_len, cols
    return h


def bind_pool(h, groups, src, dst):
    """Point a pooling header at int8 src (groups * seq_len, cols) and int8 dst (groups, cols)."""
    need_int("groups", groups)
    S, cols = h[_POOL_S], h[_POOL_COLS]
    need("src", src, 1, groups * S * cols)
    need("dst", dst, 1, groups * cols)
    h[_ROWS] = groups
    h[_SRC], h[_POOL_DST] = address_distance(src, h), address_distance(dst, h)


def pool(h):
    """Run a bound pooling header (its one buffer is the header: the kernel takes two)."""
    _pool(h, h)


# ---- the mean of the kept tokens ---------------------------------------------------------
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


def pool_call(h, keep=None):
    """pool(h), or pool_keep(h, keep) when keep is given, as (function, a, b), function(a, b):
    a QSequential's flat list of calls."""
    return (_pool, h, h) if keep is None else (_pool_keep, h, keep)
