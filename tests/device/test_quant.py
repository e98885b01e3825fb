"""The int8 model (tinyattn.int8) against the NumPy integer reference, bit for bit, and
against the float model it came from (tests/board/case_quant.py on the board).

The bit-exact checks need an int8 model the host knows exactly. tinyattn_host.quantize makes it
as the device's tinyattn.int8.quantize does (the same scales, weights, biases, multipliers
and tables), in float64; the host writes it as a model file (tinyattn_host.modelfile, kind
"quantized") with the integer reference's output of every layer, and the device loads that
file and runs it. The device's own quantize runs in its own float (float32 on a board), so
its model may differ from the host's by a last rounding: the device holds it to the host's
within that (case_quant.near_model), and holds its int8 outputs to the float model's.
"""

from functools import lru_cache

import numpy as np

from tinyattn_host import quantize as hq
from tinyattn_host.reference.sequential import int8_layers
from tinyattn_host.quantize import layers as qlayers
from board_cases import board_test
from checks import f32
from tinyattn_host.reference import attention_forward
from tinyattn_host.reference import int8_attend
from tinyattn_host.reference.attention import ATTENTION_PARAMS
from tinyattn_host.reference.sequential import int8_forward, sequential_forward
from tinyattn_host.reference.training import split_indices, standardize
from tinyattn_host.reference.training import train as train_reference
from tinyattn_host.device_modules import device_module

IRIS = device_module("datasets/iris")


# ---- attention alone: every intermediate --------------------------------------------------
def make_attention_configs():
    rng = np.random.default_rng(77)
    configs = []
    fixed = [(64, 4, 16, 1), (64, 4, 7, 3), (8, 2, 4, 3), (16, 8, 16, 1), (4, 1, 1, 1)]
    for i in range(32):
        if i < len(fixed):
            E, H, S, B = fixed[i]
        else:
            E = int(rng.choice([4, 8, 16, 32]))
            H = int(rng.choice([h for h in (1, 2, 4, 8) if E % h == 0]))
            S, B = int(rng.choice([1, 2, 5, 7, 12])), int(rng.choice([1, 2, 3]))
        configs.append(dict(E=E, H=H, S=S, B=B, seed=i, bias=i % 4 != 3,
                            mask=i % 3 == 1, causal=i % 4 == 2,
                            x_range=float(rng.choice([0.3, 1.0, 4.0]))))
    return configs


ATTENTION_CONFIGS = make_attention_configs()


def attention_inputs(c):
    rng = np.random.default_rng(500 + c["seed"])
    E, rows = c["E"], c["B"] * c["S"]
    inputs = {"x": f32(c["x_range"] * rng.standard_normal((rows, E))),
              "calib": f32(c["x_range"] * rng.standard_normal((max(rows, 8), E)))}
    inputs["calib"][:rows] = inputs["x"]  # no saturation from an unlucky calibration set
    for n in "qkvo":
        inputs["W" + n] = f32(rng.standard_normal((E, E)) / np.sqrt(E))
        if c["bias"]:
            inputs["b" + n] = f32(0.1 * rng.standard_normal(E))
    if c["mask"]:
        lengths = rng.integers(1, c["S"] + 1, size=c["B"])
        mask = (np.arange(c["S"])[None, :] < lengths[:, None]).astype(float)
        if c["B"] > 1:
            mask[-1, :] = 0.0  # a sequence with every key masked
        inputs["mask"] = mask
    return inputs


def test_attention_configurations_vary():
    cs = ATTENTION_CONFIGS
    assert len(cs) >= 30
    assert {c["E"] for c in cs} >= {4, 8, 16, 32, 64} and {c["H"] for c in cs} == {1, 2, 4, 8}
    for flag in ("bias", "mask", "causal"):
        assert {c[flag] for c in cs} == {True, False}


@lru_cache(maxsize=None)
def attention_case(index):
    """(fixture, float arrays file, int8 model file) of attention configuration `index`:
    the float arrays (weights, inputs, the reference's float output) go as float32 in a
    model file, a quarter of their size as text."""
    c = ATTENTION_CONFIGS[index]
    inputs = attention_inputs(c)
    H, S = c["H"], c["S"]
    p = {n: inputs.get(n) for n in ATTENTION_PARAMS}
    spec, arrays = qlayers.attention(p, qlayers.projection_stats(inputs["calib"], p), H, S,
                                hq.scale_for(hq.max_abs(inputs["calib"])), None, "0.")
    layer = int8_layers([spec], arrays)[0]
    xq = hq.quantize_tensor(inputs["x"], spec["scales"]["x"])
    mask = inputs.get("mask")
    got = int8_attend.attention(xq, layer, S, mask=mask, causal=c["causal"])
    assert layer["mult_out"] is None  # a lone attention keeps its int32 output
    y_float, _ = attention_forward(inputs["x"], p, H, S, mask=mask, causal=c["causal"])
    fixture = {"config": dict(c, id="E{E}H{H}S{S}B{B}-{seed}".format(**c)),
               "xq": xq.ravel().tolist()}
    fixture.update({n: got[n].ravel().tolist()
                    for n in ("Q", "K", "V", "scores", "probs", "ctx", "acc")})
    floats = dict(inputs, y_float=y_float)
    return fixture, hq.file_bytes("arrays", {}, floats), hq.model_bytes([spec], arrays)


# ---- the Iris model ------------------------------------------------------------------------
def iris_params(seed):
    """Xavier-uniform weights and zero biases, as the device's layers start (drawn here:
    the device sets the host's parameters, so nothing depends on its Rng's draws)."""
    rng = np.random.default_rng(seed)
    params = {}
    for i, spec in enumerate(IRIS.CONFIG):
        if spec[0] == "Dense":
            shapes = {"W": (spec[2], spec[1]), "b": (spec[2],)}
        elif spec[0] == "SelfAttention":
            shapes = {n: (spec[1], spec[1]) for n in ("Wq", "Wk", "Wv", "Wo")}
            shapes.update({n: (spec[1],) for n in ("bq", "bk", "bv", "bo")})
        else:
            continue
        for name, shape in shapes.items():
            bound = np.sqrt(6.0 / sum(shape)) if len(shape) == 2 else 0.0
            params["%d.%s" % (i, name)] = rng.uniform(-bound, bound, shape)
    return params


@lru_cache(maxsize=None)
def iris_case():
    """The Iris split (Dataset.split(0.2, seed=42)), the model trained on the host for 100
    epochs, its int8 model, and the reference's outputs of every layer on all 150 rows."""
    rows = [IRIS.record(i) for i in range(IRIS.COUNT)]
    X = np.array([features for features, _ in rows])
    y = np.array([label for _, label in rows])
    train_rows, test_rows = split_indices(len(y), 0.2, 42)
    Xtr, Xte, mean, std = standardize(X[train_rows], X[test_rows])
    Xtr, Xte, Xall = f32(Xtr), f32(Xte), f32((X - mean) / std)
    params = iris_params(42)
    train_reference(IRIS.CONFIG, params, Xtr, y[train_rows], epochs=100, seed=42)
    params = {k: f32(v) for k, v in params.items()}
    specs, arrays = hq.quantize(IRIS.CONFIG, params, Xtr)
    xq = hq.quantize_tensor(Xall, hq.in_scale(specs))
    outputs = int8_forward(xq, int8_layers(specs, arrays))
    logits = outputs[-1]
    float_logits, _ = sequential_forward(IRIS.CONFIG, params, Xall)
    fixture = {"Xtr": Xtr, "Xte": Xte, "Xall": Xall, "yte": y[test_rows].tolist(),
               "yall": y.tolist(), "xq": xq.ravel().tolist(),
               "trace": [o.ravel().tolist() for o in outputs],
               "int8_all": np.argmax(logits, axis=1).tolist()}
    fixture.update(params)
    return fixture, hq.model_bytes(specs, arrays), logits, float_logits, y


def test_iris_reference_logits_are_int32_and_agree_with_float():
    """The host's part of the Iris checks (the device's are in case_quant): the reference's
    int8 logits are int32 (150, 3), and the reference's int8 and float models agree."""
    _, _, logits, float_logits, y = iris_case()
    assert logits.dtype == np.int32 and logits.shape == (150, 3)
    same = int(np.sum(np.argmax(logits, axis=1) == np.argmax(float_logits, axis=1)))
    assert same >= 149


# ---- other models --------------------------------------------------------------------------
ACTIVATIONS = ["relu", "gelu_tanh", "tanh", "sigmoid"]


def sequential_config(kind):
    S, E, F = 3, 8, 5
    return [["Dense", F, S * E, True], ["Activation", kind], ["Tokens", S],
            ["SelfAttention", E, 2, S, kind != "tanh"], ["GlobalAvgPool", S],
            ["Dense", E, 4, True], ["Activation", kind]]


@lru_cache(maxsize=None)
def sequential_case(kind):
    layers = sequential_config(kind)
    rng = np.random.default_rng(len(kind))
    F = layers[0][1]
    x, calib = f32(rng.standard_normal((6, F))), f32(rng.standard_normal((20, F)))
    calib[:6] = x  # no saturation from an unlucky calibration set
    params = {}
    for i, spec in enumerate(layers):  # Xavier-uniform weights, small biases
        if spec[0] == "Dense":
            shapes = {"W": (spec[2], spec[1])}
            shapes.update({"b": (spec[2],)} if spec[3] else {})
        elif spec[0] == "SelfAttention":
            shapes = {n: (spec[1], spec[1]) for n in ("Wq", "Wk", "Wv", "Wo")}
            shapes.update({n: (spec[1],) for n in ("bq", "bk", "bv", "bo")} if spec[4] else {})
        else:
            continue
        for name, shape in shapes.items():
            bound = np.sqrt(6.0 / sum(shape)) if len(shape) == 2 else 0.1
            params["%d.%s" % (i, name)] = f32(rng.uniform(-bound, bound, shape))
    specs, arrays = hq.quantize(layers, params, calib)
    xq = hq.quantize_tensor(x, hq.in_scale(specs))
    outputs = int8_forward(xq, int8_layers(specs, arrays))
    y_float, _ = sequential_forward(layers, params, x)
    fixture = {"layers": layers, "x": x, "calib": calib, "xq": xq.ravel().tolist(),
               "trace": [o.ravel().tolist() for o in outputs], "y_float": y_float}
    fixture.update(params)
    return fixture, hq.model_bytes(specs, arrays)


def make_fixtures():
    fixtures = {}
    for index in range(len(ATTENTION_CONFIGS)):
        fixture, floats, model = attention_case(index)
        name = "att%02d" % index
        fixtures.update({name: fixture, name + ".f": floats, name + ".q": model})
    fixture, model, _, _, _ = iris_case()
    fixtures.update({"iris": fixture, "iris.q": model})
    for kind in ACTIVATIONS:
        fixture, model = sequential_case(kind)
        fixtures.update({"seq_" + kind: fixture, "seq_%s.q" % kind: model})
    return fixtures


test_quant_on_board = board_test("case_quant", make_fixtures)
