"""JSON text that is the same on every board and on the host: keys sorted, ", " and ": "
between items, every float as the float32 it is held in, in 9 significant digits ("%.8e",
rounded half to even from its exact binary value with integers, not the float formatting of
the port). An int8 model's description is written so (int8/model.py's save), and the host's
quantizer writes the very bytes (plain Python, shared with the host)."""

import json
import struct


def dumps(value):
    """The canonical JSON text of dicts (str keys), lists, tuples, str, int, float, bool, None."""
    if value is None or value is True or value is False or isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return float32_text(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(json.dumps(k) + ": " + dumps(value[k])
                               for k in sorted(value)) + "}"
    raise TypeError("no JSON form for %r" % (value,))


def float32_text(v):
    """"%.8e" of v as a float32: "2.13477369e-02" (9 digits round-trip every float32)."""
    bits = struct.unpack("<I", struct.pack("<f", v))[0]
    sign = "-" if bits >> 31 else ""
    exponent, fraction = (bits >> 23) & 255, bits & 0x7FFFFF
    if exponent == 255:
        raise ValueError("%r has no JSON form" % (v,))
    m = fraction | (1 << 23) if exponent else fraction  # v = m 2^e exactly
    e = (exponent or 1) - 150
    if m == 0:
        return sign + "0.00000000e+00"
    num, den = (m << e, 1) if e >= 0 else (m, 1 << -e)
    k = len(str(num // den)) - 1 if num >= den else -len(str(den // num))  # ~ floor(log10)
    while num * 10 ** max(0, -k) < den * 10 ** max(0, k):  # v < 10^k: one down
        k -= 1
    while num * 10 ** max(0, -k - 1) >= den * 10 ** max(0, k + 1):  # v >= 10^(k+1): up
        k += 1
    if k <= 8:
        q, r = divmod(num * 10 ** (8 - k), den)
        half = den
    else:
        q, r = divmod(num, den * 10 ** (k - 8))
        half = den * 10 ** (k - 8)
    if 2 * r > half or (2 * r == half and q & 1):
        q += 1
    if q == 1000000000:
        q, k = 100000000, k + 1
    digits = str(q)
    return "%s%s.%se%s%02d" % (sign, digits[0], digits[1:], "-" if k < 0 else "+", abs(k))
