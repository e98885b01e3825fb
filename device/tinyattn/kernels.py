"""Integer kernels of the int8 path, each an @micropython.viper function: no float inside.

Buffers are row-major and raw: int8 tensors in array.array('b') (a bytearray works too),
int32 in array.array('i'), softmax probabilities in array.array('H') as unsigned Q0.15
(32768 = 1.0). A block of a matrix is (offset, row stride) in items, so a head's columns
h*D:(h+1)*D of a (rows, E) buffer are offset h*D, stride E: no copies.

A real multiplier r > 0 is the four ints (m, s, p, cap) from quant.fixed_point:
    v * r  ~  ((clamp(v, -cap, cap) >> p) * m + 2^(s-1)) >> s
`>>` is an arithmetic shift (floor), so the last step rounds half up (toward +inf).
cap < 2^(15+p) and m < 2^15 keep every product below 2^30, for any int32 v.

Viper ints are machine words: 32 bits on the ESP32-S3 (they wrap), 64 on the unix port.
ptr8 and ptr16 load unsigned: an int8 is sign-extended as (u ^ 128) - 128. A ptr32 load is
zero-extended on a 64-bit port: (u << EXT) >> EXT sign-extends it (EXT = 0 on the board).
Each public function checks its buffers' sizes before the loops (ValueError), then calls
its kernel.
"""

import array

import micropython

EXP_HI = (  # round(32768 * exp(-k / 8)), k = 0..88; the next would round to 0
    32768, 28918, 25520, 22521, 19875, 17539, 15479, 13660, 12055, 10638, 9388, 8285, 7312,
    6452, 5694, 5025, 4435, 3914, 3454, 3048, 2690, 2374, 2095, 1849, 1631, 1440, 1271, 1121,
    990, 873, 771, 680, 600, 530, 467, 412, 364, 321, 283, 250, 221, 195, 172, 152, 134, 118,
    104, 92, 81, 72, 63, 56, 49, 43, 38, 34, 30, 26, 23, 21, 18, 16, 14, 12, 11, 10, 9, 8, 7,
    6, 5, 5, 4, 4, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1)
EXP_LO = (  # round(32768 * exp(-j / 256)), j = 0..31
    32768, 32640, 32513, 32386, 32260, 32134, 32009, 31884, 31760, 31636, 31513, 31390, 31267,
    31146, 31024, 30903, 30783, 30663, 30543, 30424, 30305, 30187, 30070, 29952, 29836, 29719,
    29603, 29488, 29373, 29259, 29144, 29031)
EXP_STEPS = 256
"""Softmax index units per nat: exp(-idx / 256) = EXP_HI[idx >> 5] * EXP_LO[idx & 31] / 2^30."""
EXP_LIMIT = 32 * len(EXP_HI)
"""Index 2848 (11.1 nats below the row maximum) and beyond: exp is 0."""
PROB_ONE = 32768
"""1.0 in the probabilities' Q0.15."""


@micropython.viper
def _word_bits() -> int:
    """Bits of a viper int on this port."""
    n = 0
    x = 1
    while x != 0:
        x = x << 1
        n += 1
    return n


EXT = _word_bits() - 32
"""Shift that sign-extends a ptr32 load: 32 on a 64-bit port, 0 on the ESP32-S3."""


_EXP_HI = array.array("H", EXP_HI)
_EXP_LO = array.array("H", EXP_LO)
_NO_BUFFER = bytearray(4)  # stands in for an absent bias or mask


# ---- buffer checks -----------------------------------------------------------------------
def _need(name, buf, itemsize, count):
    """Raise ValueError unless buf is a buffer of `itemsize`-byte items holding `count`."""
    try:
        n = len(buf)
        size = len(bytes(memoryview(buf)[:1])) if n else itemsize
    except TypeError:
        raise ValueError("%s must be a buffer (array.array or bytearray), got %s"
                         % (name, type(buf).__name__))
    if size != itemsize:
        raise ValueError("%s must hold %d-byte items, it holds %d-byte items"
                         % (name, itemsize, size))
    if count > n:
        raise ValueError("%s holds %d items, the shape needs %d" % (name, n, count))


def _span(name, off, stride, rows, cols):
    """Items a block of rows x cols at `off` with row stride `stride` reaches (0 if empty)."""
    for what, v in (("rows", rows), ("cols", cols), ("offset", off), ("stride", stride)):
        if not isinstance(v, int) or v < 0:
            raise ValueError("%s %s must be an int >= 0, got %r" % (name, what, v))
    if rows and cols and stride < cols and rows > 1:
        raise ValueError("%s stride %d is shorter than its %d columns" % (name, stride, cols))
    return off + (rows - 1) * stride + cols if rows and cols else 0


def _multiplier(m, s, p, cap):
    if not (0 <= m < 32768 and 0 <= s <= 30 and 0 <= p <= 16 and 0 < cap < (1 << (15 + p))
            and cap < 2147483648):
        raise ValueError("multiplier (m=%r, s=%r, p=%r, cap=%r) is outside 0 <= m < 2^15, "
                         "s <= 30, 0 < cap < 2^(15+p): use quant.fixed_point" % (m, s, p, cap))


# ---- int8 x int8 -> int32 ----------------------------------------------------------------
@micropython.viper
def _matmul_xwt(x: ptr8, x_off: int, x_stride: int, w: ptr8, w_off: int, w_stride: int,
                bias: ptr32, use_bias: int, out: ptr32, out_off: int, out_stride: int,
                rows: int, cols: int, depth: int, ext: int):
    for i in range(rows):
        xr = x_off + i * x_stride
        o = out_off + i * out_stride
        for j in range(cols):
            wr = w_off + j * w_stride
            acc = 0
            if use_bias:
                acc = (bias[j] << ext) >> ext
            for k in range(depth):
                acc += ((x[xr + k] ^ 128) - 128) * ((w[wr + k] ^ 128) - 128)
            out[o + j] = acc


def matmul_xwt(x, w, out, rows, cols, depth, bias=None, x_off=0, x_stride=None,
               w_off=0, w_stride=None, out_off=0, out_stride=None):
    """out[i, j] = bias[j] + sum_k x[i, k] w[j, k]: x @ w.T into int32.

    x: rows x depth int8 block, w: cols x depth int8 block (a weight (out, in) row-major),
    bias: int32 (cols,) or None, out: rows x cols int32 block. Strides default to dense.
    """
    x_stride = depth if x_stride is None else x_stride
    w_stride = depth if w_stride is None else w_stride
    out_stride = cols if out_stride is None else out_stride
    _need("x", x, 1, _span("x", x_off, x_stride, rows, depth))
    _need("w", w, 1, _span("w", w_off, w_stride, cols, depth))
    _need("out", out, 4, _span("out", out_off, out_stride, rows, cols))
    if bias is not None:
        _need("bias", bias, 4, cols)
    _matmul_xwt(x, x_off, x_stride, w, w_off, w_stride,
                _NO_BUFFER if bias is None else bias, bias is not None,
                out, out_off, out_stride, rows, cols, depth, EXT)


# ---- int32 -> int8 -----------------------------------------------------------------------
@micropython.viper
def _requantize(src: ptr32, src_off: int, src_stride: int, dst: ptr8, dst_off: int,
                dst_stride: int, rows: int, cols: int, m: int, s: int, p: int, cap: int,
                lo: int, hi: int, ext: int):
    half = (1 << s) >> 1
    low_cap = 0 - cap
    for i in range(rows):
        a = src_off + i * src_stride
        d = dst_off + i * dst_stride
        for j in range(cols):
            v = (src[a + j] << ext) >> ext
            if v > cap:
                v = cap
            elif v < low_cap:
                v = low_cap
            y = ((v >> p) * m + half) >> s
            if y > hi:
                y = hi
            elif y < lo:
                y = lo
            dst[d + j] = y


def requantize(src, dst, rows, cols, mult, lo=-128, hi=127, src_off=0, src_stride=None,
               dst_off=0, dst_stride=None):
    """dst = saturate(src * r, lo, hi): int32 block to int8 block, r = mult = (m, s, p, cap).

    Rounds half up after the floor pre-shift: ((clamp(v, -cap, cap) >> p) * m + 2^(s-1)) >> s.
    """
    m, s, p, cap = mult
    _multiplier(m, s, p, cap)
    if not -128 <= lo <= hi <= 127:
        raise ValueError("saturation bounds must satisfy -128 <= lo <= hi <= 127, got %r, %r"
                         % (lo, hi))
    src_stride = cols if src_stride is None else src_stride
    dst_stride = cols if dst_stride is None else dst_stride
    _need("src", src, 4, _span("src", src_off, src_stride, rows, cols))
    _need("dst", dst, 1, _span("dst", dst_off, dst_stride, rows, cols))
    _requantize(src, src_off, src_stride, dst, dst_off, dst_stride, rows, cols,
                m, s, p, cap, lo, hi, EXT)


# ---- integer softmax ---------------------------------------------------------------------
@micropython.viper
def _softmax(scores: ptr32, rows: int, cols: int, keep: ptr8, keep_off: int, use_keep: int,
             causal: int, probs: ptr16, m: int, s: int, p: int, cap: int,
             exp_hi: ptr16, exp_lo: ptr16, limit: int, ext: int):
    half = (1 << s) >> 1
    one = 32768
    one = one * one  # 2^30, too big for a literal in a 32-bit viper function
    for i in range(rows):
        row = i * cols
        # the allowed keys and their maximum; a row with none allowed is uniform
        open_all = 1
        top = 0
        for j in range(cols):
            masked = 0
            if use_keep:
                if keep[keep_off + j] == 0:
                    masked = 1
            if causal:
                if j > i:
                    masked = 1
            if masked == 0:
                v = (scores[row + j] << ext) >> ext
                if open_all:
                    top = v
                    open_all = 0
                elif v > top:
                    top = v
        # e_j = 2^15 exp(-(top - v_j) r) from the tables, into probs; their sum
        total = 0
        for j in range(cols):
            e = 0
            masked = 0
            if use_keep:
                if keep[keep_off + j] == 0:
                    masked = 1
            if causal:
                if j > i:
                    masked = 1
            if open_all:
                e = 32768  # every key masked: uniform, as softmax of equal scores
            elif masked == 0:
                d = top - ((scores[row + j] << ext) >> ext)
                if d > cap:
                    d = cap
                idx = ((d >> p) * m + half) >> s
                if idx < limit:
                    e = (exp_hi[idx >> 5] * exp_lo[idx & 31] + 16384) >> 15
            probs[row + j] = e
            total += e
        # normalise: inv = round(2^30 / total), P_j = round(e_j inv / 2^15)
        inv = (one + (total >> 1)) // total
        for j in range(cols):
            probs[row + j] = (probs[row + j] * inv + 16384) >> 15


def softmax(scores, probs, rows, cols, mult, keep=None, keep_off=0, causal=False):
    """Row-wise softmax of int32 scores (rows, cols) into Q0.15 probs (array 'H').

    mult = (m, s, p, cap) is r = index units (1/256 nat) per score unit. keep: int8/bytes
    buffer, key j is masked where keep[keep_off + j] == 0; causal: row i sees keys j <= i.
    Masked keys get probability 0 and are left out of the maximum and the sum; a row with
    every key masked gets round(1/cols) everywhere (the float layer's -1e9 scores give
    that too).
    """
    m, s, p, cap = mult
    _multiplier(m, s, p, cap)
    _need("scores", scores, 4, _span("scores", 0, cols, rows, cols))
    _need("probs", probs, 2, _span("probs", 0, cols, rows, cols))
    if cols >= 65536:
        raise ValueError("softmax over %d keys: the int32 sum holds at most 65535" % cols)
    if keep is not None:
        _need("keep", keep, 1, _span("keep", keep_off, cols, 1, cols))
    if rows and cols:
        _softmax(scores, rows, cols, _NO_BUFFER if keep is None else keep, keep_off,
                 keep is not None, bool(causal), probs, m, s, p, cap, _EXP_HI, _EXP_LO,
                 EXP_LIMIT, EXT)


# ---- probabilities x int8 V -> int32 -----------------------------------------------------
@micropython.viper
def _probs_v(probs: ptr16, rows: int, cols: int, v: ptr8, v_off: int, v_stride: int,
             out: ptr32, depth: int):
    for i in range(rows):
        pr = i * cols
        o = i * depth
        for d in range(depth):
            acc = 0
            vi = v_off + d
            for j in range(cols):
                acc += probs[pr + j] * ((v[vi] ^ 128) - 128)
                vi += v_stride
            out[o + d] = acc


def probs_v(probs, v, out, rows, cols, depth, v_off=0, v_stride=None):
    """out[i, d] = sum_j P[i, j] v[j, d]: Q0.15 probs (rows, cols) times an int8 block
    (cols, depth) into int32 (rows, depth), in units of v's scale / 2^15."""
    v_stride = depth if v_stride is None else v_stride
    _need("probs", probs, 2, _span("probs", 0, cols, rows, cols))
    _need("v", v, 1, _span("v", v_off, v_stride, cols, depth))
    _need("out", out, 4, _span("out", 0, depth, rows, depth))
    _probs_v(probs, rows, cols, v, v_off, v_stride, out, depth)


# ---- elementwise and pooling -------------------------------------------------------------
@micropython.viper
def _lookup(src: ptr8, dst: ptr8, n: int, table: ptr8):
    for i in range(n):
        dst[i] = table[src[i]]


def lookup(src, dst, n, table):
    """dst[i] = table[src[i] & 255]: an int8 -> int8 function as a 256-entry table (index
    is the int8's byte, so entry 255 is the value for -1). src and dst may be the same."""
    _need("src", src, 1, n)
    _need("dst", dst, 1, n)
    _need("table", table, 1, 256)
    _lookup(src, dst, n, table)


@micropython.viper
def _sum_tokens(src: ptr8, out: ptr32, groups: int, tokens: int, cols: int):
    for g in range(groups):
        base = g * tokens * cols
        for c in range(cols):
            acc = 0
            at = base + c
            for t in range(tokens):
                acc += (src[at] ^ 128) - 128
                at += cols
            out[g * cols + c] = acc


def sum_tokens(src, out, groups, tokens, cols):
    """out[g, c] = sum_t src[g*tokens + t, c]: int8 (groups*tokens, cols) to int32."""
    _need("src", src, 1, _span("src", 0, cols, groups * tokens, cols))
    _need("out", out, 4, _span("out", 0, cols, groups, cols))
    _sum_tokens(src, out, groups, tokens, cols)
