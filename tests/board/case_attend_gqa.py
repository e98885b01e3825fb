"""The int8 attention core with grouped-query heads, an additive bias and causal offsets
(kernels_attend) against the NumPy integer reference (reference/int8_attend.py), bit for bit:
scores, probabilities and context of every configuration tests/device/test_attend_gqa.py makes
(gqaNN), through the public header API (attend_header, bind_attend, set_keep, set_bias)."""

import array

import check
from tinyattn.int8 import kernels_attend as A


def buffers(c):
    """Q (int8), K (offset binary) and V^T (offset binary: b E_kv T + c T + j) from the lists."""
    T, ekv = c["T"], c["H_kv"] * c["D"]
    keys = c["B"] * T
    vt = bytearray(keys * ekv)
    v = c["v"]
    for r in range(keys):
        first = r - r % T
        for col in range(ekv):
            vt[first * ekv + col * T + r - first] = v[r * ekv + col] + 128
    return array.array("b", c["q"]), bytearray(x + 128 for x in c["k"]), vt


def run(c):
    S, T, H, D = c["S"], c["T"], c["H"], c["D"]
    rows = c["B"] * S
    q, k, vt = buffers(c)
    ctx = array.array("b", bytes(rows * H * D))
    scores = array.array("i", bytes(4 * rows * H * T))
    probs = array.array("H", bytes(2 * rows * H * T))
    h = A.attend_header(S, H, D, c["score_mult"], c["ctx_mult"], kv_len=T,
                        num_kv_heads=c["H_kv"])
    A.bind_attend(h, rows, q, k, vt, ctx, scores, probs)
    A.set_keep(h, None if c["keep"] is None else bytearray(c["keep"]), c["causal"],
               c["offset"], c["uniform"])
    A.set_bias(h, None if c["bias"] is None else array.array("i", c["bias"]))
    A.attend(h)
    return ctx, scores, probs


def test_gqa_bias_and_offsets_match_reference_bit_for_bit():
    names = check.names("gqa")
    check.equal(len(names) >= 30, True, "configurations")
    for name in names:
        f = check.fixture(name)
        ctx, scores, probs = run(f["c"])
        for what, got in (("scores", scores), ("probs", probs), ("ctx", ctx)):
            check.equal(got, f[what], "%s (seed %d) %s" % (name, f["seed"], what))


def test_bad_arguments_name_the_problem():
    mult, score = (16384, 14, 0, 3000), (16384, 14, 0, 3000)
    bad = {
        "kv heads": (lambda: A.attend_header(2, 8, 2, score, mult, num_kv_heads=3),
                     "does not divide"),
        "bias size": (lambda: A.set_bias(bound(), array.array("i", bytes(4 * 5))),
                      "bias holds 5 items"),
        "bias range": (lambda: A.set_bias(bound(), array.array("i", [1 << 29] * 6)),
                       "beyond"),
        "offset": (lambda: A.set_keep(bound(), None, True, 0.5), "causal_offset"),
        "short k": (lambda: A.bind_attend(A.attend_header(2, 2, 2, score, mult, kv_len=3,
                                                          num_kv_heads=1),
                                          2, b8(8), b8(5), b8(6), b8(8)), "k holds 5"),
    }
    for what, (call, part) in bad.items():
        text = check.message(ValueError, call)
        if part not in text:
            raise AssertionError("%s: %r does not say %r" % (what, text, part))


def b8(n):
    return array.array("b", bytes(n))


def bound():
    """A header of S 2, T 3, H 2, H_kv 1, D 2 bound to one sequence."""
    h = A.attend_header(2, 2, 2, (16384, 14, 0, 3000), (16384, 14, 0, 3000), kv_len=3,
                        num_kv_heads=1)
    A.bind_attend(h, 2, b8(8), b8(6), b8(6), b8(8))
    return h


def test_a_refused_bias_leaves_the_call_without_one():
    """S 2, T 3, H 2 over one K/V head of D 2: a bias of -2^20 on key 0 changes the context;
    after a refused bias the call runs with none."""
    h = A.attend_header(2, 2, 2, (16384, 14, 0, 3000), (16384, 14, 0, 3000), kv_len=3,
                        num_kv_heads=1)
    q = array.array("b", [20, -7, 3, 9, -15, 4, 11, 2])
    ctx = b8(8)
    A.bind_attend(h, 2, q, bytearray([150, 90, 60, 200, 128, 30]),
                  bytearray([250, 10, 140, 40, 220, 100]), ctx)
    runs = []
    for bias in (None, array.array("i", [-(1 << 20), 0, 0] * 2), [1] * 6,
                 array.array("i", [1 << 29] * 6), array.array("h", [1] * 6)):
        if bias is None or len(runs) == 1:
            A.set_bias(h, bias)
        else:
            check.raises(ValueError, A.set_bias, h, bias)
        A.attend(h)
        runs.append(list(ctx))
    if runs[1] == runs[0]:
        raise AssertionError("the bias changes nothing: %r" % runs)
    for i in (2, 3, 4):
        check.equal(runs[i], runs[0], "the call after refused bias %d" % i)
    text = check.message(ValueError, A.set_bias, h, [1] * 6)
    if "must be a buffer" not in text:
        raise AssertionError(text)
