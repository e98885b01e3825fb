"""The int8 encoder (qkernels_norm, qencoder) against the NumPy integer reference
(reference.integer_encoder), bit for bit: the LayerNorm and add kernels on random and
worst-case inputs, the encoder layer in every form, and a digits-shaped model on every row."""

import math

import numpy as np
import pytest

from device_runner import run_device
from test_quant import DUMP
from tinyattn_host.reference import integer as ref
from tinyattn_host.reference import integer_encoder as qref
from tinyattn_host.reference.encoder import gelu_forward
from tinyattn_host.reference.layers import sequential_forward
from tinyattn_host.statedict import param_shapes

f32 = lambda a: np.asarray(a).astype(np.float32).astype(np.float64)  # noqa: E731

# ---- kernels -------------------------------------------------------------------------------
NORM_CASE = """
import array
from tinyattn import qkernels_norm as N
c = IN['c']
rows, E = c['rows'], c['E']
src = array.array('b', c['x'])
dst = array.array('b', bytes(rows * E))
gamma = bytearray(v + 128 for v in c['gamma'])  # offset binary
h = N.norm_header(E, array.array('i', c['beta']), c['eps'], c['mult'])
N.bind_norm(h, gamma, rows, src, dst)
N.norm(h, gamma)
OUT['y'] = list(dst)
if c.get('in_place'):
    N.bind_norm(h, gamma, rows, src, src)
    N.norm(h, gamma)
    OUT['in_place'] = list(src)
"""


def norm_config(seed):
    rng = np.random.default_rng(2000 + seed)
    E = [1, 2, 3, 8, 24, 31, 64, 256][seed % 8]
    rows = int(rng.integers(1, 7))
    spread = int(rng.choice([1, 3, 40, 128]))
    x = rng.integers(-spread, min(spread, 127) + 1, size=(rows, E))
    x[0] += int(rng.integers(-5, 6))  # an offset: the mean is not 0
    c = dict(rows=rows, E=E, x=np.clip(x, -128, 127).ravel().tolist(),
             gamma=rng.integers(-127, 128, size=E).tolist(),
             beta=rng.integers(-(2 ** 24), 2 ** 24, size=E).tolist(),
             eps=int(rng.choice([1, 7, 10 ** int(rng.integers(1, 9)), qref.MAX_EPS])),
             mult=ref.fixed_point(float(10 ** rng.uniform(-7, -3)), 128),
             in_place=seed % 2 == 0)
    return c


def norm_reference(c):
    x = np.array(c["x"]).reshape(c["rows"], c["E"])
    layer = {"gamma": np.array(c["gamma"]), "beta": np.array(c["beta"]), "eps": c["eps"],
             "mult": c["mult"]}
    return qref.layernorm(x, layer)


NORM_CONFIGS = [norm_config(seed) for seed in range(24)]


def test_norm_configurations_vary():
    cs = NORM_CONFIGS
    assert {c["E"] for c in cs} >= {1, 3, 24, 64, 256}
    assert {c["eps"] for c in cs} >= {1, qref.MAX_EPS}
    # small variances (a large scaling k) and the largest (k = -1) both occur
    ks = np.concatenate([norm_reference(c)["k"].ravel() for c in cs])
    assert ks.min() == -1 and ks.max() >= 10


@pytest.mark.parametrize("seed", range(len(NORM_CONFIGS)))
def test_norm_matches_reference_bit_for_bit(seed):
    c = NORM_CONFIGS[seed]
    out = run_device(NORM_CASE, {"c": c})
    want = norm_reference(c)["y"].ravel()
    np.testing.assert_array_equal(np.array(out["y"]), want)
    if c["in_place"]:
        np.testing.assert_array_equal(np.array(out["in_place"]), want)


@pytest.mark.parametrize("E", [8, 256])
def test_norm_worst_case_inputs_match_reference(E):
    """The rows that drive each intermediate to its bound, with gamma +-127 and beta at the
    edge of its room, on the device and the reference."""
    bounds = qref.worst_case_bounds(E=E, beta_max=2 ** 31 - 1 - 2 ** 23, add_shift=30)
    x = qref.worst_case_norm_rows(E)
    room = 2 ** 31 - 1 - 2 ** 23
    for eps in (1, qref.MAX_EPS):
        c = dict(rows=len(x), E=E, x=x.ravel().tolist(), in_place=False, eps=eps,
                 gamma=np.where(np.arange(E) % 2, 127, -127).tolist(),
                 beta=np.where(np.arange(E) % 3, room, -room).tolist(),
                 mult=ref.fixed_point(1e-9, 128))
        out = run_device(NORM_CASE, {"c": c})
        got = norm_reference(c)
        np.testing.assert_array_equal(np.array(out["y"]), got["y"].ravel())
    # eps = 1: the bounds are reached (V near its largest, |E x - sum| at 255 (E - 1))
    c["eps"] = 1
    got = norm_reference(c)
    assert np.abs(E * x.astype(np.int64) - got["sum"]).max() == bounds["norm E x - sum"]
    assert got["V"].max() >= 0.99 * bounds["norm V"]
    assert np.abs(got["z"]).max() <= bounds["norm z"]
    assert np.abs(got["z"]).max() >= 4096 * math.sqrt(E - 1) * (1 - 2 ** -10)


ADD_CASE = """
import array
from tinyattn import qkernels_norm as N
c = IN['c']
rows, cols = c['rows'], c['cols']
a = array.array('b', c['a'])
b = array.array('b', c['b'])
dst = array.array('b', bytes(rows * cols))
h = N.add_header(cols, c['mults'])
N.bind_add(h, rows, a, b, dst, c['period'])
N.add(h, b)
N.add(h, b)
OUT['y'] = list(dst)
"""


def add_config(seed):
    rng = np.random.default_rng(3000 + seed)
    rows, cols = int(rng.integers(1, 9)), int(rng.integers(1, 30))
    period = None if seed % 2 else int(rng.choice([d for d in range(1, rows + 1) if rows % d == 0]))
    s = int(rng.integers(0, 31))
    top = int(rng.integers(2 ** 14, 2 ** 15)) if seed % 5 else 32767
    other = int(rng.integers(0, top + 1))
    mults = (top, other, s) if seed % 3 else (other, top, s)
    return dict(rows=rows, cols=cols, period=period, mults=list(mults),
                a=rng.integers(-128, 128, size=rows * cols).tolist(),
                b=rng.integers(-128, 128, size=(period or rows) * cols).tolist())


@pytest.mark.parametrize("seed", range(16))
def test_add_matches_reference_bit_for_bit(seed):
    c = add_config(seed)
    out = run_device(ADD_CASE, {"c": c})
    a = np.array(c["a"]).reshape(c["rows"], c["cols"])
    b = np.array(c["b"]).reshape(-1, c["cols"])
    want = qref.positional(a, b, c["mults"]) if c["period"] else qref.add(a, b, c["mults"])
    np.testing.assert_array_equal(np.array(out["y"]), want.ravel())


def test_add_worst_case_matches_reference():
    """a = b = -128 and 127 with both multipliers 2^15 - 1 and s = 30: the bound exactly."""
    a = np.array([-128, 127, -128, 127, 0])
    b = np.array([-128, 127, 127, -128, 0])
    for s in (0, 15, 30):
        c = dict(rows=1, cols=5, period=None, mults=[32767, 32767, s], a=a.tolist(),
                 b=b.tolist())
        out = run_device(ADD_CASE, {"c": c})
        np.testing.assert_array_equal(np.array(out["y"]), qref.add(a, b, c["mults"]))
    assert qref.worst_case_bounds(add_shift=30)["add a ma + b mb + half"] == \
        256 * 32767 + 2 ** 29


def test_add_multipliers_and_eps_units():
    out = run_device("""
from tinyattn.qencoder import add_multipliers, eps_units
OUT['m'] = [add_multipliers(*args) for args in IN['scales']]
OUT['eps'] = [eps_units(1e-5, 24, s) for s in (0.01, 1e-6, 10.0)]
""", {"scales": [[0.02, 0.01, 0.03], [1.0, 0.5, 1e-3], [0.5, 3.0, 1.0], [2.0, 1e-4, 1e-4]]})
    for (s_a, s_b, s_y), (ma, mb, s) in zip([[0.02, 0.01, 0.03], [1.0, 0.5, 1e-3],
                                             [0.5, 3.0, 1.0], [2.0, 1e-4, 1e-4]], out["m"]):
        assert 2 ** 14 <= max(ma, mb) < 2 ** 15 or s == 0
        assert abs(ma / 2 ** s - s_a / s_y) <= 2 ** -s and abs(mb / 2 ** s - s_b / s_y) <= 2 ** -s
    assert out["eps"] == [qref.eps_units(1e-5, 24, s) for s in (0.01, 1e-6, 10.0)]
    assert out["eps"][1] == qref.MAX_EPS and out["eps"][2] == 1


# ---- the encoder layer ---------------------------------------------------------------------
def encoder_reference_layers(dumped):
    """The device's quantized layers as reference.integer_encoder.sequential wants."""
    return qref.layers_from_specs(dumped["specs"], dumped["arrays"])


ENCODER_CASE = DUMP + """
from tinyattn import Sequential
from tinyattn.quant import quantize, quantize_tensor
c = IN['c']
model = Sequential.from_config([c['layer']], seed=c['seed'])
for name, param, grad in model.collect_params():
    param[:] = IN[name]
layer = model.layers[0]
qm = quantize(model, IN['calib'])
q = qm.layers[0]
rows, E = IN['x'].shape
xq = quantize_tensor(IN['x'], q.s_x)
keep = None
if 'mask' in IN:
    keep = bytearray(1 if v else 0 for row in IN['mask'] for v in row.tolist())
y, _, _ = q.forward_int(xq, rows, E, keep=keep)
OUT['layers'] = dump_layers(qm)
OUT['xq'] = list(xq)
OUT['inter'] = dict((k, list(v)) for k, v in q.intermediates().items())
OUT['y_int8_path'] = q.forward(IN['x'], mask=IN.get('mask'))
"""


def make_encoder_configs():
    configs = []
    for i, (norm_first, act) in enumerate([(False, "relu"), (True, "relu"), (False, "gelu"),
                                           (True, "gelu")] * 2):
        E, H, F, S, B = [(8, 2, 12, 4, 3), (16, 4, 24, 5, 2)][i // 4]
        configs.append(dict(layer=["TransformerEncoderLayer", E, H, F, 0.0, act, norm_first,
                                   1e-5, S, i % 3 == 1], seed=i, mask=i % 3 == 2, B=B))
    return configs


ENCODER_CONFIGS = make_encoder_configs()


@pytest.mark.parametrize("c", ENCODER_CONFIGS, ids=lambda c: "{}-{}-{}".format(
    "first" if c["layer"][6] else "after", c["layer"][5], c["seed"]))
def test_encoder_layer_matches_reference_bit_for_bit(c):
    _, E, H, F, _, act, norm_first, eps, S, causal = c["layer"]
    rng = np.random.default_rng(4000 + c["seed"])
    rows = c["B"] * S
    params = {"0.self_attn." + n: rng.standard_normal((E, E)) / np.sqrt(E) for n in
              ("Wq", "Wk", "Wv", "Wo")}
    params.update({"0.self_attn.b" + n: 0.1 * rng.standard_normal(E) for n in "qkvo"})
    params.update({"0.linear1.W": rng.standard_normal((F, E)) / np.sqrt(E),
                   "0.linear1.b": 0.1 * rng.standard_normal(F),
                   "0.linear2.W": rng.standard_normal((E, F)) / np.sqrt(F),
                   "0.linear2.b": 0.1 * rng.standard_normal(E)})
    for n in ("norm1", "norm2"):
        params["0.%s.gamma" % n] = 1 + 0.2 * rng.standard_normal(E)
        params["0.%s.beta" % n] = 0.2 * rng.standard_normal(E)
    inputs = {k: f32(v) for k, v in params.items()}
    inputs["x"] = f32(rng.standard_normal((rows, E)))
    inputs["calib"] = np.concatenate([inputs["x"], f32(rng.standard_normal((2 * S, E)))])
    mask = None
    if c["mask"]:
        mask = (np.arange(S)[None, :] < rng.integers(1, S + 1, size=c["B"])[:, None]) * 1.0
        mask[-1] = 0.0  # a sequence with every key masked
        inputs["mask"] = mask
    inputs["c"] = c
    out = run_device(ENCODER_CASE, inputs)
    layer = encoder_reference_layers(out["layers"])[0]
    assert (layer["table"] is None) == (act == "relu")
    assert layer["linear1"]["lo"] == (0 if act == "relu" else -128)
    xq = np.array(out["xq"]).reshape(rows, E)
    assert layer["causal"] == causal
    want = qref.encoder_layer(xq, layer, S, mask=mask, causal=causal)
    assert set(out["inter"]) == set(want)
    np.testing.assert_array_equal(np.array(out["inter"]["attention"]),
                                  want["attention"]["y"].ravel(), err_msg="attention")
    for name, values in out["inter"].items():
        if name != "attention":
            np.testing.assert_array_equal(np.array(values), want[name].ravel(), err_msg=name)

    # near the float layer it came from (PyTorch's semantics, float64 reference)
    p = {k: v for k, v in inputs.items() if k.startswith("0.")}
    if mask is None:
        y_float, _ = sequential_forward([c["layer"]], p, inputs["x"])
        err = np.abs(out["y_int8_path"] - y_float).max() / np.abs(y_float).max()
        assert err < 0.1, err


def test_gelu_table_is_the_erf_gelu_rounded():
    """Every entry of the GELU table is round(gelu(v s_x) / s_y), the erf form, give or take
    one where float32 lands on the other side of a rounding boundary."""
    out = run_device("""
from tinyattn.gelu import Gelu
from tinyattn.qlayers import QActivation
q = QActivation.from_float('gelu_erf', Gelu().forward, 0.03, 0.025)
OUT['table'] = list(q.table)
""")
    v = np.array([((u ^ 128) - 128) for u in range(256)])
    want = np.clip(np.floor(gelu_forward(v * 0.03) / 0.025 + 0.5), -128, 127)
    diff = np.abs(np.array(out["table"]) - want)
    assert diff.max() <= 1 and np.sum(diff) <= 3


# ---- a digits-shaped model -----------------------------------------------------------------
QUANTIZE_AND_TRACE = DUMP + """
from tinyattn import Sequential, predict
from tinyattn.quant import quantize, quantize_tensor, load
model = Sequential.from_config(IN['config'], seed=3)
for name, param, grad in model.collect_params():
    param[:] = IN[name]
qm = quantize(model, IN['calib'])
rows, cols = IN['x'].shape
xq = quantize_tensor(IN['x'], qm.in_scale)
trace = []
qm.forward_int(xq, rows, cols, trace=trace)
OUT['layers'] = dump_layers(qm)
OUT['xq'] = list(xq)
OUT['trace'] = [list(buf) for buf, r, k in trace]
OUT['int8'] = predict(qm, IN['x'])
"""
"""A Sequential IN['config'] with the parameters IN[name], quantized with IN['calib'], run on
IN['x']: the layers, the quantized input, every layer's output, the int8 classes."""

DIGITS_LIKE = QUANTIZE_AND_TRACE + """
OUT['float'] = predict(model, IN['x'])
OUT['y_float'] = model.forward(IN['x'])
OUT['y_int8'] = qm.forward(IN['x'])
qm.save(IN['path'])
again = load(IN['path'])
OUT['reloaded'] = list(again.forward_int(xq, rows, cols)[0])
"""


def digits_config(act, norm_first, E=16):
    enc = ["TransformerEncoderLayer", E, 4, 2 * E, 0.0, act, norm_first, 1e-5, 8, False]
    return [["Tokens", 8], ["Dense", 8, E, True], ["PositionalEmbedding", 8, E], enc,
            list(enc), ["GlobalAvgPool", 8], ["Dense", E, 10, True]]


@pytest.mark.parametrize("act,norm_first", [("relu", False), ("gelu", True)])
def test_digits_shaped_model_matches_reference_on_every_row(tmp_path, act, norm_first):
    """Tokens, Dense 8 -> E, positional, two encoder layers, pool, Dense E -> 10 on synthetic
    8x8 images: every layer's output bit for bit, then save and load."""
    rng = np.random.default_rng(11)
    config = digits_config(act, norm_first)
    params = {}
    for i, spec in enumerate(config):
        for name, shape in param_shapes(spec).items():
            scale = 1.0 / np.sqrt(shape[-1]) if len(shape) == 2 else 0.1
            value = rng.standard_normal(shape) * scale
            if name.endswith("gamma"):
                value += 1.0
            params["%d.%s" % (i, name)] = f32(value)
    x = f32(np.clip(rng.standard_normal((24, 64)) * 0.4 + 0.3, 0, 1))
    inputs = dict(params, x=x, calib=x, config=config, path=str(tmp_path / "digits-int8.bin"))
    out = run_device(DIGITS_LIKE, inputs)
    layers = encoder_reference_layers(out["layers"])
    assert [l["kind"] for l in layers] == ["Tokens", "Dense", "PositionalEmbedding",
                                            "TransformerEncoderLayer",
                                            "TransformerEncoderLayer", "GlobalAvgPool", "Dense"]
    outputs = qref.sequential(np.array(out["xq"]).reshape(24, 64), layers)
    for i, (got, want) in enumerate(zip(out["trace"], outputs)):
        np.testing.assert_array_equal(np.array(got), want.ravel(), err_msg="layer %d" % i)
    assert out["int8"] == np.argmax(outputs[-1], axis=1).tolist()
    assert out["reloaded"] == out["trace"][-1]
    y_ref, _ = sequential_forward(config, params, x)
    np.testing.assert_allclose(out["y_float"], y_ref, atol=1e-4 * np.abs(y_ref).max())
    err = np.abs(out["y_int8"] - y_ref).max() / np.abs(y_ref).max()
    assert err < 0.1, err
    assert sum(a == b for a, b in zip(out["int8"], out["float"])) >= 20


def test_standalone_layernorm_and_gelu_match_reference():
    """LayerNorm and Gelu as layers of their own in a Sequential."""
    config = [["Dense", 6, 8, True], ["LayerNorm", 8, 1e-5], ["Gelu"], ["Dense", 8, 3, True]]
    rng = np.random.default_rng(21)
    params = {"0.W": rng.standard_normal((8, 6)), "0.b": rng.standard_normal(8),
              "1.gamma": 1 + 0.3 * rng.standard_normal(8), "1.beta": rng.standard_normal(8),
              "3.W": rng.standard_normal((3, 8)), "3.b": rng.standard_normal(3)}
    x = f32(rng.standard_normal((10, 6)))
    inputs = dict({k: f32(v) for k, v in params.items()}, x=x, calib=x, config=config)
    out = run_device(QUANTIZE_AND_TRACE + "OUT['y_int8'] = qm.forward(IN['x'])\n", inputs)
    layers = encoder_reference_layers(out["layers"])
    assert [l["kind"] for l in layers] == ["Dense", "LayerNorm", "Activation", "Dense"]
    outputs = qref.sequential(np.array(out["xq"]).reshape(10, 6), layers)
    for i, (got, want) in enumerate(zip(out["trace"], outputs)):
        np.testing.assert_array_equal(np.array(got), want.ravel(), err_msg="layer %d" % i)
    y_ref, _ = sequential_forward(config, params, x)
    assert np.abs(out["y_int8"] - y_ref).max() <= 0.05 * np.abs(y_ref).max()


def test_encoder_forward_allocates_nothing_once_planned():
    out = run_device("""
import gc
from tinyattn import Sequential
from tinyattn.quant import quantize, quantize_tensor
from tinyattn.rng import Rng
used = {}
for act, first in (('relu', False), ('gelu', True)):
    enc = ['TransformerEncoderLayer', 16, 4, 32, 0.0, act, first, 1e-5, 8, False]
    model = Sequential.from_config([['Tokens', 8], ['Dense', 8, 16, True],
                                    ['PositionalEmbedding', 8, 16], enc, ['GlobalAvgPool', 8],
                                    ['Dense', 16, 10, True]], seed=1)
    x = Rng(2).uniform_matrix(4, 64, 0.0, 1.0)
    qm = quantize(model, x)
    xq = quantize_tensor(x, qm.in_scale)
    first_out = qm.forward_int(xq, 4, 64)
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    again = qm.forward_int(xq, 4, 64)
    used[act] = gc.mem_alloc() - before
    gc.enable()
    used[act + '_same_buffer'] = again[0] is first_out[0]
OUT['used'] = used
""", heap="16m")["used"]
    assert out == {"relu": 0, "relu_same_buffer": True, "gelu": 0, "gelu_same_buffer": True}


BAD_INPUT = """
import array
from tinyattn import Sequential
from tinyattn import qkernels_norm as N
from tinyattn.encoder import TransformerEncoderLayer
from tinyattn.quant import quantize
from tinyattn.qencoder import add_multipliers
ones = lambda shape: np.zeros(shape) + 1.0
enc = ['TransformerEncoderLayer', 8, 2, 8, 0.0, 'relu', False, 1e-5, 4, False]
q = quantize(Sequential.from_config([enc], seed=1), ones((8, 8)) * 0.5).layers[0]
calls = {
    'norm_too_wide': lambda: N.norm_header(257, array.array("i", bytes(1028)), 1,
                                           (16384, 20, 0, 100)),
    'norm_bad_eps': lambda: N.norm_header(4, array.array('i', bytes(16)), 0, (16384, 20, 0, 100)),
    'norm_beta_overflows': lambda: N.norm_header(2, array.array('i', [2 ** 31 - 1, 0]), 1,
                                                 (16384, 20, 0, 100)),
    'norm_short_src': lambda: N.bind_norm(N.norm_header(4, array.array('i', bytes(16)), 1,
                                                        (16384, 20, 0, 100)),
                                          bytearray(4), 2, bytearray(7), bytearray(8)),
    'add_bad_mults': lambda: N.add_header(4, (40000, 1, 3)),
    'add_not_periods': lambda: N.bind_add(N.add_header(2, (16384, 16384, 15)), 3,
                                          bytearray(6), bytearray(4), bytearray(6), 2),
    'add_short_b': lambda: N.bind_add(N.add_header(2, (16384, 16384, 15)), 3, bytearray(6),
                                      bytearray(5), bytearray(6)),
    'add_scales': lambda: add_multipliers(1.0, 1.0, 1e-6),
    'encoder_without_seq_len': lambda: quantize(Sequential([TransformerEncoderLayer(8, 2, 8)]),
                                                ones((8, 8))),
    'encoder_wrong_width': lambda: q.forward(ones((4, 6))),
    'encoder_rows_not_sequences': lambda: q.forward(ones((6, 8))),
    'encoder_bad_mask': lambda: q.forward(ones((8, 8)), mask=ones((1, 8))),
}
OUT['errors'] = devio.value_errors(calls)
"""


def test_bad_input_raises_value_error():
    errors = run_device(BAD_INPUT)["errors"]
    for name, message in errors.items():
        assert message != "no error", name
    assert "256" in errors["norm_too_wide"]
    assert "eps" in errors["norm_bad_eps"]
    assert "int32" in errors["norm_beta_overflows"]
    assert "holds 7 items" in errors["norm_short_src"]
    assert "whole periods" in errors["add_not_periods"]
    assert "2^15" in errors["add_scales"]
    assert "seq_len" in errors["encoder_without_seq_len"]
    assert "columns" in errors["encoder_wrong_width"]
    assert "mask" in errors["encoder_bad_mask"]


def test_int8_encoder_model_loads_in_a_fresh_process(tmp_path):
    """quant imports qencoder only for a model that has its layers; load registers them."""
    path = str(tmp_path / "enc-int8.bin")
    first = run_device("""
import sys
from tinyattn import Sequential
from tinyattn.quant import quantize
from tinyattn.rng import Rng
OUT['lazy'] = 'tinyattn.qencoder' not in sys.modules
enc = ['TransformerEncoderLayer', 8, 2, 16, 0.0, 'gelu', True, 1e-5, 4, True]
model = Sequential.from_config([['Tokens', 4], ['Dense', 3, 8, True],
                                ['PositionalEmbedding', 4, 8], enc, ['LayerNorm', 8, 1e-5]],
                               seed=5)
x = Rng(1).uniform_matrix(6, 12, -1.0, 1.0)
qm = quantize(model, x)
qm.save(IN['path'])
OUT['y'] = qm.forward(x)
""", {"path": path})
    again = run_device("""
import sys
from tinyattn.quant import load
from tinyattn.rng import Rng
qm = load(IN['path'])
OUT['kinds'] = [layer.kind for layer in qm.layers]
OUT['y'] = qm.forward(Rng(1).uniform_matrix(6, 12, -1.0, 1.0))
""", {"path": path})
    assert first["lazy"]
    assert again["kinds"] == ["Tokens", "Dense", "PositionalEmbedding",
                              "TransformerEncoderLayer", "LayerNorm"]
    np.testing.assert_array_equal(again["y"], first["y"])
