"""A real multiplier r > 0 as the ints (m, s, p, cap) the integer kernels use.

Plain Python (math only): the host's integer reference runs this very file
(tinyattn_host.shared), so both ends make multipliers by one definition.
"""

import math


def fixed_point(r, limit):
    """(m, s, p, cap) with v r ~ ((clamp(v, -cap, cap) >> p) m + 2^(s-1)) >> s.

    cap: the smallest |v| with |v r| > limit (beyond it the result saturates, or the exp
    table is 0); p makes cap >> p < 2^15; m in [2^14, 2^15) carries 15 significant bits.
    """
    if not r > 0 or r == math.inf:
        raise ValueError("multiplier must be a finite number > 0, got %r" % (r,))
    cap = min(int(limit / r) + 1, 2147483647)
    p = 0
    while (cap >> p) >= 32768:
        p += 1
    t = r * (1 << p)
    s = 0
    while t * (1 << s) < 16384 and s < 30:
        s += 1
    m = int(math.floor(t * (1 << s) + 0.5))
    if m >= 32768:
        m, s = (m + 1) >> 1, s - 1
        if s < 0:
            m, s = 32767, 0
    return m, s, p, cap
