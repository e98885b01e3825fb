"""The int8 TransformerEncoderLayer (qencoder) in every form: the host's int8 layer against
the integer reference, every intermediate bit for bit; the device's own quantization of the
same float layer near the float reference; the GELU table; no allocation once planned; bad
input."""

import array

import check
from tinyattn import Sequential
from tinyattn.int8 import load, quantize
from tinyattn.int8.numbers import quantize_tensor


def keep_of(f):
    """The keep bytes of the fixture's mask (B, S), or None."""
    if "mask" not in f:
        return None
    return bytearray(1 if v else 0 for row in f["mask"] for v in row.tolist())


def float_layer(f):
    c = f["c"]
    model = Sequential.from_config([c["layer"]], seed=c["seed"])
    for name, param, grad in model.collect_params():
        param[:] = f[name]
    return model




def host_layer_matches(name):
    """The host's int8 layer `name` (a file quant.load reads): every intermediate of one
    forward_int as the reference computes it; further runs leave the heap as they found it."""
    f = check.fixture(name)
    rows, E = f["x"].shape
    q = load(check.path(name + ".bin")).layers[0]
    xq = array.array("b", f["xq"])
    keep = keep_of(f)
    q.forward_int(xq, rows, E, keep=keep)
    inter, want = q.intermediates(), f["want"]
    check.equal(sorted(inter), sorted(want), name + " intermediates")
    for part in sorted(want):
        check.equal(inter[part], want[part], "%s %s" % (name, part))
    check.heap_returns(lambda: q.forward_int(xq, rows, E, keep=keep), what=name)


def test_encoder_layer_matches_reference_bit_for_bit():
    for name in check.names("layer"):
        host_layer_matches(name)


def device_quantized_layer(name):
    """quantize() of float layer `name`: ReLU folded into linear1, GELU a table, the causal
    flag kept; its arrays those of the host's layer within 1; its int8 forward near the float
    layer (without a mask); saved and loaded, the same integers."""
    f = check.fixture(name)
    spec = f["c"]["layer"]
    relu = spec[5] == "relu"
    x = f["x"]
    rows, E = x.shape
    qm = quantize(float_layer(f), f["calib"])
    q = qm.layers[0]
    assert (q.parts["act"] is None) == relu, name + ": GELU table"
    check.equal(q.parts["linear1"].lo, 0 if relu else -128, name + ": linear1 lo")
    assert q.causal == spec[9], name + ": causal"
    check.near_model(qm, load(check.path(name + ".bin")), name)
    if "y_float" in f:
        check.close(q.forward(x), f["y_float"], rtol=0.1, what=name + " int8 vs float")
    keep = keep_of(f)
    xq = quantize_tensor(x, q.s_x)
    q.forward_int(xq, rows, E, keep=keep)
    inter = q.intermediates()
    check.equal(sorted(inter), sorted(f["want"]), name + " intermediates")
    qm.save(check.path("saved.bin"))  # a scratch file
    again = load(check.path("saved.bin")).layers[0]
    again.forward_int(xq, rows, E, keep=keep)
    loaded = again.intermediates()
    for part in sorted(inter):
        check.equal(loaded[part], inter[part], "%s %s after save and load" % (name, part))


def test_encoder_layer_quantized_on_the_device():
    for name in check.names("layer"):
        device_quantized_layer(name)


def test_gelu_table_is_the_erf_gelu_rounded():
    """Every entry of the GELU table is round(gelu(v s_x) / s_y), the erf form, give or take
    one where float32 lands on the other side of a rounding boundary."""
    from tinyattn.nn.gelu import Gelu
    from tinyattn.int8.layers_convert import Activation

    q = Activation.from_float("gelu_erf", Gelu().forward, 0.03, 0.025)
    want = check.fixture("gelu")["table"]
    diff = [abs(a - b) for a, b in zip(list(q.table), want)]
    check.equal(len(q.table), 256, "table entries")
    assert max(diff) <= 1 and sum(diff) <= 3, \
        "GELU table off the erf form: max diff %d, total %d" % (max(diff), sum(diff))


def test_encoder_forward_allocates_nothing_once_planned():
    from tinyattn.rng import Rng

    for act, first in (("relu", False), ("gelu", True)):
        enc = ["TransformerEncoderLayer", 16, 4, 32, 0.0, act, first, 1e-5, 8, False]
        model = Sequential.from_config([["Tokens", 8], ["Dense", 8, 16, True],
                                        ["PositionalEmbedding", 8, 16], enc,
                                        ["GlobalAvgPool", 8], ["Dense", 16, 10, True]], seed=1)
        x = Rng(2).uniform_matrix(4, 64, 0.0, 1.0)
        qm = quantize(model, x)
        xq = quantize_tensor(x, qm.in_scale)
        first_out = qm.forward_int(xq, 4, 64)
        check.equal(check.allocates(qm.forward_int, xq, 4, 64), 0,
                    "bytes allocated by a planned forward_int (%s)" % act)
        again = qm.forward_int(xq, 4, 64)
        assert again[0] is first_out[0], "%s: forward_int returned another buffer" % act
        check.heap_returns(lambda: qm.forward(x), what="int8 forward (%s)" % act)


def test_bad_input_raises_value_error():
    from tinyattn.int8 import kernels_norm as N
    from tinyattn.nn.encoder import TransformerEncoderLayer
    from tinyattn.int8.norm_convert import add_multipliers
    from ulab import numpy as np

    def ones(shape):
        return np.zeros(shape) + 1.0

    enc = ["TransformerEncoderLayer", 8, 2, 8, 0.0, "relu", False, 1e-5, 4, False]
    q = quantize(Sequential.from_config([enc], seed=1), ones((8, 8)) * 0.5).layers[0]
    mult = (16384, 20, 0, 100)
    calls = [
        ("norm_too_wide", lambda: N.norm_header(257, array.array("i", bytes(1028)), 1, mult),
         "256"),
        ("norm_bad_eps", lambda: N.norm_header(4, array.array("i", bytes(16)), 0, mult), "eps"),
        ("norm_beta_overflows",
         lambda: N.norm_header(2, array.array("i", [2 ** 31 - 1, 0]), 1, mult), "int32"),
        ("norm_short_src",
         lambda: N.bind_norm(N.norm_header(4, array.array("i", bytes(16)), 1, mult),
                             bytearray(4), 2, bytearray(7), bytearray(8)), "holds 7 items"),
        ("add_bad_mults", lambda: N.add_header(4, (40000, 1, 3)), ""),
        ("add_not_periods", lambda: N.bind_add(N.add_header(2, (16384, 16384, 15)), 3,
                                               bytearray(6), bytearray(4), bytearray(6), 2),
         "whole periods"),
        ("add_short_b", lambda: N.bind_add(N.add_header(2, (16384, 16384, 15)), 3,
                                           bytearray(6), bytearray(5), bytearray(6)), ""),
        ("add_scales", lambda: add_multipliers(1.0, 1.0, 1e-6), "2^15"),
        ("encoder_without_seq_len",
         lambda: quantize(Sequential([TransformerEncoderLayer(8, 2, 8)]), ones((8, 8))),
         "seq_len"),
        ("encoder_wrong_width", lambda: q.forward(ones((4, 6))), "columns"),
        ("encoder_rows_not_sequences", lambda: q.forward(ones((6, 8))), ""),
        ("encoder_bad_mask", lambda: q.forward(ones((8, 8)), mask=ones((1, 8))), "mask"),
    ]
    for name, call, word in calls:
        message = check.raises(ValueError, call)
        assert word in message, "%s: %r lacks %r" % (name, message, word)
