"""The device's int8 model against the host's (tinyattn_host.quantize, the same float model
quantized in float64), up to rounding: spec fields equal or, for scales and multipliers,
within float32's error; int8 arrays within 1. A support module of the int8 cases."""

import math

import check
from tinyattn import store

SCALE_RTOL = 1e-5
"""A scale of the device's quantize against the host's: float32 max |.| of float32 outputs."""
MULT_RTOL = SCALE_RTOL + 2.0 ** -14
"""A multiplier m 2^(p - s): its scales' error and half a unit of m's 15 bits, each side."""


def fail(text):
    raise AssertionError(text)


def near_scale(got, want, what):
    if want is None or got is None:
        if got is not want:
            fail("%s: %r, the host has %r" % (what, got, want))
    elif not abs(got - want) <= SCALE_RTOL * abs(want):
        fail("%s: %r, the host has %r" % (what, got, want))


def near_mult(got, want, what):
    """(m, s, p, cap): the same real number m 2^(p - s) and cap, within the scales' error."""
    if want is None or got is None:
        if got is not want:
            fail("%s: %r, the host has %r" % (what, got, want))
        return
    m, s, p, cap = got
    wm, ws, wp, wcap = want
    real, wreal = m * 2.0 ** (p - s), wm * 2.0 ** (wp - ws)
    if not abs(real - wreal) <= MULT_RTOL * wreal or not abs(cap - wcap) <= 1 + SCALE_RTOL * wcap:
        fail("%s: %r, the host has %r" % (what, tuple(got), tuple(want)))


def near_spec(got, want, what):
    if sorted(got) != sorted(want):
        fail("%s: fields %s, the host has %s" % (what, sorted(got), sorted(want)))
    for key in want:
        g, w, where = got[key], want[key], "%s %s" % (what, key)
        if key in ("mults", "scales"):
            if sorted(g) != sorted(w):
                fail("%s: %s, the host has %s" % (where, sorted(g), sorted(w)))
            near = near_mult if key == "mults" else near_scale
            for k in w:
                near(g[k], w[k], where + "." + k)
        elif key == "mult":
            near_mult(g, w, where)
        elif key == "by_count":
            check.equal(len(g), len(w), where + " length")
            for n, (gm, wm) in enumerate(zip(g, w)):
                near_mult(gm, wm, "%s[%d]" % (where, n))
        elif isinstance(w, float):
            near_scale(g, w, where)
        elif g != w:
            fail("%s: %r, the host has %r" % (where, g, w))


def near_model(qm, path, what):
    """The device's int8 model qm is the host's (the model file at path) up to rounding:
    every spec field (ints and names equal, scales and multipliers within float32's error),
    int8 weights and tables within 1, int32 biases within 1 + SCALE_RTOL |b|."""
    kind, meta, stored = store.read_file(path)
    got_specs, want_specs = qm.description()["layers"], meta["layers"]
    check.equal(len(got_specs), len(want_specs), "%s: layers" % what)
    for i in range(len(want_specs)):
        near_spec(got_specs[i], want_specs[i], "%s layer %d" % (what, i))
    want = dict((name, (shape, value)) for name, shape, value in stored)
    got = qm.named_arrays()
    check.equal(sorted(n for n, _, _, _ in got), sorted(want), "%s: arrays" % what)
    for name, buf, code, shape in got:
        wshape, w = want[name]
        check.equal(tuple(shape), wshape, "%s %s: shape" % (what, name))
        for i in range(len(w)):
            if abs(buf[i] - w[i]) > (1 if code == "b" else 1 + SCALE_RTOL * abs(w[i])):
                fail("%s %s: item %d is %d, the host has %d" % (what, name, i, buf[i], w[i]))


def near_rounding(xq, x, s, what):
    """int8 xq is round half up(x / s), saturated, within 1 (the device's float)."""
    rows, cols = x.shape
    for i in range(rows):
        row = x[i, :].tolist()
        for j in range(cols):
            want = min(127, max(-128, math.floor(row[j] / s + 0.5)))
            if abs(xq[i * cols + j] - want) > 1:
                fail("%s: item %d is %d, round(x / s_x) is %d" % (what, i * cols + j,
                                                                  xq[i * cols + j], want))
