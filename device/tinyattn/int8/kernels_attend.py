"""The int8 attention core as one @micropython.viper kernel: scores, softmax, P V, requantize.

Same calling convention as kernels.py (read its docstring): the kernel takes (header, buffer),
the header an array('i') made once, other buffers reached by their byte distance from it.
Per sequence, head and query: the scores q.k (int32, the 8-way unrolled dot of kernels.py),
the integer softmax exp(-(max - score) m) from two tables (EXP_HI, EXP_LO) in Q0.15, then P V
and the requantize into the int8 context. The dot and the requantize are kernels.py's loops written out
again: a viper function calls another only as a Python call, one per item (the kernel tests,
bit for bit against the reference, hold each copy). tinyattn_host.reference.int8 is the same
arithmetic in NumPy, bit for bit.
"""

import array

import micropython
from micropython import const

from .constants import EXP_HI, EXP_LO
from .kernels import MAX_DEPTH, address_distance, need, need_int, new_header, set_multiplier

EXP_LIMIT = const(2848)  # constants.EXP_LIMIT, as a const for the viper loop

_EXP = array.array("H", EXP_HI + EXP_LO)

# the fields every header of kernels.py starts with (viper inlines only its own module's
# const(); tests/host/test_kernel_fields.py checks that each kernels module agrees)
_M = const(0)
_S = const(1)
_P = const(2)
_CAP = const(3)
_EXT = const(6)
_ROWS = const(7)
_SRC = const(8)
# the attention core
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
_A_T = const(27)  # keys a sequence
_A_EKV = const(28)  # H_kv D: a K or V row
_A_GROUP = const(29)  # query heads a K/V head
_A_OFFSET = const(30)  # causal: query i sees key j iff j <= i + offset
_A_BIAS = const(31)
_A_USE_BIAS = const(32)
_A_BIAS_SEQ = const(33)  # bias items a sequence (0: the same (S, T) block for all)
_A_BIAS_HEAD = const(34)  # bias items a head (0: the same for all)
_A_EMPTY = const(35)  # e of each key in a row with every key masked: 2^15 uniform, 0 zeros
_ATTEND = const(36)  # then: the query row (D ints), the scores and probabilities (T ints)


# ---- the attention core: scores, softmax, P V, requantize ---------------------------------
@micropython.viper
def _attend(x: ptr32, w: ptr8):
    h = int(x)
    ext = x[_EXT]
    rows = x[_ROWS]
    S = x[_A_S]
    T = x[_A_T]
    H = x[_A_H]
    D = x[_A_D]
    E = x[_A_E]
    ekv = x[_A_EKV]
    group = x[_A_GROUP]
    q = h + ((x[_SRC] << ext) >> ext)
    k = h + ((x[_A_K] << ext) >> ext)
    vt = h + ((x[_A_VT] << ext) >> ext)
    ctx = h + ((x[_A_CTX] << ext) >> ext)
    keep = ptr8(h + ((x[_A_KEEP] << ext) >> ext))
    use_keep = x[_A_USE_KEEP]
    causal = x[_A_CAUSAL]
    offset = (x[_A_OFFSET] << ext) >> ext
    bias = ptr32(h + ((x[_A_BIAS] << ext) >> ext))
    use_bias = x[_A_USE_BIAS]
    bias_seq = x[_A_BIAS_SEQ]
    bias_head = x[_A_BIAS_HEAD]
    empty = x[_A_EMPTY]
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
    one = 32768
    one = one * one  # 2^30, too big for a literal in a 32-bit viper function
    for r in range(rows):
        i = r % S
        seq = r // S
        first = seq * T  # the sequence's first key row
        last = T  # keys j < last pass the causal mask
        if causal:
            last = i + offset + 1
            if last > T:
                last = T
        span = T  # the keys a row reads: the causal ones when no other mask or trace
        if causal and use_keep == 0 and tracing == 0 and last > 0:
            span = last
        s_end8 = sc + (span >> 3) * 32
        s_end = sc + span * 4
        for head in range(H):
            col = head * D
            kv_col = (head // group) * D  # the head's K/V columns: read by its whole group
            traced = ((seq * H + head) * S + i) * T  # row (b H + head) S + i of a trace
            brow = ptr32(int(bias) + (seq * bias_seq + head * bias_head + i * T) * 4)
            # the query row, sign-extended, and its sum
            qrow = ptr8(q + r * E + col)
            qw = ptr32(qs)
            total = 0
            for d in range(D):
                v = (qrow[d] ^ 128) - 128
                qw[d] = v
                total += v
            correction = 0 - (total << 7)
            # scores against every key (offset-binary K) plus the bias, their maximum over
            # allowed keys
            open_all = 1
            top = 0
            for j in range(span):
                w = ptr8(k + (first + j) * ekv + kv_col)
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
                if use_bias:
                    v = ((v + brow[j]) << ext) >> ext
                scores[j] = v
                if tracing:
                    trace_scores[traced + j] = v
                if (use_keep == 0 or keep[first + j] != 0) and j < last:
                    if open_all:
                        top = v
                        open_all = 0
                    elif v > top:
                        top = v
            # e_j = 2^15 exp(-(top - v_j) r) from the tables; masked keys 0; their sum
            total = 0
            for j in range(span):
                e = 0
                if open_all:
                    e = empty  # every key masked: uniform (as softmax of equal scores) or 0
                elif (use_keep == 0 or keep[first + j] != 0) and j < last:
                    gap = top - ((scores[j] << ext) >> ext)
                    if gap > scap:
                        gap = scap
                    idx = ((gap >> sp) * sm + shalf) >> ss
                    if idx < EXP_LIMIT:
                        e = (exp_hi[idx >> 5] * exp_lo[idx & 31] + 16384) >> 15
                scores[j] = e
                total += e
            # normalise: inv = round(2^30 / total), P_j = round(e_j inv / 2^15)
            inv = 0
            if total:
                inv = (one + (total >> 1)) // total
            total = 0
            for j in range(span):
                pj = (scores[j] * inv + 16384) >> 15
                scores[j] = pj
                total += pj
                if tracing:
                    trace_probs[traced + j] = pj
            # P V_h against V^T rows (offset binary), requantized into the context
            correction = 0 - (total << 7)
            vrow = vt + first * ekv + kv_col * T
            out = ptr8(ctx + r * E + col)
            for d in range(D):
                w = ptr8(vrow + d * T)
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


BIAS_LIMIT = 536870911  # 2^29 - 1 score units: with |q.k| <= D 2^14 <= 2^29, every biased
# score and every gap to the maximum stays in int32


def attend_header(seq_len, num_heads, head_dim, score_mult, ctx_mult, kv_len=None,
                  num_kv_heads=None):
    """The header of the attention core for sequences of seq_len queries and kv_len keys
    (default seq_len), H query heads and H_kv key/value heads (default H; H_kv divides H).

    score_mult: softmax index units (1/256 nat) per score unit; ctx_mult: P V (units of
    V's scale / 2^15) to the context's int8.
    """
    T = seq_len if kv_len is None else kv_len
    H_kv = num_heads if num_kv_heads is None else num_kv_heads
    for name, v in (("seq_len", seq_len), ("num_heads", num_heads), ("head_dim", head_dim),
                    ("kv_len", T), ("num_kv_heads", H_kv)):
        need_int(name, v, 1)
    if num_heads % H_kv:
        raise ValueError("num_kv_heads %d does not divide num_heads %d" % (H_kv, num_heads))
    if head_dim > MAX_DEPTH or T >= 65536:
        raise ValueError("attention of %d keys and head_dim %d is over the int32 limits"
                         % (T, head_dim))
    h = new_header(_ATTEND + head_dim + T, ctx_mult)
    h[_A_S], h[_A_H], h[_A_D], h[_A_E] = seq_len, num_heads, head_dim, num_heads * head_dim
    h[_A_T], h[_A_EKV], h[_A_GROUP] = T, H_kv * head_dim, num_heads // H_kv
    set_multiplier(h, score_mult)  # checked, then moved to its own fields
    h[_A_SM], h[_A_SM + 1], h[_A_SM + 2], h[_A_SM + 3] = h[_M], h[_S], h[_P], h[_CAP]
    set_multiplier(h, ctx_mult)
    h[_A_EXP] = address_distance(_EXP, h)
    return h


def bind_attend(h, rows, q, k, vt, ctx, trace_scores=None, trace_probs=None):
    """Point an attention header at Q (int8 rows of E = H D), K (offset binary, rows of
    E_kv = H_kv D), V^T (offset binary: sequence b, column c, key j at b E_kv T + c T + j) and
    the int8 context (rows of E); B = rows / S sequences, B T key rows.

    trace_scores (int32) and trace_probs (array 'H'), (B H S, T) each, get every score and
    probability when given. The next call has no mask and no bias (set_keep, set_bias).
    """
    S, T, E, ekv = h[_A_S], h[_A_T], h[_A_E], h[_A_EKV]
    need_int("rows", rows)
    if rows % S:
        raise ValueError("%d rows are not whole sequences of %d" % (rows, S))
    keys = rows // S * T
    for name, buf, n in (("q", q, rows * E), ("k", k, keys * ekv), ("vt", vt, keys * ekv),
                         ("ctx", ctx, rows * E)):
        need(name, buf, 1, n)
    h[_ROWS] = rows
    h[_SRC] = address_distance(q, h)
    h[_A_K], h[_A_VT], h[_A_CTX] = (address_distance(k, h), address_distance(vt, h),
                                    address_distance(ctx, h))
    h[_A_TRACE] = trace_scores is not None
    if trace_scores is not None:
        need("trace_scores", trace_scores, 4, rows * h[_A_H] * T)
        need("trace_probs", trace_probs, 2, rows * h[_A_H] * T)
        h[_A_SCORES] = address_distance(trace_scores, h)
        h[_A_PROBS] = address_distance(trace_probs, h)
    set_keep(h, None, False)
    set_bias(h, None)


def bind_query(h, q, k, vt, ctx, keep=None):
    """A stream's step: a header of seq_len 1 and T keys at one query row q (E int8), a cache
    of K (T rows of E_kv) and V^T (key j of column c at c T + j; both offset binary), the
    context row ctx (E int8) and keep (T bytes, 0 hides a key), or None: causal, the keys up
    to the position set_position gives (a decoder's cache, filled in order)."""
    if h[_A_S] != 1:
        raise ValueError("a query header has seq_len 1, this one %d" % h[_A_S])
    bind_attend(h, 1, q, k, vt, ctx)
    set_keep(h, keep, keep is None)


def set_position(h, pos):
    """A causal query header's next call reads keys 0..pos (bind_query without keep)."""
    h[_A_OFFSET] = pos


def set_keep(h, keep, causal, causal_offset=0, uniform=True):
    """Masks of the next call: keep[b T + j] == 0 hides key j of sequence b; causal hides
    key j from query i when j > i + causal_offset. A row with every key hidden attends
    uniformly (uniform, the 2017 layer's -1e9 scores) or gives zeros (ONNX's convention)."""
    if keep is not None:
        need("keep", keep, 1, h[_ROWS] // h[_A_S] * h[_A_T])
        h[_A_KEEP] = address_distance(keep, h)
    if not isinstance(causal_offset, int):
        raise ValueError("causal_offset must be an int, got %r" % (causal_offset,))
    h[_A_USE_KEEP] = keep is not None
    h[_A_CAUSAL] = bool(causal)
    h[_A_OFFSET] = causal_offset
    h[_A_EMPTY] = 32768 if uniform else 0


def set_bias(h, bias):
    """The additive bias of the next call, int32 score units within +-BIAS_LIMIT (as
    tinyattn_host.reference.int8_attend.quantize_bias makes them): array('i') of S T items
    (one block for every sequence and head) or B H S T (one block per sequence and head, in
    that order), or None."""
    h[_A_USE_BIAS] = 0
    if bias is None:
        return
    S, T, H = h[_A_S], h[_A_T], h[_A_H]
    need("bias", bias, 4, 0)  # a buffer of int32
    n, block = len(bias), h[_ROWS] * H * T
    if n == S * T:
        h[_A_BIAS_SEQ] = h[_A_BIAS_HEAD] = 0
    elif n == block:
        h[_A_BIAS_SEQ], h[_A_BIAS_HEAD] = H * S * T, S * T
    else:
        raise ValueError("bias holds %d items, it needs S T = %d or B H S T = %d"
                         % (n, S * T, block))
    if max(max(bias), -min(bias)) > BIAS_LIMIT:
        raise ValueError("bias has an item beyond +-%d score units" % BIAS_LIMIT)
    h[_A_BIAS], h[_A_USE_BIAS] = address_distance(bias, h), 1


def fast_call(h):
    """Whether a bound header's next call is one the fast cores take: no keep mask, no trace
    (GQA, T keys, a bias and causal offsets they take)."""
    return not (h[_A_USE_KEEP] or h[_A_TRACE])


def attend(h, _=None):
    """Run a bound attention header: every sequence, head and query (`_` is unused)."""
    _attend(h, _EXP)
