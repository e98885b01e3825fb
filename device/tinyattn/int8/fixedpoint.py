"""A real multiplier r > 0 as the ints (m, s, p, cap) the integer kernels use.

Plain Python (math and nn/checks.py): the host's integer reference runs this very file
(tinyattn_host.device_modules), so both ends make multipliers by one definition.
"""

import math

from ..nn.checks import is_int


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


SCALE_STEPS = 32
"""A scale's range is rounded up to one of 32 steps an octave (5 significant bits): float32
calibration noise (a board's, or the host's float64) then moves a scale only when a max |.|
lies within that noise of a step, so a board and the host make the same int8 file."""


def scale_range(max_abs_value):
    """max(max_abs_value, 1e-6) rounded up to a step (SCALE_STEPS; exact in float32: at most
    6 significant bits); the int8 range it gives up is under 1 / SCALE_STEPS (3%)."""
    f, e = math.frexp(max(max_abs_value, 1e-6))  # f in [0.5, 1)
    return math.ldexp(math.ceil(f * 2 * SCALE_STEPS), e - 1) / SCALE_STEPS


MULTIPLIER_RULE = "[m, s, p, cap]: ints 0 <= m < 2^15, 0 <= s <= 30, 0 <= p <= 16, " \
    "0 < cap < 2^(15+p), cap < 2^31"
"""What valid_multiplier holds a multiplier to (what fixed_point makes), in words."""


def valid_multiplier(m, s, p, cap):
    """Whether (m, s, p, cap) are ints the kernels take: MULTIPLIER_RULE."""
    for v in (m, s, p, cap):
        if not is_int(v):
            return False
    return 0 <= m < 32768 and 0 <= s <= 30 and 0 <= p <= 16 and 0 < cap < (1 << (15 + p)) \
        and cap < 2147483648


ADD_RULE = "[ma, mb, s]: ints 0 <= ma, mb < 2^15, 0 <= s <= 30"
"""What valid_add holds an add's multipliers to (what norm.add_multipliers makes), in words."""


def valid_add(ma, mb, s):
    """Whether (ma, mb, s) are ints the add kernel takes: ADD_RULE."""
    for v in (ma, mb, s):
        if not is_int(v):
            return False
    return 0 <= ma < 32768 and 0 <= mb < 32768 and 0 <= s <= 30


def bias_room(depth):
    """The largest |bias| that leaves a dot product of `depth` int8 x offset-binary terms
    (each < 2^14 in magnitude) inside int32."""
    return 2147483647 - depth * 16384
