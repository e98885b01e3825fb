"""The viper kernels against the NumPy integer reference, bit for bit.

Each kernel is driven through its public header API (kernels.linear_header / bind_linear /
linear, attend_header / bind_attend / attend, kernels_pool.pool_header / bind_pool / pool,
lookup) with blocks inside larger buffers, every output layout the int8 layers use, masks, and
the inputs that drive every int32 intermediate to its bound. tests/device/test_kernels.py makes the
configurations and the reference's outputs: linearNN, attendNN, poolNN, worstN, tables.
"""

import array
import sys

import check
from tinyattn.int8 import kernels as K
from tinyattn.int8 import kernels_attend as A
from tinyattn.int8 import kernels_pool as P
from ulab import numpy as np


def b8(n):
    return array.array("b", bytes(n))


def i32(n):
    return array.array("i", bytes(4 * n))


def offset_binary(values):
    return bytearray(v + 128 for v in values)


# ---- x W^T + b -------------------------------------------------------------------------------
def linear_run(c):
    """Bind and run a linear config twice (nothing is left over from the first run);
    returns (destination, header, weights)."""
    rows, depth = c["rows"], c["depth"]
    w = offset_binary(c["w"])
    src = offset_binary(c["x"]) if c["offset_binary"] else array.array("b", c["x"])
    bias = None if c["bias"] is None else array.array("i", c["bias"])
    h = K.linear_header(c["cols"], depth, bias, c["mult"], c["lo"], c["hi"])
    dst = i32(c["dst_len"]) if c["mult"] is None else b8(c["dst_len"])
    K.bind_linear(h, w, rows, src, dst, src_off=c["src_off"], src_row=c["src_row"],
                  offset_binary=c["offset_binary"], dst_off=c["dst_off"],
                  dst_row=c["dst_row"], dst_col=c["dst_col"], group=c["group"],
                  group_stride=c["group_stride"], add=c["add"])
    K.linear(h, w)
    K.linear(h, w)  # a second run gives the same: nothing is left over from the first
    return dst, h, w


def each_fixture(prefix, count, what):
    """(name, fixture) of each of the `count` fixtures named `prefix`... (asserted: `what`)."""
    names = check.names(prefix)
    check.equal(len(names), count, what)
    for name in names:
        yield name, check.fixture(name)


def test_linear_matches_reference_bit_for_bit():
    for name, f in each_fixture("linear", 40, "linear configurations"):
        dst, _, _ = linear_run(f["c"])
        check.equal(dst, f["dst"], "%s (seed %d)" % (name, f["seed"]))


# ---- the attention core ----------------------------------------------------------------------
def attend_buffers(c):
    """Q (int8), K (offset binary) and V^T (offset binary: b E S + c S + j) from the lists."""
    S, E = c["S"], c["H"] * c["D"]
    rows = c["B"] * S
    vt = bytearray(rows * E)
    v = c["v"]
    for r in range(rows):  # V (rows, E) to V^T
        first = r - r % S
        for col in range(E):
            vt[first * E + col * S + r - first] = v[r * E + col] + 128
    return array.array("b", c["q"]), offset_binary(c["k"]), vt


def attend_run(c, q, k, vt):
    """Bind and run the attention core; returns (ctx, scores, probs, header)."""
    S, H, D = c["S"], c["H"], c["D"]
    rows = c["B"] * S
    ctx = b8(rows * H * D)
    scores = i32(rows * H * S)
    probs = array.array("H", bytes(2 * rows * H * S))
    h = A.attend_header(S, H, D, c["score_mult"], c["ctx_mult"])
    A.bind_attend(h, rows, q, k, vt, ctx, scores, probs)
    A.set_keep(h, None if c["keep"] is None else bytearray(c["keep"]), c["causal"])
    A.attend(h)
    return ctx, scores, probs, h


def test_attend_matches_reference_bit_for_bit():
    for name, f in each_fixture("attend", 30, "attention configurations"):
        c = f["c"]
        q, k, vt = attend_buffers(c)
        ctx, scores, probs, _ = attend_run(c, q, k, vt)
        for what, got in (("scores", scores), ("probs", probs), ("ctx", ctx)):
            check.equal(got, f[what], "%s (seed %d) %s" % (name, f["seed"], what))


# ---- pooling and table lookup ----------------------------------------------------------------
def pool_run(c):
    src = array.array("b", c["x"])
    dst = b8(c["groups"] * c["cols"])
    h = P.pool_header(c["tokens"], c["cols"], c["mult"])
    P.bind_pool(h, c["groups"], src, dst)
    P.pool(h)
    y = b8(len(src))
    table = array.array("b", c["table"])
    K.lookup(src, y, len(src), table)
    return dst, y, h, src, table


def test_pool_and_lookup_match_reference():
    for name, f in each_fixture("pool", 6, "pooling configurations"):
        dst, y, _, _, _ = pool_run(f["c"])
        check.equal(dst, f["pool"], "%s pool" % name)
        check.equal(y, f["lookup"], "%s lookup" % name)


# ---- the extreme inputs ----------------------------------------------------------------------
def equal_periodic(got, want, what):
    """got equals want["pattern"] repeated to want["n"] items, item for item."""
    pattern, n = want["pattern"], want["n"]
    check.equal(len(got), n, "%s: items" % what)
    p = len(pattern)
    for i in range(n):
        if got[i] != pattern[i % p]:
            raise AssertionError("%s: item %d is %r, expected %r"
                                 % (what, i, got[i], pattern[i % p]))


def test_worst_case_inputs_match_reference():
    """The extreme inputs that drive each int32 intermediate to its bound."""
    for name, f in each_fixture("worst", 2, "worst cases"):
        dst, _, _ = linear_run(f["linear"])
        check.equal(dst, f["dst"], "%s linear" % name)
        # attention: Q = -128, K alternating -128 / 127 by key, V = -128
        a = f["attend"]
        S, D = a["S"], a["D"]
        q = array.array("b", bytes([128]) * (S * D))  # -128
        k = bytearray((bytes(D) + bytes([255]) * D) * (S // 2))  # offset binary
        vt = bytearray(S * D)  # -128, offset binary
        ctx, scores, probs, _ = attend_run(a, q, k, vt)
        del q, k, vt
        for what, got in (("scores", scores), ("probs", probs), ("ctx", ctx)):
            equal_periodic(got, f[what], "%s %s" % (name, what))
        del ctx, scores, probs


# ---- bad calls, tables ----------------------------------------------------------------------
def contains(text, part, what):
    if part not in text:
        raise AssertionError("%s: %r is not in %r" % (what, part, text))


def test_bad_buffers_raise_value_error_before_the_kernels_run():
    h = K.linear_header(2, 3)
    mult = (16384, 20, 0, 100)
    calls = {
        "short_src": lambda: K.bind_linear(h, b8(6), 2, b8(5), i32(4)),
        "short_w": lambda: K.bind_linear(h, b8(5), 2, b8(6), i32(4)),
        "short_dst": lambda: K.bind_linear(h, b8(6), 2, b8(6), i32(3)),
        "dst_not_int32": lambda: K.bind_linear(h, b8(6), 2, b8(6), bytearray(16)),
        "src_row_too_small": lambda: K.bind_linear(h, b8(6), 2, b8(9), i32(4), src_row=2),
        "negative_offset": lambda: K.bind_linear(h, b8(6), 2, b8(9), i32(4), src_off=-1),
        "not_a_buffer": lambda: K.bind_linear(h, b8(6), 2, [0] * 6, i32(4)),
        "short_bias": lambda: K.linear_header(2, 3, i32(1)),
        "bias_overflows": lambda: K.linear_header(2, 3, array.array("i", [2 ** 31 - 1, 0])),
        "bad_mult": lambda: K.linear_header(2, 3, None, (40000, 20, 0, 100)),
        "bad_cap": lambda: K.linear_header(2, 3, None, (16384, 20, 0, 40000)),
        "bad_bounds": lambda: K.linear_header(2, 3, None, mult, 5, 4),
        "zero_depth": lambda: K.linear_header(2, 0),
        "attend_rows_not_sequences": lambda: A.bind_attend(
            A.attend_header(3, 1, 2, (16384, 14, 0, 3000), mult), 4, b8(8), b8(8), b8(8),
            b8(8)),
        "attend_short_k": lambda: A.bind_attend(
            A.attend_header(2, 1, 2, (16384, 14, 0, 3000), mult), 4, b8(8), b8(7), b8(8),
            b8(8)),
        "pool_short_dst": lambda: P.bind_pool(P.pool_header(2, 3, mult), 2, b8(12), b8(5)),
        "lookup_short_table": lambda: K.lookup(b8(4), b8(4), 4, b8(255)),
    }
    errors = {}
    for name in sorted(calls):
        errors[name] = check.raises(ValueError, calls[name])
    contains(errors["short_src"], "holds 5 items, the shape needs 6", "short_src")
    contains(errors["dst_not_int32"], "4-byte items", "dst_not_int32")
    contains(errors["src_row_too_small"], "shorter than the depth", "src_row_too_small")
    contains(errors["not_a_buffer"], "must be a buffer", "not_a_buffer")
    contains(errors["bad_mult"], "fixed_point", "bad_mult")
    contains(errors["bias_overflows"], "overflow", "bias_overflows")
    contains(errors["attend_rows_not_sequences"], "not whole sequences",
             "attend_rows_not_sequences")


def test_kernels_reject_float_buffers_cleanly():
    h = K.linear_header(2, 3)
    check.raises(ValueError, K.bind_linear, h, np.zeros((2, 3)), 2, np.zeros((2, 3)),
                 np.zeros((2, 2)))


def test_exp_tables_and_word_size():
    f = check.fixture("tables")
    check.equal(A.EXP_HI, f["hi"], "EXP_HI")
    check.equal(A.EXP_LO, f["lo"], "EXP_LO")
    check.equal(A.EXP_LIMIT, f["limit"], "EXP_LIMIT")
    # EXT sign-extends a 32-bit value in a viper int: 32 on a 64-bit port, 0 on a 32-bit one
    bits = len(bin(sys.maxsize)) - 1
    check.equal(K.EXT, bits - 32, "EXT with %d-bit words" % bits)


# ---- the heap ------------------------------------------------------------------------------
def test_kernels_leave_the_heap_as_they_found_it():
    """A bound kernel runs again and again with the heap in use back where it was."""
    f = check.fixture(check.names("linear")[1])
    dst, h, w = linear_run(f["c"])
    check.heap_returns(lambda: K.linear(h, w), what="linear")
    f = check.fixture(check.names("attend")[1])
    q, k, vt = attend_buffers(f["c"])
    _, _, _, h = attend_run(f["c"], q, k, vt)
    check.heap_returns(lambda: A.attend(h), what="attend")
    f = check.fixture(check.names("pool")[0])
    _, y, h, src, table = pool_run(f["c"])
    check.heap_returns(lambda: P.pool(h), what="pool")
    check.heap_returns(lambda: K.lookup(src, y, len(src), table), what="lookup")
