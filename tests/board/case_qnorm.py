"""The int8 LayerNorm and add kernels (qkernels_norm) against the integer reference, bit for
bit, on random and worst-case inputs; the add multipliers and eps units of qnorm."""

import array

import check
from tinyattn.int8 import kernels_norm as N
from tinyattn.int8.norm_convert import add_multipliers, eps_units


def norm_kernel(c, in_place=False):
    """Header, gamma, source and destination of LayerNorm configuration c, bound."""
    rows, E = c["rows"], c["E"]
    src = array.array("b", c["x"])
    dst = src if in_place else array.array("b", bytes(rows * E))
    gamma = bytearray(v + 128 for v in c["gamma"])  # offset binary
    h = N.norm_header(E, array.array("i", c["beta"]), c["eps"], c["mult"])
    N.bind_norm(h, gamma, rows, src, dst)
    return h, gamma, dst


def check_norms(prefix):
    for name in check.names(prefix):
        f = check.fixture(name)
        c = f["c"]
        what = "%s (E %d, %d rows, eps %d)" % (name, c["E"], c["rows"], c["eps"])
        h, gamma, dst = norm_kernel(c)
        N.norm(h, gamma)
        check.equal(dst, f["y"], what)
        if c["in_place"]:
            h, gamma, dst = norm_kernel(c, in_place=True)
            N.norm(h, gamma)
            check.equal(dst, f["y"], what + " in place")


def test_norm_matches_reference_bit_for_bit():
    check_norms("norm")


def test_norm_worst_case_inputs_match_reference():
    check_norms("worst_norm")


def add_kernel(c):
    rows, cols = c["rows"], c["cols"]
    a = array.array("b", c["a"])
    b = array.array("b", c["b"])
    dst = array.array("b", bytes(rows * cols))
    h = N.add_header(cols, c["mults"])
    N.bind_add(h, rows, a, b, dst, c["period"])
    return h, b, dst


def check_adds(prefix):
    for name in check.names(prefix):
        f = check.fixture(name)
        c = f["c"]
        h, b, dst = add_kernel(c)
        N.add(h, b)
        N.add(h, b)  # a second run gives the same
        check.equal(dst, f["y"], "%s (%d x %d, period %r, mults %r)"
                    % (name, c["rows"], c["cols"], c["period"], c["mults"]))


def test_add_matches_reference_bit_for_bit():
    check_adds("add")


def test_add_worst_case_matches_reference():
    check_adds("worst_add")


def test_kernels_allocate_nothing():
    h, gamma, _ = norm_kernel(check.fixture("norm05")["c"])
    N.norm(h, gamma)
    check.equal(check.allocates(N.norm, h, gamma), 0, "bytes allocated by a LayerNorm run")
    h, b, _ = add_kernel(check.fixture("add04")["c"])
    N.add(h, b)
    check.equal(check.allocates(N.add, h, b), 0, "bytes allocated by an add run")


def test_add_multipliers_and_eps_units():
    f = check.fixture("scales")
    for s_a, s_b, s_y in f["scales"]:
        ma, mb, s = add_multipliers(s_a, s_b, s_y)
        what = "add_multipliers(%r, %r, %r) = %r" % (s_a, s_b, s_y, (ma, mb, s))
        assert 2 ** 14 <= max(ma, mb) < 2 ** 15 or s == 0, what
        assert abs(ma / 2 ** s - s_a / s_y) <= 2 ** -s, what
        assert abs(mb / 2 ** s - s_b / s_y) <= 2 ** -s, what
    check.equal([eps_units(1e-5, 24, s) for s in f["eps_scales"]], f["eps"], "eps_units")
