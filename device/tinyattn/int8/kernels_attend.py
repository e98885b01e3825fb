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
_ATTEND = const(27)  # then: the query row (D ints), the scores and probabilities (S ints)


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


def attend_header(seq_len, num_heads, head_dim, score_mult, ctx_mult):
    """The header of the attention core for sequences of seq_len tokens, E = H D.

    score_mult: softmax index units (1/256 nat) per score unit; ctx_mult: P V (units of
    V's scale / 2^15) to the context's int8.
    """
    for name, v in (("seq_len", seq_len), ("num_heads", num_heads), ("head_dim", head_dim)):
        need_int(name, v, 1)
    if head_dim > MAX_DEPTH or seq_len >= 65536:
        raise ValueError("attention of %d keys and head_dim %d is over the int32 limits"
                         % (seq_len, head_dim))
    h = new_header(_ATTEND + head_dim + seq_len, ctx_mult)
    h[_A_S], h[_A_H], h[_A_D], h[_A_E] = seq_len, num_heads, head_dim, num_heads * head_dim
    set_multiplier(h, score_mult)  # checked, then moved to its own fields
    h[_A_SM], h[_A_SM + 1], h[_A_SM + 2], h[_A_SM + 3] = h[_M], h[_S], h[_P], h[_CAP]
    set_multiplier(h, ctx_mult)
    h[_A_EXP] = address_distance(_EXP, h)
    return h


def bind_attend(h, rows, q, k, vt, ctx, trace_scores=None, trace_probs=None):
    """Point an attention header at Q (int8 rows of E), K (offset binary, rows of E), V^T
    (offset binary: sequence b, column c, key j at b E S + c S + j) and the int8 context.

    trace_scores (int32) and trace_probs (array 'H'), (B H S, S) each, get every score and
    probability when given.
    """
    S, E = h[_A_S], h[_A_E]
    need_int("rows", rows)
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


def bind_query(h, q, k, vt, ctx, keep):
    """Point an attention header of S keys at one query row q (E int8) against a cache: K (S
    rows of E, offset binary), V^T (column c, key j at c S + j, offset binary), the context
    row ctx (E int8) and keep (S bytes, 0 hides a key; never causal): a stream's step."""
    S, E = h[_A_S], h[_A_E]
    for name, buf, n in (("q", q, E), ("k", k, S * E), ("vt", vt, S * E), ("ctx", ctx, E),
                         ("keep", keep, S)):
        need(name, buf, 1, n)
    h[_ROWS] = 1  # row 0 of a sequence of S keys: its keys are the cache's rows 0 .. S - 1
    h[_SRC] = address_distance(q, h)
    h[_A_K], h[_A_VT], h[_A_CTX] = (address_distance(k, h), address_distance(vt, h),
                                    address_distance(ctx, h))
    h[_A_TRACE] = 0
    h[_A_KEEP] = address_distance(keep, h)
    h[_A_USE_KEEP], h[_A_CAUSAL] = 1, 0


def set_keep(h, keep, causal):
    """Masks of the next call: keep[b S + j] == 0 hides key j of sequence b; causal hides
    keys after the query. A row with every key hidden attends uniformly."""
    if keep is not None:
        need("keep", keep, 1, h[_ROWS])
        h[_A_KEEP] = address_distance(keep, h)
    h[_A_USE_KEEP] = keep is not None
    h[_A_CAUSAL] = bool(causal)


def unmasked(h):
    """Whether a bound header's next call has no keep mask, causal flag or trace."""
    return not (h[_A_USE_KEEP] or h[_A_CAUSAL] or h[_A_TRACE])


def attend(h):
    """Run a bound attention header: every sequence, head and query in one call."""
    _attend(h, _EXP)
