"""Integer kernels of the int8 path, each an @micropython.viper function: no float inside.
Here: linear (x W^T + b, requantized), table lookup and the headers' checks; the attention
core is in kernels_attend.py, LayerNorm and adds in kernels_norm.py, pooling in kernels_pool.py.

Calling convention. A kernel takes two buffers, `(header, weights)`, so that viper keeps both
in its two register locals (a native function in a .mpy holds at most two locals in
registers, one when it has three or more parameters); everything else is an int of the
header, an array('i') made once per layer: sizes, multipliers, and the *byte distance* from
the header to every other buffer it reads or writes (MicroPython never moves a live object, so
a distance found once stays true). After the fields come the bias and a scratch row.

Formats: int8 tensors are bytes, row-major; "offset binary" bytes hold v + 128 (the same bits
as v with the top one flipped); accumulators int32.
A real multiplier r > 0 is the four ints (m, s, p, cap) of fixedpoint.fixed_point:
    v * r  ~  ((clamp(v, -cap, cap) >> p) * m + 2^(s-1)) >> s      (rounds half up)

The dot products. A source row is widened once into the int32 scratch (sign-extended) and
summed; weights are offset binary, so their bytes load as u = w + 128 with no sign step:
    sum_k x_k w_k = sum_k x_k u_k - 128 sum_k x_k
The loop is unrolled 8 ways with constant offsets from two walking pointers, the registers.
Why this is exact with 32-bit viper ints (the ESP32-S3's, which wrap): the dot, the bias and
the correction are only added and multiplied, so their sum is right modulo 2^32, and the true
value fits in int32 (depth * 2^14 + |bias| < 2^31, checked when a header is made). On a 64-bit
port a ptr32 load is zero-extended, which is the same value modulo 2^32; `(v << EXT) >> EXT`
(EXT = word bits - 32) then sign-extends the total before anything compares or shifts it.
"""

import array

import micropython
from micropython import const

from .fixedpoint import MULTIPLIER_RULE, bias_room, valid_multiplier

MAX_DEPTH = 32768
"""Longest dot product: depth * 2^14 + |bias| must stay inside int32."""


@micropython.viper
def _word_bits() -> int:
    n = 0
    x = 1
    while x != 0:
        x = x << 1
        n += 1
    return n


EXT = _word_bits() - 32
"""Shift that sign-extends a 32-bit value: 32 on a 64-bit port, 0 on the ESP32-S3."""

# header fields shared by the kernels (a requantize step and the word size)
_M = const(0)
_S = const(1)
_P = const(2)
_CAP = const(3)
_LO = const(4)
_HI = const(5)
_EXT = const(6)
_ROWS = const(7)
_SRC = const(8)  # byte distance from the header to the first source item
# linear
_COLS = const(9)
_DEPTH = const(10)
_SRC_ROW = const(11)  # source row stride, items
_SRC_FLIP = const(12)  # 128: the source is int8; 0: it is offset binary
_DST = const(13)
_DST_ROW = const(14)  # destination strides in bytes: row, column, group
_DST_COL = const(15)
_DST_GROUP = const(16)  # rows per group (the V^T layout); 0: one group
_DST_GSTRIDE = const(17)
_DST_WIDE = const(18)  # 1: store the int32 accumulator, 0: requantize to int8
_DST_ADD = const(19)  # 128 writes offset binary
_LINEAR = const(20)  # then: bias (cols ints), scratch (depth ints)


@micropython.viper
def address_distance(buf, base) -> int:
    """Bytes from the start of `base` to the start of `buf` (both buffers)."""
    return int(ptr8(buf)) - int(ptr8(base))


# ---- x W^T + b, requantized ----------------------------------------------------------------
@micropython.viper
def linear(x: ptr32, w: ptr8):
    """Run a bound linear header with its weights: one call for all rows."""
    h = int(x)
    ext = x[_EXT]  # first: fields that may be negative are sign-extended with it
    rows = x[_ROWS]
    cols = x[_COLS]
    depth = x[_DEPTH]
    src = h + ((x[_SRC] << ext) >> ext)
    src_row = x[_SRC_ROW]
    flip = x[_SRC_FLIP]
    drow = x[_DST_ROW]
    dcol = x[_DST_COL]
    group = x[_DST_GROUP]
    gstride = x[_DST_GSTRIDE]
    wide = x[_DST_WIDE]
    add = x[_DST_ADD]
    m = x[_M]
    s = x[_S]
    p = x[_P]
    cap = x[_CAP]
    lo = ((x[_LO] << ext) >> ext)
    hi = x[_HI]
    half = (1 << s) >> 1
    bias = ptr32(h + _LINEAR * 4)
    xs = h + (_LINEAR + cols) * 4
    end8 = xs + (depth >> 3) * 32
    end = xs + depth * 4
    wstart = int(w)
    gbase = h + ((x[_DST] << ext) >> ext)
    out = gbase
    g = 0
    for i in range(rows):
        row = ptr8(src + i * src_row)
        scratch = ptr32(xs)
        total = 0
        for k in range(depth):
            v = (row[k] ^ flip) - 128
            scratch[k] = v
            total += v
        correction = 0 - (total << 7)
        w = ptr8(wstart)
        at = out
        for j in range(cols):
            x = ptr32(xs)
            acc = 0
            while int(x) < end8:
                acc += (x[0] * w[0] + x[1] * w[1] + x[2] * w[2] + x[3] * w[3]
                        + x[4] * w[4] + x[5] * w[5] + x[6] * w[6] + x[7] * w[7])
                x = ptr32(int(x) + 32)
                w = ptr8(int(w) + 8)
            while int(x) < end:
                acc += x[0] * w[0]
                x = ptr32(int(x) + 4)
                w = ptr8(int(w) + 1)
            v = ((acc + bias[j] + correction) << ext) >> ext
            if wide:
                ptr32(at)[0] = v
            else:
                if v > cap:
                    v = cap
                elif v < 0 - cap:
                    v = 0 - cap
                y = ((v >> p) * m + half) >> s
                if y > hi:
                    y = hi
                elif y < lo:
                    y = lo
                ptr8(at)[0] = y + add
            at += dcol
        g += 1
        if g == group:
            g = 0
            gbase += gstride
            out = gbase
        else:
            out += drow


# ---- elementwise -----------------------------------------------------------------------------
@micropython.viper
def table_lookup(src: ptr8, dst: ptr8, n: int, table: ptr8):
    """lookup's loop, unchecked."""
    for i in range(n):
        dst[i] = table[src[i]]


def lookup(src, dst, n, table):
    """dst[i] = table[src[i]]: an int8 -> int8 function as a 256-entry table (indexed by the
    int8's byte, so entry 255 is the value for -1). src and dst may be the same buffer."""
    need("src", src, 1, n)
    need("dst", dst, 1, n)
    need("table", table, 1, 256)
    table_lookup(src, dst, n, table)


# ---- headers: made and checked once, then the kernels run with no checks ------------------
def need(name, buf, itemsize, count):
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


def need_int(name, v, low=0):
    """v, checked to be an int >= low (ValueError naming it otherwise)."""
    if not isinstance(v, int) or v < low:
        raise ValueError("%s must be an int >= %d, got %r" % (name, low, v))
    return v


def set_multiplier(h, mult, lo=-128, hi=127):
    """Check the multiplier (m, s, p, cap) and the saturation bounds; put them in header h."""
    m, s, p, cap = mult
    if not valid_multiplier(m, s, p, cap):
        raise ValueError("multiplier (m=%r, s=%r, p=%r, cap=%r) is not %s: use "
                         "int8/fixedpoint.py's fixed_point" % (m, s, p, cap, MULTIPLIER_RULE))
    if not -128 <= lo <= hi <= 127:
        raise ValueError("saturation bounds must satisfy -128 <= lo <= hi <= 127, got %r, %r"
                         % (lo, hi))
    h[_M], h[_S], h[_P], h[_CAP], h[_LO], h[_HI] = m, s, p, cap, lo, hi


def new_header(fields, mult):
    """A zeroed header of `fields` ints with the word size's EXT and, if given, a multiplier."""
    h = array.array("i", bytes(4 * fields))
    h[_EXT] = EXT
    if mult is not None:
        set_multiplier(h, mult)
    return h


def linear_header(cols, depth, bias=None, mult=None, lo=-128, hi=127):
    """The header of y = x W^T + b for an offset-binary W (cols, depth).

    bias: int32 (cols,) or None; mult None stores the int32 accumulator, else y is
    requantized and saturated to [lo, hi].
    """
    need_int("cols", cols, 1)
    need_int("depth", depth, 1)
    if depth > MAX_DEPTH:
        raise ValueError("depth %d is over %d: the int32 accumulator could overflow"
                         % (depth, MAX_DEPTH))
    h = new_header(_LINEAR + cols + depth, None)
    h[_COLS], h[_DEPTH] = cols, depth
    if mult is None:
        h[_DST_WIDE] = 1
    else:
        set_multiplier(h, mult, lo, hi)
    if bias is not None:
        need("bias", bias, 4, cols)
        room = bias_room(depth)
        for j in range(cols):
            if not -room <= bias[j] <= room:
                raise ValueError("bias %d is %d: the int32 accumulator could overflow"
                                 % (j, bias[j]))
            h[_LINEAR + j] = bias[j]
    return h


def bind_linear(h, w, rows, src, dst, src_off=0, src_row=None, offset_binary=False,
                dst_off=0, dst_row=None, dst_col=1, group=0, group_stride=0, add=0):
    """Point a linear header at its source and destination for `rows` rows; check sizes.

    src: int8 rows (offset binary when `offset_binary`) at src_off, src_row items apart.
    dst: int8 (int32 when the header keeps the accumulator) item (r, j) at
    dst_off + (r // group) group_stride + (r % group) dst_row + j dst_col (group 0: one
    group). add=128 writes offset binary.
    """
    cols, depth = h[_COLS], h[_DEPTH]
    need("w", w, 1, cols * depth)
    src_row = depth if src_row is None else src_row
    dst_row = cols if dst_row is None else dst_row
    for name, v in (("rows", rows), ("src_off", src_off), ("src_row", src_row),
                    ("dst_off", dst_off), ("dst_row", dst_row), ("dst_col", dst_col),
                    ("group", group), ("group_stride", group_stride)):
        need_int(name, v)
    if rows > 1 and src_row < depth:
        raise ValueError("src_row %d is shorter than the depth %d" % (src_row, depth))
    if cols > 1 and dst_col < 1:
        raise ValueError("dst_col must be >= 1 for %d columns" % cols)
    size = 4 if h[_DST_WIDE] else 1
    group = group or rows or 1
    if rows:
        last = rows - 1
        need("src", src, 1, src_off + last * src_row + depth)
        need("dst", dst, size, dst_off + (last // group) * group_stride
             + (last % group) * dst_row + (cols - 1) * dst_col + 1)
    h[_ROWS] = rows
    h[_SRC] = address_distance(src, h) + src_off
    h[_SRC_ROW], h[_SRC_FLIP] = src_row, 0 if offset_binary else 128
    h[_DST] = address_distance(dst, h) + dst_off * size
    h[_DST_ROW], h[_DST_COL] = dst_row * size, dst_col * size
    h[_DST_GROUP], h[_DST_GSTRIDE] = group, group_stride * size
    h[_DST_ADD] = add


def header_bias(h):
    """The int32 bias a linear header holds (a new array of its cols items): a layer keeps
    its bias in the header only."""
    return h[_LINEAR:_LINEAR + h[_COLS]]


def move_dst(h, base, offset):
    """Point a bound linear header's destination `offset` items past `base` (h's destination
    field as bind_linear left it, read with dst_field): a cache's next row, unchecked (the
    caller bound the farthest one once)."""
    h[_DST] = base + offset * (4 if h[_DST_WIDE] else 1)


def dst_field(h):
    """The destination field of a bound linear header (move_dst's base)."""
    return h[_DST]
