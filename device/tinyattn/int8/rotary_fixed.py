"""Rotary positions in fixed point: each pair's cos and sin at a position as Q14 integers,
made with integers only, so a board (float32) and the host (float64) turn q and k alike.

Plain Python (math only): tinyattn_host.reference.int8_decoder runs this very file.
A frequency theta^(-2i/D) is the one float step, snapped to a multiple of 2^-FREQ_BITS (its
float32 error is far below the snap); the angle p f is then an exact integer, reduced by
2 pi and its cos and sin summed as Taylor series in Q40 integers (MicroPython's long ints).
"""

FREQ_BITS = 20  # a frequency's unit: 2^-20 rad a position
TRIG_BITS = 14  # cos and sin in Q14: 16384 is 1.0
_Q = 40  # the series' fixed point
_PI = 3454217652358  # round(pi 2^40)


def frequencies(head_dim, theta):
    """The D/2 frequencies theta^(-2i/D), each an int of 2^-FREQ_BITS rad a position."""
    return [int(theta ** (-2.0 * i / head_dim) * (1 << FREQ_BITS) + 0.5)
            for i in range(head_dim // 2)]


def cos_sin(angle):
    """(cos, sin) in Q14 of angle (an int, 2^-FREQ_BITS rad), rounded half up."""
    x = angle << (_Q - FREQ_BITS)
    x = (x + _PI) % (2 * _PI) - _PI  # into [-pi, pi)
    one, ax = 1 << _Q, abs(x)
    c, s = 0, 0
    term, n = one, 0  # |x|^n / n!, in Q40, floored: it falls to 0
    while term:
        if n % 4 == 0:
            c += term
        elif n % 4 == 1:
            s += term
        elif n % 4 == 2:
            c -= term
        else:
            s -= term
        n += 1
        term = term * ax // one // n
    if x < 0:  # sin is odd, cos even
        s = -s
    half = 1 << (_Q - TRIG_BITS - 1)
    return (c + half) >> (_Q - TRIG_BITS), (s + half) >> (_Q - TRIG_BITS)


def table(pos, freqs):
    """[cos_0 .. cos_{D/2-1}, sin_0 .. sin_{D/2-1}] in Q14 at position pos."""
    pairs = [cos_sin(pos * f) for f in freqs]
    return [c for c, _ in pairs] + [s for _, s in pairs]
