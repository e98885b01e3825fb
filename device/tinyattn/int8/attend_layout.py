"""The work buffer and exp table of asm_attend.attend (and pie_work, asm_pie_attend's), made
when an attention layer is planned (plain Python: every port can make them; only xtensawin
boards run the kernels).

MAC16 multiplies 16-bit halves and loads 32 bits at a time, so the kernel widens, per
sequence and key/value head (once for its group of query heads), K_h and V_h^T to int16 in the
work buffer, and per query the query row;
each row is padded with zeros to a multiple of 4 items (one pass of its MAC loop) and each
area has 2 items of look-ahead room (the loop loads one word past what it multiplies). K and V
rows are widened two items at a time: with an odd length the item after the row lands in its
padding, where the zeros of the query row's (P's) padding multiply it. The
work buffer, array('i'), byte offsets from its start:

    0: words   passes over D (pd), passes over the T keys (ps), the areas' offsets (Q, K,
               V, P, scores), then words the kernel fills in (GEOMETRY words in all)
    Q          the query row, int16, 4 pd + 2 items
    K          T rows of 4 pd int16 (k - 128), + 2
    V          D rows of 4 ps int16 (128 - v: negated, see asm_attend), + 2
    P          the probabilities negated, int16, 4 ps + 2 (-32768 holds -1.0)
    scores     T int32

The exp table, array('H'): e(idx) = round(2^15 exp(-idx / 256)) from EXP_HI and EXP_LO as the
viper kernel computes it, for every index the score multiplier can reach (0 from EXP_LIMIT on),
so the kernel needs no bound check. Its size is about 2 * EXP_LIMIT bytes (~5.7 KB).
"""

import array

from .constants import EXP_HI, EXP_LIMIT, EXP_LO

GEOMETRY = 24


def _passes(n):
    return (n + 3) // 4


def work(kv_len, head_dim):
    """The zeroed work buffer of T keys and heads of D (its geometry words filled in)."""
    pd, ps = _passes(head_dim), _passes(kv_len)
    sizes = (8 * pd + 4, kv_len * 8 * pd + 4, head_dim * 8 * ps + 4, 8 * ps + 4, 4 * kv_len)
    at = 4 * GEOMETRY
    w = array.array("i", bytes(at + sum(sizes)))
    w[0], w[1] = pd, ps
    for n, size in enumerate(sizes):
        w[2 + n] = at
        at += size
    return w


def last_index(score_mult):
    """The largest exp index the score multiplier (m, s, p, cap) makes from a gap in [0, cap]."""
    m, s, p, cap = score_mult
    return ((cap >> p) * m + ((1 << s) >> 1)) >> s


def exp_table(score_mult):
    """The exp table of indices 0 .. last_index(score_mult)."""
    n = last_index(score_mult) + 1
    t = array.array("H", bytes(2 * n))
    for i in range(min(n, EXP_LIMIT)):
        t[i] = (EXP_HI[i >> 5] * EXP_LO[i & 31] + 16384) >> 15
    return t


def pie_work(kv_len, head_dim):
    """The zeroed work buffer of asm_pie_attend (T keys, D <= 16): the GEOMETRY words (ps =
    passes of 16 keys, the areas' offsets from their base), then from the first 16-byte
    boundary past them: Q (16 bytes), K (T rows of 16 int8), V (D rows of 16 ps int16), P
    (16 ps int16), scores (T int32), each a multiple of 16 bytes; V and P have 16 bytes of
    look-ahead room (the P V loop loads one block past what it multiplies)."""
    if head_dim > 16:
        raise ValueError("the PIE attention core takes heads of 16 at most, got %d" % head_dim)
    ps = (kv_len + 15) // 16
    sizes = (16, 16 * kv_len, 32 * ps * head_dim + 16, 32 * ps + 16, 16 * ((kv_len + 3) // 4))
    w = array.array("i", bytes(4 * GEOMETRY + 16 + sum(sizes)))
    w[0], w[1] = 1, ps
    at = 0
    for n, size in enumerate(sizes):
        w[2 + n] = at
        at += size
    return w
