"""The int8 model (tinyattn.quant) against the NumPy integer reference, bit for bit, and
against the float model it came from."""

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host.reference import attention_forward
from tinyattn_host.reference import integer as ref
from tinyattn_host.reference.training import train as train_reference
from tinyattn_host.unixport import MicroPythonError

DUMP = """
def dump_layers(qm):
    arrays = {}
    for name, buf, code, shape in qm.named_arrays():
        arrays[name] = list(buf)
    return {'specs': qm.description()['layers'], 'arrays': arrays}
"""


def reference_layers(dumped):
    """The device's quantized layers (specs and integer arrays) as integer.sequential wants."""
    return ref.layers_from_specs(dumped["specs"], dumped["arrays"])


# ---- attention alone: every intermediate --------------------------------------------------
ATTENTION_CASE = DUMP + """
from tinyattn import Attention
from tinyattn.quant import quantize, quantize_tensor
c = IN['config']
S, rows = c['S'], c['B'] * c['S']
layer = Attention(c['E'], c['H'], use_bias=c['bias'], seed=c['seed'])
for name, param, grad in layer.collect_params():
    param[:] = IN[name]
qm = quantize(layer, IN['calib'], seq_len=S)
q = qm.layers[0]
xq = quantize_tensor(IN['x'], q.scales['x'])
mask = IN.get('mask')
keep = None
if mask is not None:
    keep = bytearray(1 if v else 0 for row in mask for v in row.tolist())
trace = {}
y, _, _ = q.forward_int(xq, rows, c['E'], trace=trace, keep=keep, causal=c['causal'])
OUT['layers'] = dump_layers(qm)
OUT['xq'] = list(xq)
for name in ('Q', 'K', 'V', 'scores', 'probs', 'ctx'):
    OUT[name] = list(trace[name])
OUT['y'] = list(y)
OUT['y_int8_path'] = q.forward(IN['x'], mask=mask, causal=c['causal'])
OUT['y_float'] = layer.forward(IN['x'], S, mask=mask, causal=c['causal'])
"""


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
    f32 = lambda a: a.astype(np.float32).astype(np.float64)
    inputs = {"config": c,
              "x": f32(c["x_range"] * rng.standard_normal((rows, E))),
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


@pytest.mark.parametrize("c", ATTENTION_CONFIGS,
                         ids=lambda c: "E{E}H{H}S{S}B{B}-{seed}".format(**c))
def test_quantized_attention_matches_reference_bit_for_bit(c):
    inputs = attention_inputs(c)
    out = run_device(ATTENTION_CASE, inputs)
    layer = reference_layers(out["layers"])[0]
    E, S, B, H = c["E"], c["S"], c["B"], c["H"]
    xq = np.array(out["xq"]).reshape(B * S, E)
    mask = inputs.get("mask")
    got = ref.attention(xq, layer, S, mask=mask, causal=c["causal"])
    for name in ("Q", "K", "V", "scores", "probs", "ctx"):
        np.testing.assert_array_equal(np.array(out[name]), got[name].ravel(), err_msg=name)
    assert layer["mult_out"] is None  # a lone attention keeps its int32 output
    np.testing.assert_array_equal(np.array(out["y"]), got["acc"].ravel())

    # the input quantization: round half up of x / s_x (device float), saturated
    s_x = out["layers"]["specs"][0]["scales"]["x"]
    assert np.max(np.abs(xq - np.clip(np.floor(inputs["x"] / s_x + 0.5), -128, 127))) <= 1

    # and the int8 layer stays near the float one it was made from. With x_range 4 the
    # logits span hundreds of nats and the float softmax is nearly one-hot: a 1% error in a
    # score then moves a whole row (the limit of int8 Q and K, not a bug), so only the
    # bit-exact checks above apply there.
    p = {n: inputs.get(n) for n in ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")}
    y_float, _ = attention_forward(inputs["x"], p, H, S, mask=mask, causal=c["causal"])
    np.testing.assert_allclose(out["y_float"], y_float, atol=1e-4 * max(1, np.abs(y_float).max()))
    if c["x_range"] <= 1.0:
        err = np.abs(out["y_int8_path"] - y_float).max() / np.abs(y_float).max()
        assert err < 0.06, err


# ---- the Iris model ------------------------------------------------------------------------
IRIS_DATA = """
from tinyattn import load_iris, iris_model
data = load_iris()
train_set, test_set = data.split(0.2, seed=42)
everything = data.take(list(range(150)))
everything.standardize(train_set.mean, train_set.std)
model = iris_model(42)
OUT.update(Xtr=train_set.X, ytr=train_set.y, Xte=test_set.X, yte=test_set.y,
           Xall=everything.X, yall=everything.y, config=model.config())
for name, param, grad in model.collect_params():
    OUT[name] = param
"""

IRIS_INT8 = DUMP + """
from tinyattn import iris_model, predict
from tinyattn.quant import quantize, quantize_tensor, load
model = iris_model(42)
for name, param, grad in model.collect_params():
    param[:] = IN[name]
qm = quantize(model, IN['Xtr'])
xq = quantize_tensor(IN['Xall'], qm.in_scale)
trace = []
qm.forward_int(xq, 150, 4, trace=trace)
OUT['layers'] = dump_layers(qm)
OUT['xq'] = list(xq)
OUT['trace'] = [list(buf) for buf, rows, cols in trace]
OUT['float_all'] = predict(model, IN['Xall'])
OUT['int8_all'] = predict(qm, IN['Xall'])
OUT['float_test'] = predict(model, IN['Xte'])
OUT['int8_test'] = predict(qm, IN['Xte'])
qm.save(IN['path'])
again = load(IN['path'])
reloaded, _, _ = again.forward_int(xq, 150, 4)
OUT['reloaded'] = list(reloaded)
OUT['reloaded_predictions'] = predict(again, IN['Xall'])
"""


@pytest.fixture(scope="module")
def iris(tmp_path_factory):
    data = run_device(IRIS_DATA)
    params = {k: v for k, v in data.items() if k[0].isdigit()}
    train_reference(data["config"], params, data["Xtr"], np.array(data["ytr"]), epochs=100,
                    seed=42)
    inputs = dict(params, Xtr=data["Xtr"], Xte=data["Xte"], Xall=data["Xall"])
    inputs = {k: v.astype(np.float32).astype(np.float64) for k, v in inputs.items()}
    inputs["path"] = str(tmp_path_factory.mktemp("iris") / "iris-int8.bin")
    out = run_device(IRIS_INT8, inputs)
    return data, out


def test_iris_int8_model_matches_reference_on_all_150_rows(iris):
    data, out = iris
    layers = reference_layers(out["layers"])
    outputs = ref.sequential(np.array(out["xq"]).reshape(150, 4), layers)
    assert [l["kind"] for l in layers] == ["Dense", "Activation", "Tokens", "SelfAttention",
                                            "GlobalAvgPool", "Dense"]
    assert len(out["trace"]) == len(outputs)
    for i, (got, want) in enumerate(zip(out["trace"], outputs)):
        np.testing.assert_array_equal(np.array(got), want.ravel(), err_msg="layer %d" % i)
    logits = outputs[-1]
    assert logits.dtype == np.int32 and logits.shape == (150, 3)
    assert out["int8_all"] == np.argmax(logits, axis=1).tolist()


def test_iris_int8_agrees_with_float_on_149_rows_and_accuracy(iris):
    data, out = iris
    y_test, y_all = np.array(data["yte"]), np.array(data["yall"])
    float_acc = np.mean(np.array(out["float_test"]) == y_test)
    int8_acc = np.mean(np.array(out["int8_test"]) == y_test)
    same = int(np.sum(np.array(out["float_all"]) == np.array(out["int8_all"])))
    print("Iris test accuracy: float %.4f, int8 %.4f; same class on %d of 150 rows "
          "(float %d/150 correct, int8 %d/150)"
          % (float_acc, int8_acc, same, np.sum(np.array(out["float_all"]) == y_all),
             np.sum(np.array(out["int8_all"]) == y_all)))
    assert float_acc >= 0.9  # the float model trained
    assert abs(int8_acc - float_acc) <= 0.02
    assert same >= 149


def test_iris_int8_model_saves_and_loads(iris):
    _, out = iris
    assert out["reloaded"] == out["trace"][-1]
    assert out["reloaded_predictions"] == out["int8_all"]


# ---- other models and bad input ------------------------------------------------------------
SEQUENTIAL_CASE = DUMP + """
from tinyattn import Sequential
from tinyattn.quant import quantize, quantize_tensor
c = IN['config']
model = Sequential.from_config(c['layers'], seed=c['seed'])
qm = quantize(model, IN['calib'])
xq = quantize_tensor(IN['x'], qm.in_scale)
trace = []
qm.forward_int(xq, IN['x'].shape[0], IN['x'].shape[1], trace=trace)
OUT['layers'] = dump_layers(qm)
OUT['xq'] = list(xq)
OUT['trace'] = [list(buf) for buf, rows, cols in trace]
OUT['y_float'] = model.forward(IN['x'])
OUT['y_int8_path'] = qm.forward(IN['x'])
"""


@pytest.mark.parametrize("kind", ["relu", "gelu", "tanh", "sigmoid"])
def test_sequential_with_each_activation_matches_reference(kind):
    S, E, F = 3, 8, 5
    layers = [["Dense", F, S * E, True], ["Activation", kind], ["Tokens", S],
              ["SelfAttention", E, 2, S, kind != "tanh"], ["GlobalAvgPool", S],
              ["Dense", E, 4, True], ["Activation", kind]]
    rng = np.random.default_rng(len(kind))
    f32 = lambda a: a.astype(np.float32).astype(np.float64)
    inputs = {"config": {"layers": layers, "seed": 3},
              "x": f32(rng.standard_normal((6, F))), "calib": f32(rng.standard_normal((20, F)))}
    inputs["calib"][:6] = inputs["x"]  # no saturation from an unlucky calibration set
    out = run_device(SEQUENTIAL_CASE, inputs)
    ref_layers = reference_layers(out["layers"])
    outputs = ref.sequential(np.array(out["xq"]).reshape(6, F), ref_layers)
    for i, (got, want) in enumerate(zip(out["trace"], outputs)):
        np.testing.assert_array_equal(np.array(got), want.ravel(), err_msg="layer %d" % i)
    y = out["y_float"]
    assert np.abs(out["y_int8_path"] - y).max() <= 0.06 * np.abs(y).max()


BAD_INPUT = """
import math
from tinyattn import Attention, Dense, iris_model
from tinyattn.quant import quantize
calls = {
    'not_a_model': lambda: quantize('model', np.zeros((2, 4))),
    'attention_without_seq_len': lambda: quantize(Attention(8, 2, seed=1), np.zeros((4, 8))),
    'calibration_not_2d': lambda: quantize(Dense(4, 3, seed=1), np.zeros(4)),
}
dense = quantize(Dense(4, 3, seed=1), np.array([[1.0, -2.0, 0.5, 3.0]]))
calls['nan_input'] = lambda: dense.forward(np.array([[1.0, math.nan, 0.0, 0.0]]))
calls['wrong_width'] = lambda: dense.forward(np.zeros((2, 5)))
ones = lambda shape: np.zeros(shape) + 1.0
attention = quantize(Attention(8, 2, seed=1), ones((4, 8)), seq_len=4).layers[0]
calls['rows_not_sequences'] = lambda: attention.forward(ones((6, 8)))
calls['bad_mask'] = lambda: attention.forward(ones((4, 8)), mask=ones((2, 4)))
OUT['errors'] = devio.value_errors(calls)
"""


def test_bad_input_raises_value_error():
    errors = run_device(BAD_INPUT)["errors"]
    for name, message in errors.items():
        assert message != "no error", name
    assert "NaN" in errors["nan_input"]
    assert "seq_len" in errors["attention_without_seq_len"]


def test_loading_a_float_model_file_as_int8_is_refused(tmp_path):
    path = str(tmp_path / "float.bin")
    with pytest.raises(MicroPythonError, match="not a 'quantized' one"):
        run_device("""
from tinyattn import iris_model, save
from tinyattn.quant import load
save(iris_model(1), %r)
load(%r)
""" % (path, path))


def test_quantize_tensor_rounds_half_up_and_saturates():
    out = run_device("""
from tinyattn.quant import quantize_tensor
x = np.array([[-1.5, -0.5, 0.5, 1.5, 2.49, 126.6, 200.0, -127.6, -300.0]])
OUT['q'] = list(quantize_tensor(x, 1.0))
OUT['w'] = list(quantize_tensor(x * 0.5, 0.5, low=-127))
""")
    assert out["q"] == [-1, 0, 1, 2, 2, 127, 127, -128, -128]
    assert out["w"] == [-1, 0, 1, 2, 2, 127, 127, -127, -127]


def test_int8_forward_allocates_nothing_once_planned():
    """After the first call of a shape, forward_int runs its kernels with no heap allocation
    (buffers made once per shape, kernels called positionally)."""
    out = run_device("""
import gc
from tinyattn import iris_model, Attention
from tinyattn.quant import quantize, quantize_tensor
model = iris_model(42)
x = np.zeros((16, 4)) + 0.5
qm = quantize(model, x)
xq = quantize_tensor(x, qm.in_scale)
attention = quantize(Attention(16, 4, seed=1), np.zeros((8, 16)) + 0.25, seq_len=8)
aq = quantize_tensor(np.zeros((8, 16)) + 0.25, attention.in_scale)
used = {}
for name, run in (('iris', lambda: qm.forward_int(xq, 16, 4)),
                  ('attention', lambda: attention.forward_int(aq, 8, 16))):
    first = run()
    gc.collect()
    gc.disable()
    before = gc.mem_alloc()
    again = run()
    used[name] = gc.mem_alloc() - before
    gc.enable()
    used[name + '_same_buffer'] = again[0] is first[0]
OUT['used'] = used
""", heap="8m")["used"]
    assert out == {"iris": 0, "iris_same_buffer": True,
                   "attention": 0, "attention_same_buffer": True}
