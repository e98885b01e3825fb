"""Integer kernels of the int8 path, each an @micropython.viper function: no float inside.

Calling convention. A kernel takes two buffers, `(header, weights)`, so that viper keeps both
in its two register locals (a native function in a .mpy holds at most two locals in
registers, one when it has three or more parameters); everything else is an int of the
header, an array('i') made once per layer: sizes, multipliers, and the *byte distance* from
the header to every other buffer it reads or writes (MicroPython never moves a live object, so
a distance found once stays true). After the fields come the bias and a scratch row.

Formats: int8 tensors are bytes, row-major; "offset binary" bytes hold v + 128 (the same bits
as v with the top one flipped); accumulators int32; softmax probabilities Q0.15 (32768 = 1.0).
A real multiplier r > 0 is the four ints (m, s, p, cap) of quant.fixed_point:
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
EXP_LIMIT = const(2848)  # 32 * len(EXP_HI)
"""Index 2848 (11.1 nats below the row maximum) and beyond: exp is 0."""
PROB_ONE = 32768
"""1.0 in the probabilities' Q0.15."""
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

_EXP = array.array("H", EXP_HI + EXP_LO)

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
# attention core
_A_S = const(9)
_A_H = const(10)
_A_D = const(11)
_A_E = const(12)
_A_K = const(13)
_A_VT = const(14)
_A_CTX = const(15)
_A_KEEP = const(16)
_A_USE_KEEP = const(17)
_A_CAUSAL = const(18)
_A_SM = const(19)  # the score multiplier m, s, p, cap
_A_EXP = const(23)
_A_TRACE = const(24)
_A_SCORES = const(25)
_A_PROBS = const(26)
_ATTEND = const(27)  # then: the query row (D ints), the scores and probabilities (S ints)
# pooling
_POOL_S = const(9)
_POOL_COLS = const(10)
_POOL_DST = const(11)
_POOL = const(12)


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


# ---- the attention core: scores, softmax, P V, requantize ---------------------------------
@micropython.viper
def _attend(x: ptr32, w: ptr8):
    h = int(x)
    ext = x[_EXT]
    rows = x[_ROWS]
    S = x[_A_S]
    H = x[_A_H]
    D = x[_A_D]
    E = x[_A_E]
    q = h + ((x[_SRC] << ext) >> ext)
    k = h + ((x[_A_K] << ext) >> ext)
    vt = h + ((x[_A_VT] << ext) >> ext)
    ctx = h + ((x[_A_CTX] << ext) >> ext)
    keep = ptr8(h + ((x[_A_KEEP] << ext) >> ext))
    use_keep = x[_A_USE_KEEP]
    causal = x[_A_CAUSAL]
    sm = x[_A_SM]
    ss = x[_A_SM + 1]
    sp = x[_A_SM + 2]
    scap = x[_A_SM + 3]
    shalf = (1 << ss) >> 1
    m = x[_M]
    s = x[_S]
    p = x[_P]
    cap = x[_CAP]
    half = (1 << s) >> 1
    exp_hi = ptr16(h + ((x[_A_EXP] << ext) >> ext))
    exp_lo = ptr16(int(exp_hi) + 178)
    tracing = x[_A_TRACE]
    trace_scores = ptr32(h + ((x[_A_SCORES] << ext) >> ext))
    trace_probs = ptr16(h + ((x[_A_PROBS] << ext) >> ext))
    qs = h + _ATTEND * 4
    sc = qs + D * 4
    scores = ptr32(sc)
    q_end8 = qs + (D >> 3) * 32
    q_end = qs + D * 4
    s_end8 = sc + (S >> 3) * 32
    s_end = sc + S * 4
    one = 32768
    one = one * one  # 2^30, too big for a literal in a 32-bit viper function
    for r in range(rows):
        i = r % S
        first = r - i  # the sequence's first row
        for head in range(H):
            col = head * D
            traced = ((first * H + head * S) + i) * S  # row (b H + head) S + i of a trace
            # the query row, sign-extended, and its sum
            qrow = ptr8(q + r * E + col)
            qw = ptr32(qs)
            total = 0
            for d in range(D):
                v = (qrow[d] ^ 128) - 128
                qw[d] = v
                total += v
            correction = 0 - (total << 7)
            # scores against every key (offset-binary K), their maximum over allowed keys
            open_all = 1
            top = 0
            for j in range(S):
                w = ptr8(k + (first + j) * E + col)
                x = ptr32(qs)
                acc = 0
                while int(x) < q_end8:
                    acc += (x[0] * w[0] + x[1] * w[1] + x[2] * w[2] + x[3] * w[3]
                            + x[4] * w[4] + x[5] * w[5] + x[6] * w[6] + x[7] * w[7])
                    x = ptr32(int(x) + 32)
                    w = ptr8(int(w) + 8)
                while int(x) < q_end:
                    acc += x[0] * w[0]
                    x = ptr32(int(x) + 4)
                    w = ptr8(int(w) + 1)
                v = ((acc + correction) << ext) >> ext
                scores[j] = v
                if tracing:
                    trace_scores[traced + j] = v
                if (use_keep == 0 or keep[first + j] != 0) and (causal == 0 or j <= i):
                    if open_all:
                        top = v
                        open_all = 0
                    elif v > top:
                        top = v
            # e_j = 2^15 exp(-(top - v_j) r) from the tables; masked keys 0; their sum
            total = 0
            for j in range(S):
                e = 0
                if open_all:
                    e = 32768  # every key masked: uniform, as softmax of equal scores
                elif (use_keep == 0 or keep[first + j] != 0) and (causal == 0 or j <= i):
                    gap = top - ((scores[j] << ext) >> ext)
                    if gap > scap:
                        gap = scap
                    idx = ((gap >> sp) * sm + shalf) >> ss
                    if idx < EXP_LIMIT:
                        e = (exp_hi[idx >> 5] * exp_lo[idx & 31] + 16384) >> 15
                scores[j] = e
                total += e
            # normalise: inv = round(2^30 / total), P_j = round(e_j inv / 2^15)
            inv = (one + (total >> 1)) // total
            total = 0
            for j in range(S):
                pj = (scores[j] * inv + 16384) >> 15
                scores[j] = pj
                total += pj
                if tracing:
                    trace_probs[traced + j] = pj
            # P V_h against V^T rows (offset binary), requantized into the context
            correction = 0 - (total << 7)
            vrow = vt + first * E + col * S
            out = ptr8(ctx + r * E + col)
            for d in range(D):
                w = ptr8(vrow + d * S)
                x = ptr32(sc)
                acc = 0
                while int(x) < s_end8:
                    acc += (x[0] * w[0] + x[1] * w[1] + x[2] * w[2] + x[3] * w[3]
                            + x[4] * w[4] + x[5] * w[5] + x[6] * w[6] + x[7] * w[7])
                    x = ptr32(int(x) + 32)
                    w = ptr8(int(w) + 8)
                while int(x) < s_end:
                    acc += x[0] * w[0]
                    x = ptr32(int(x) + 4)
                    w = ptr8(int(w) + 1)
                v = acc + correction
                if v > cap:
                    v = cap
                elif v < 0 - cap:
                    v = 0 - cap
                y = ((v >> p) * m + half) >> s
                if y > 127:
                    y = 127
                elif y < -128:
                    y = -128
                out[d] = y


# ---- pooling: the sum of each sequence's tokens, requantized --------------------------------
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


def _count(name, v, low=0):
    if not isinstance(v, int) or v < low:
        raise ValueError("%s must be an int >= %d, got %r" % (name, low, v))
    return v


def _set_multiplier(h, mult, lo=-128, hi=127):
    m, s, p, cap = mult
    if not (0 <= m < 32768 and 0 <= s <= 30 and 0 <= p <= 16 and 0 < cap < (1 << (15 + p))
            and cap < 2147483648):
        raise ValueError("multiplier (m=%r, s=%r, p=%r, cap=%r) is outside 0 <= m < 2^15, "
                         "s <= 30, 0 < cap < 2^(15+p): use quant.fixed_point" % (m, s, p, cap))
    if not -128 <= lo <= hi <= 127:
        raise ValueError("saturation bounds must satisfy -128 <= lo <= hi <= 127, got %r, %r"
                         % (lo, hi))
    h[_M], h[_S], h[_P], h[_CAP], h[_LO], h[_HI] = m, s, p, cap, lo, hi


def _header(fields, mult):
    h = array.array("i", bytes(4 * fields))
    h[_EXT] = EXT
    if mult is not None:
        _set_multiplier(h, mult)
    return h


def linear_header(cols, depth, bias=None, mult=None, lo=-128, hi=127):
    """The header of y = x W^T + b for an offset-binary W (cols, depth).

    bias: int32 (cols,) or None; mult None stores the int32 accumulator, else y is
    requantized and saturated to [lo, hi].
    """
    _count("cols", cols, 1)
    _count("depth", depth, 1)
    if depth > MAX_DEPTH:
        raise ValueError("depth %d is over %d: the int32 accumulator could overflow"
                         % (depth, MAX_DEPTH))
    h = _header(_LINEAR + cols + depth, None)
    h[_COLS], h[_DEPTH] = cols, depth
    if mult is None:
        h[_DST_WIDE] = 1
    else:
        _set_multiplier(h, mult, lo, hi)
    if bias is not None:
        need("bias", bias, 4, cols)
        room = 2147483647 - depth * 16384
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
        _count(name, v)
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


def rebind_source(h, src, src_off=0):
    """Point a bound linear header at another source of the same shape (checked)."""
    need("src", src, 1, src_off + (h[_ROWS] - 1) * h[_SRC_ROW] + h[_DEPTH] if h[_ROWS] else 0)
    h[_SRC] = address_distance(src, h) + src_off


def attend_header(seq_len, num_heads, head_dim, score_mult, ctx_mult):
    """The header of the attention core for sequences of seq_len tokens, E = H D.

    score_mult: softmax index units (1/256 nat) per score unit; ctx_mult: P V (units of
    V's scale / 2^15) to the context's int8.
    """
    for name, v in (("seq_len", seq_len), ("num_heads", num_heads), ("head_dim", head_dim)):
        _count(name, v, 1)
    if head_dim > MAX_DEPTH or seq_len >= 65536:
        raise ValueError("attention of %d keys and head_dim %d is over the int32 limits"
                         % (seq_len, head_dim))
    h = _header(_ATTEND + head_dim + seq_len, ctx_mult)
    h[_A_S], h[_A_H], h[_A_D], h[_A_E] = seq_len, num_heads, head_dim, num_heads * head_dim
    _set_multiplier(h, score_mult)  # checked, then moved to its own fields
    h[_A_SM], h[_A_SM + 1], h[_A_SM + 2], h[_A_SM + 3] = h[_M], h[_S], h[_P], h[_CAP]
    _set_multiplier(h, ctx_mult)
    h[_A_EXP] = address_distance(_EXP, h)
    return h


def bind_attend(h, rows, q, k, vt, ctx, trace_scores=None, trace_probs=None):
    """Point an attention header at Q (int8 rows of E), K (offset binary, rows of E), V^T
    (offset binary: sequence b, column c, key j at b E S + c S + j) and the int8 context.

    trace_scores (int32) and trace_probs (array 'H'), (B H S, S) each, get every score and
    probability when given.
    """
    S, E = h[_A_S], h[_A_E]
    _count("rows", rows)
    if rows % S:
        raise ValueError("%d rows are not whole sequences of %d" % (rows, S))
    for name, buf in (("q", q), ("k", k), ("vt", vt), ("ctx", ctx)):
        need(name, buf, 1, rows * E)
    h[_ROWS] = rows
    h[_SRC] = address_distance(q, h)
    h[_A_K], h[_A_VT], h[_A_CTX] = (address_distance(k, h), address_distance(vt, h),
                                    address_distance(ctx, h))
    h[_A_TRACE] = trace_scores is not None
    if trace_scores is not None:
        need("trace_scores", trace_scores, 4, rows * h[_A_H] * S)
        need("trace_probs", trace_probs, 2, rows * h[_A_H] * S)
        h[_A_SCORES] = address_distance(trace_scores, h)
        h[_A_PROBS] = address_distance(trace_probs, h)
    set_keep(h, None, False)


def set_keep(h, keep, causal):
    """Masks of the next call: keep[b S + j] == 0 hides key j of sequence b; causal hides
    keys after the query. A row with every key hidden attends uniformly."""
    if keep is not None:
        need("keep", keep, 1, h[_ROWS])
        h[_A_KEEP] = address_distance(keep, h)
    h[_A_USE_KEEP] = keep is not None
    h[_A_CAUSAL] = bool(causal)


def attend(h):
    """Run a bound attention header: every sequence, head and query in one call."""
    _attend(h, _EXP)


def pool_header(seq_len, cols, mult):
    """The header of a mean over each sequence's tokens: the int sum times mult."""
    _count("seq_len", seq_len, 1)
    _count("cols", cols, 1)
    h = _header(_POOL, mult)
    h[_POOL_S], h[_POOL_COLS] = seq_len, cols
    return h


def bind_pool(h, groups, src, dst):
    """Point a pooling header at int8 src (groups * seq_len, cols) and int8 dst (groups, cols)."""
    _count("groups", groups)
    S, cols = h[_POOL_S], h[_POOL_COLS]
    need("src", src, 1, groups * S * cols)
    need("dst", dst, 1, groups * cols)
    h[_ROWS] = groups
    h[_SRC], h[_POOL_DST] = address_distance(src, h), address_distance(dst, h)


def pool(h):
    """Run a bound pooling header."""
    _pool(h, _EXP)
