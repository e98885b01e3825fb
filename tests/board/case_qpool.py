"""kernels_pool bit for bit with the integer reference (tests/device/test_qpool.py); the
masked int8 path's bad input gets one clear ValueError."""

import array

import check
from tinyattn.int8 import kernels_pool
from tinyattn.int8.layers import QGlobalAvgPool
from tinyattn.int8.layers_schema import GlobalAvgPool


def read(name):
    with open(check.path(name), "rb") as f:
        return f.read()


def test_masked_pool_kernel_matches_the_reference():
    f = check.fixture("pool")
    S, cols, B = f["S"], f["cols"], f["B"]
    x, keep = array.array("b", read("x.bin")), bytearray(read("keep.bin"))
    out = array.array("b", bytes(B * cols))
    h = kernels_pool.pool_keep_header(S, cols, [tuple(m) for m in f["mults"]])
    kernels_pool.bind_pool_keep(h, B, x, out)
    kernels_pool.pool_keep(h, keep)
    check.equal(out, [v for row in f["want"] for v in row], "masked pool")
    check.equal(check.allocates(kernels_pool.pool_keep, h, keep), 0, "bytes a run allocates")


def test_a_layer_through_the_masked_and_the_plain_kernel():
    f = check.fixture("pool")
    S, cols, B = f["S"], f["cols"], f["B"]
    mults = [tuple(m) for m in f["mults"]]
    layer = QGlobalAvgPool(S, mults[-1], 0.05, 0.03, mults)
    x = array.array("b", read("x.bin"))
    out, rows, k = layer.plan(x, B * S, cols)
    layer.set_keep(bytearray(read("keep.bin")))
    layer.run()
    check.equal(out, [v for row in f["want"] for v in row], "QGlobalAvgPool with keep")
    layer.set_keep(None)
    layer.run()  # all tokens: the last length-S sequence is all kept, as with keep
    check.equal(out[S * cols:(S + 1) * cols], f["want"][S], "all kept, plain kernel")


def test_bad_input_gets_a_clear_value_error():
    f = check.fixture("pool")
    S, cols, B = f["S"], f["cols"], f["B"]
    mults = [tuple(m) for m in f["mults"]]
    old = QGlobalAvgPool(S, mults[-1], 0.05, 0.03, None)  # a file saved before masks
    x = array.array("b", read("x.bin"))
    old.plan(x, B * S, cols)
    layer = QGlobalAvgPool(S, mults[-1], 0.05, 0.03, mults)
    layer.plan(x, B * S, cols)
    h = kernels_pool.pool_keep_header(S, cols, mults)
    kernels_pool.bind_pool_keep(h, B, x, array.array("b", bytes(B * cols)))
    cases = [
        (lambda: old.set_keep(bytearray(B * S)), "no masked multipliers"),
        (lambda: layer.set_keep(bytearray((B - 1) * S)), "keep holds %d items" % ((B - 1) * S)),
        (lambda: kernels_pool.check_keep(h, bytearray(3)), "keep holds 3 items"),
        (lambda: kernels_pool.check_keep(h, bytearray(B * S + S)), "holds %d sequences" % (B + 1)),
        (lambda: kernels_pool.pool_keep_header(S, cols, mults[:2]), "needs %d multipliers" % S),
        (lambda: kernels_pool.pool_keep_header(S, cols, [(1 << 16, 0, 0, 1)] * S),
         "multiplier"),
    ]
    for call, words in cases:
        message = check.raises(ValueError, call)
        assert words in message, "%r lacks %r" % (message, words)
    spec = GlobalAvgPool.spec(layer)
    spec["by_count"] = spec["by_count"][:3]
    message = check.raises(ValueError, GlobalAvgPool.check_spec, "layers[4]", spec)
    assert "'by_count' must hold seq_len (7)" in message, message
