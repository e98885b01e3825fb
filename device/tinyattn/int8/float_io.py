"""A model's float input to int8, and its int outputs to float32, each in one viper pass.

The input: quantize_tensor's arithmetic as 255 steps.

numbers.py quantizes with ulab's float32 operations, u = uint8(clip(x * inverse, low, 127)
+ 128) and the int8 u - 128: four arrays a call. Each operation is monotonic, so u is a
non-decreasing step function of x: u >= k exactly when x is at or past the k-th step. Finite
float32 bit patterns b keep their order as the signed ints key(b) = b ^ ((b >> 31) &
0x7FFFFFFF) (the same map takes a key back to its bits), so the 255 steps are found once, by
bisection over keys, with ulab's own operations (`evaluate`: whatever this port's float does,
the table does), and every call is a binary search of each input's key, 8 comparisons and no
array made; a NaN or an infinity (every exponent bit set) stops it.

    table = float_steps.steps(evaluate)  # array('i'): the word shift, two masks, 256 steps
    bad = to_int8(x, out, n, table)      # x: the float32 buffer of a dense ulab array

The output: to_float32 writes each int as the nearest float32 (ties to even: C's conversion,
exact below 2^24) into a float ulab array's buffer, one multiply by the scale then makes the
fresh output array (numbers.dequantize's float32 product, without its two arrays).
"""

import array

import micropython
from micropython import const

LOW31 = 0x7FFFFFFF  # flips a negative pattern's magnitude bits: key <-> bits
EXPONENT = 0x7F800000  # every exponent bit: infinity or NaN
FIELDS = const(3)  # [word shift, exponent mask, low 31 bits], then the steps
FIRST = -2139095041  # key(-infinity): below every finite float's key
LAST = 2139095039  # key(largest float): u there is 255 for every scale


@micropython.viper
def _word_bits() -> int:
    n = 0
    x = 1
    while x != 0:
        x = x << 1
        n += 1
    return n


EXT = _word_bits() - 32  # a 32-bit load sign-extended: (v << EXT) >> EXT


@micropython.viper
def to_int8(x: ptr32, out: ptr8, n: int, table: ptr32) -> int:
    """out[i] = the int8 of float32 x[i] by the table's steps, i < n; 0, or 1 + the index of
    the first NaN or infinity (the rest then not written)."""
    ext = table[0]
    exponent = table[1]
    low31 = table[2]
    step = ptr32(int(table) + FIELDS * 4)
    for i in range(n):
        b = (x[i] << ext) >> ext
        if (b & exponent) == exponent:
            return i + 1
        key = b ^ ((b >> 31) & low31)
        u = 0  # a binary search, written out: u + half is the next step to pass
        if key >= (step[128] << ext) >> ext:
            u = 128
        if key >= (step[u + 64] << ext) >> ext:
            u += 64
        if key >= (step[u + 32] << ext) >> ext:
            u += 32
        if key >= (step[u + 16] << ext) >> ext:
            u += 16
        if key >= (step[u + 8] << ext) >> ext:
            u += 8
        if key >= (step[u + 4] << ext) >> ext:
            u += 4
        if key >= (step[u + 2] << ext) >> ext:
            u += 2
        if key >= (step[u + 1] << ext) >> ext:
            u += 1
        out[i] = u ^ 128
    return 0


@micropython.viper
def to_float32(src: ptr8, dst: ptr32, n: int, wide: int):
    """dst[i] = the float32 bits of int src[i], i < n: int32 items when wide, else int8."""
    words = ptr32(src)
    top = 1
    top = top << 31  # the sign bit (negative on a 32-bit word; no literal: it is over 2^30)
    for i in range(n):
        if wide:
            v = (words[i] ^ top) - top  # sign-extended on a 64-bit word too
        else:
            v = (src[i] ^ 128) - 128
        bits = 0
        if v != 0:
            if v < 0:
                bits = top
                v = 0 - v
            e = 0  # the top bit's place
            t = v
            if t >> 16:
                t = t >> 16
                e += 16
            if t >> 8:
                t = t >> 8
                e += 8
            if t >> 4:
                t = t >> 4
                e += 4
            if t >> 2:
                t = t >> 2
                e += 2
            if t >> 1:
                e += 1
            if e <= 23:
                m = v << (23 - e)
            else:  # drop e - 23 bits, rounding to nearest, ties to even
                drop = e - 23
                m = v >> drop
                rest = v & ((1 << drop) - 1)
                half = 1 << (drop - 1)
                if rest > half or (rest == half and (m & 1)):
                    m += 1
                    if m >> 24:
                        m = m >> 1
                        e += 1
            bits = bits | ((e + 127) << 23) | (m & 0x7FFFFF)
        dst[i] = bits
