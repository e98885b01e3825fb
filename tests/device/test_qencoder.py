"""The int8 encoder (qkernels_norm, qnorm, qencoder) against the NumPy integer reference
(reference.int8_encoder), bit for bit: the LayerNorm and add kernels on random and
worst-case inputs, the encoder layer in every form, and a digits-shaped model on every row.

The device cases are tests/board/case_qnorm.py (the kernels), case_qencoder.py (the layer),
case_qmodels.py (whole models) and case_qload.py (loading in a fresh interpreter). A model
compared bit for bit is quantized on the host (tinyattn_host.quantize, as quant.quantize does it,
in float64) and loaded by the device: the device's own quantize, in its float32, can round a
scale or a bias the other way. The device's own quantization is held to the float reference.
"""

import math

import numpy as np

from tinyattn_host import quantize as hq
from tinyattn_host.reference.sequential import int8_layers
import int8_board_files as boardfiles
from tinyattn_host.quantize import layers as qlayers
from board_cases import board_test
from checks import config_id, f32
from tinyattn_host.reference import int8 as ref
from tinyattn_host.reference import int8_encoder as qref
from tinyattn_host.reference.encoder import gelu_forward
from tinyattn_host.reference.sequential import int8_forward, sequential_forward
from tinyattn_host.interop.statedict import param_shapes

# ---- kernels (case_qnorm) --------------------------------------------------------------------
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
WORST_ROOM = 2 ** 31 - 1 - 2 ** 23  # beta at the edge of its room


def worst_norm_config(E, eps):
    """The rows that drive each intermediate to its bound, with gamma +-127 and beta at the
    edge of its room."""
    x = qref.worst_case_norm_rows(E)
    return dict(rows=len(x), E=E, x=x.ravel().tolist(), in_place=False, eps=eps,
                gamma=np.where(np.arange(E) % 2, 127, -127).tolist(),
                beta=np.where(np.arange(E) % 3, WORST_ROOM, -WORST_ROOM).tolist(),
                mult=ref.fixed_point(1e-9, 128))


def test_norm_configurations_vary():
    cs = NORM_CONFIGS
    assert {c["E"] for c in cs} >= {1, 3, 24, 64, 256}
    assert {c["eps"] for c in cs} >= {1, qref.MAX_EPS}
    # small variances (a large scaling k) and the largest (k = -1) both occur
    ks = np.concatenate([norm_reference(c)["k"].ravel() for c in cs])
    assert ks.min() == -1 and ks.max() >= 10


def test_norm_worst_case_inputs_reach_the_bounds():
    """With eps = 1 the reference reaches the bounds (V near its largest, |E x - sum| at
    255 (E - 1)) on the rows case_qnorm runs."""
    for E in (8, 256):
        bounds = qref.worst_case_bounds(E=E, beta_max=WORST_ROOM, add_shift=30)
        c = worst_norm_config(E, 1)
        x = np.array(c["x"]).reshape(c["rows"], E)
        got = norm_reference(c)
        assert np.abs(E * x.astype(np.int64) - got["sum"]).max() == bounds["norm E x - sum"]
        assert got["V"].max() >= 0.99 * bounds["norm V"]
        assert np.abs(got["z"]).max() <= bounds["norm z"]
        assert np.abs(got["z"]).max() >= 4096 * math.sqrt(E - 1) * (1 - 2 ** -10)


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


def add_reference(c):
    a = np.array(c["a"]).reshape(c["rows"], c["cols"])
    b = np.array(c["b"]).reshape(-1, c["cols"])
    want = qref.positional(a, b, c["mults"]) if c["period"] else qref.add(a, b, c["mults"])
    return want.ravel().tolist()


def worst_add_configs():
    """a = b = -128 and 127 with both multipliers 2^15 - 1 and s = 0, 15, 30."""
    a, b = [-128, 127, -128, 127, 0], [-128, 127, 127, -128, 0]
    return {s: dict(rows=1, cols=5, period=None, mults=[32767, 32767, s], a=a, b=b)
            for s in (0, 15, 30)}


def test_add_worst_case_bound_is_the_largest_sum():
    assert qref.worst_case_bounds(add_shift=30)["add a ma + b mb + half"] == \
        256 * 32767 + 2 ** 29


SCALES = [[0.02, 0.01, 0.03], [1.0, 0.5, 1e-3], [0.5, 3.0, 1.0], [2.0, 1e-4, 1e-4]]
EPS_SCALES = [0.01, 1e-6, 10.0]


def test_eps_units_reach_both_ends():
    want = [qref.eps_units(1e-5, 24, s) for s in EPS_SCALES]
    assert want[1] == qref.MAX_EPS and want[2] == 1


def kernel_fixtures():
    fixtures = {}
    for seed, c in enumerate(NORM_CONFIGS):
        fixtures["norm%02d" % seed] = {"c": c, "y": norm_reference(c)["y"].ravel().tolist()}
    for E in (8, 256):
        for eps in (1, qref.MAX_EPS):
            c = worst_norm_config(E, eps)
            fixtures["worst_norm_E%d_eps%d" % (E, eps)] = {
                "c": c, "y": norm_reference(c)["y"].ravel().tolist()}
    for seed in range(16):
        c = add_config(seed)
        fixtures["add%02d" % seed] = {"c": c, "y": add_reference(c)}
    for s, c in worst_add_configs().items():
        fixtures["worst_add_s%02d" % s] = {"c": c, "y": add_reference(c)}
    fixtures["scales"] = {"scales": SCALES, "eps_scales": EPS_SCALES,
                          "eps": [qref.eps_units(1e-5, 24, s) for s in EPS_SCALES]}
    return fixtures


test_qnorm_on_board = board_test("case_qnorm", kernel_fixtures)


# ---- the encoder layer (case_qencoder) ---------------------------------------------------------
def make_encoder_configs():
    configs = []
    for i, (norm_first, act) in enumerate([(False, "relu"), (True, "relu"), (False, "gelu"),
                                           (True, "gelu")] * 2):
        E, H, F, S, B = [(8, 2, 12, 4, 3), (16, 4, 24, 5, 2)][i // 4]
        configs.append(dict(layer=["TransformerEncoderLayer", E, H, F, 0.0, act, norm_first,
                                   1e-5, S, i % 3 == 1], seed=i, mask=i % 3 == 2, B=B))
    return configs


ENCODER_CONFIGS = make_encoder_configs()


def encoder_id(c):
    """first (norm first) or after, the activation, the seed: first-gelu-seed3."""
    return config_id(first=c["layer"][6], after=not c["layer"][6], act=c["layer"][5],
                     seed=c["seed"])


def test_encoder_configurations_cover_every_form():
    forms = {(c["layer"][6], c["layer"][5], c["mask"], c["layer"][9]) for c in ENCODER_CONFIGS}
    assert {(nf, act) for nf, act, _, _ in forms} == {
        (False, "relu"), (True, "relu"), (False, "gelu"), (True, "gelu")}
    assert any(m for _, _, m, _ in forms) and any(cz for _, _, _, cz in forms)


def encoder_layer_fixture(c):
    """Float parameters, input and calibration; the host's int8 layer and every intermediate
    the reference computes with it; the float layer's output (no mask)."""
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
    params = {k: f32(v) for k, v in params.items()}
    x = f32(rng.standard_normal((rows, E)))
    calib = np.concatenate([x, f32(rng.standard_normal((2 * S, E)))])
    mask = None
    if c["mask"]:
        mask = (np.arange(S)[None, :] < rng.integers(1, S + 1, size=c["B"])[:, None]) * 1.0
        mask[-1] = 0.0  # a sequence with every key masked
    specs, arrays = hq.quantize([c["layer"]], params, calib)
    layer = int8_layers(specs, arrays)[0]
    assert (layer["table"] is None) == (act == "relu")
    assert layer["linear1"]["lo"] == (0 if act == "relu" else -128)
    assert layer["causal"] == causal
    xq = hq.quantize_tensor(x, hq.in_scale(specs))
    want = qref.encoder_layer(xq, layer, S, mask=mask, causal=causal)
    want["attention"] = want["attention"]["y"]
    fixture = dict(params, c=c, x=x, calib=calib, xq=xq.ravel().tolist(),
                   want={k: np.asarray(v).ravel().tolist() for k, v in want.items()})
    if mask is None:  # near the float layer it came from (PyTorch's semantics, float64)
        fixture["y_float"], _ = sequential_forward([c["layer"]], params, x)
    else:
        fixture["mask"] = mask
    return fixture, hq.model_bytes(specs, arrays)


def encoder_fixtures():
    fixtures = {}
    for i, c in enumerate(ENCODER_CONFIGS):
        name = "layer%02d_%s" % (i, encoder_id(c).replace("-", "_"))
        fixtures[name], fixtures[name + ".bin"] = encoder_layer_fixture(c)
    _, arrays = qlayers.activation(qlayers.GELU, gelu_forward, 0.03, 0.025)
    fixtures["gelu"] = {"table": arrays["table"].tolist()}
    return fixtures


test_qencoder_on_board = board_test("case_qencoder", encoder_fixtures)


# ---- whole models (case_qmodels) -------------------------------------------------------------
def digits_config(act, norm_first, E=16):
    enc = ["TransformerEncoderLayer", E, 4, 2 * E, 0.0, act, norm_first, 1e-5, 8, False]
    return [["Tokens", 8], ["Dense", 8, E, True], ["PositionalEmbedding", 8, E], enc,
            list(enc), ["GlobalAvgPool", 8], ["Dense", E, 10, True]]


def model_fixture(config, params, x, kinds):
    """A Sequential's float parameters and input; the host's int8 model, the input the
    board must quantize it to, every layer's reference output, its classes; the float
    reference's output."""
    s_x = hq.in_scale(hq.quantize(config, params, x)[0])
    x = boardfiles.robust_input(x, s_x)
    specs, arrays = hq.quantize(config, params, x)  # calibrated on the x the board gets
    assert hq.in_scale(specs) == s_x
    xq = hq.quantize_tensor(x, hq.in_scale(specs))
    outputs = int8_forward(xq, int8_layers(specs, arrays))
    y_ref, _ = sequential_forward(config, params, x)
    fixture = dict(params, config=config, x=x, kinds=kinds, xq=xq.ravel().tolist(),
                   trace=[o.ravel().tolist() for o in outputs],
                   classes=np.argmax(outputs[-1], axis=1).tolist(), y_ref=y_ref)
    return fixture, hq.model_bytes(specs, arrays)


def digits_fixture(act, norm_first):
    """Tokens, Dense 8 -> E, positional, two encoder layers, pool, Dense E -> 10 on synthetic
    8x8 images."""
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
    kinds = ["Tokens", "Dense", "PositionalEmbedding", "TransformerEncoderLayer",
             "TransformerEncoderLayer", "GlobalAvgPool", "Dense"]
    return model_fixture(config, params, x, kinds)


def standalone_fixture():
    """LayerNorm and Gelu as layers of their own in a Sequential."""
    config = [["Dense", 6, 8, True], ["LayerNorm", 8, 1e-5], ["Gelu"], ["Dense", 8, 3, True]]
    rng = np.random.default_rng(21)
    params = {"0.W": rng.standard_normal((8, 6)), "0.b": rng.standard_normal(8),
              "1.gamma": 1 + 0.3 * rng.standard_normal(8), "1.beta": rng.standard_normal(8),
              "3.W": rng.standard_normal((3, 8)), "3.b": rng.standard_normal(3)}
    x = f32(rng.standard_normal((10, 6)))
    return model_fixture(config, {k: f32(v) for k, v in params.items()}, x,
                         ["Dense", "LayerNorm", "Activation", "Dense"])


def model_fixtures():
    fixtures = {}
    for act, norm_first in [("relu", False), ("gelu", True)]:
        name = "digits_%s_%s" % (act, "first" if norm_first else "after")
        fixtures[name], fixtures[name + ".bin"] = digits_fixture(act, norm_first)
    fixtures["standalone"], fixtures["standalone.bin"] = standalone_fixture()
    return fixtures


test_qmodels_on_board = board_test("case_qmodels", model_fixtures)


# ---- loading in a fresh interpreter (case_qload) ----------------------------------------------
def load_fixtures():
    """An int8 model with encoder layers, the file quant.load reads, and its reference output."""
    enc = ["TransformerEncoderLayer", 8, 2, 16, 0.0, "gelu", True, 1e-5, 4, True]
    config = [["Tokens", 4], ["Dense", 3, 8, True], ["PositionalEmbedding", 4, 8], enc,
              ["LayerNorm", 8, 1e-5]]
    rng = np.random.default_rng(5)
    params = {}
    for i, spec in enumerate(config):
        for name, shape in param_shapes(spec).items():
            value = rng.standard_normal(shape) * (0.5 if len(shape) == 2 else 0.1)
            params["%d.%s" % (i, name)] = f32(value + (1.0 if name.endswith("gamma") else 0.0))
    x = f32(rng.uniform(-1.0, 1.0, size=(6, 12)))
    fixture, model = model_fixture(config, params, x, ["Tokens", "Dense", "PositionalEmbedding",
                                                       "TransformerEncoderLayer", "LayerNorm"])
    return {"model": fixture, "enc-int8.bin": model}


test_qload_on_board = board_test("case_qload", load_fixtures)
