"""The device's LayerNorm, PositionalEmbedding, Gelu and TransformerEncoderLayer against the
NumPy reference; in a Sequential with save/load and Adam; their bad input; docstrings."""

from math import erf

import numpy as np
import pytest

from checks import assert_grads_close, assert_value_error, f32, missing_docstrings, rel
from device_runner import run_device
from tinyattn_host.reference.encoder import (
    encoder_backward, encoder_forward, gelu_backward, gelu_forward, layernorm_backward,
    layernorm_forward, positional_backward, positional_forward)
from tinyattn_host.reference.layers import sequential_backward, sequential_forward
from tinyattn_host.reference.training import Adam, train_step
from tinyattn_host.unixport import DEVICE_DIR

RNG = np.random.default_rng(151)
TOL = 1e-4  # float32 device against the float64 reference, relative (Frobenius norm)


IMPORTS = ("from tinyattn import Sequential, Adam, train_step, save, load, padding_mask\n"
           "from tinyattn.encoder import TransformerEncoderLayer\n"
           "from tinyattn.gelu import Gelu\n"
           "from tinyattn.layernorm import LayerNorm\n"
           "from tinyattn.positional import PositionalEmbedding\n")


def run(code, **inputs):
    return run_device(IMPORTS + code, inputs)


def test_layernorm_matches_reference_and_accumulates():
    x = f32(RNG.standard_normal((6, 5)) * 4 + 3)
    gamma, beta = f32(1 + 0.3 * RNG.standard_normal(5)), f32(RNG.standard_normal(5))
    G = f32(RNG.standard_normal((6, 5)))
    out = run("""
n = LayerNorm(5, eps=1e-5)
OUT['init'] = [n.gamma.tolist(), n.beta.tolist()]
n.gamma[:] = IN['gamma']
n.beta[:] = IN['beta']
OUT['y'] = n.forward(IN['x'])
OUT['dx'] = n.backward(IN['G'])
n.forward(IN['x'], True)
n.backward(IN['G'])
OUT['dgamma'], OUT['dbeta'] = n.dgamma.copy(), n.dbeta.copy()
OUT['names'] = [name for name, _, _ in n.collect_params()]
OUT['config'] = n.config()
n.zero_grad()
OUT['zero'] = n.dgamma
""", x=x, gamma=gamma, beta=beta, G=G)
    y, cache = layernorm_forward(x, gamma, beta, 1e-5)
    dx, dgamma, dbeta = layernorm_backward(G, cache)
    assert out["init"] == [[1.0] * 5, [0.0] * 5]
    assert rel(out["y"], y) < TOL and rel(out["dx"], dx) < TOL
    assert rel(out["dgamma"], 2 * dgamma) < TOL and rel(out["dbeta"], 2 * dbeta) < TOL
    assert out["names"] == ["gamma", "beta"] and out["config"] == ["LayerNorm", 5, 1e-5]
    assert not out["zero"].any()


def test_positional_embedding_matches_reference():
    x, P = f32(RNG.standard_normal((12, 4))), f32(RNG.standard_normal((3, 4)))
    G = f32(RNG.standard_normal((12, 4)))
    out = run("""
p = PositionalEmbedding(3, 4, seed=5)
OUT['init'] = p.P.copy()
OUT['same'] = PositionalEmbedding(3, 4, seed=5).P
p.P[:] = IN['P']
OUT['y'] = p.forward(IN['x'])
OUT['dx'] = p.backward(IN['G'])
OUT['dP'] = p.dP
OUT['config'] = p.config()
""", x=x, P=P, G=G)
    dx, dP = positional_backward(G, 3)
    assert np.array_equal(out["init"], out["same"]) and out["init"].shape == (3, 4)
    assert 0 < np.abs(out["init"]).max() <= np.sqrt(3) * 0.02
    assert rel(out["y"], positional_forward(x, P)) < TOL
    assert rel(out["dx"], dx) < TOL
    assert rel(out["dP"], dP) < TOL
    assert out["config"] == ["PositionalEmbedding", 3, 4]


def test_gelu_is_the_erf_form_within_float32():
    x = f32(np.concatenate([np.linspace(-8, 8, 33), [-30.0, 30.0, 0.0, -1e-3, 1e-3]]).reshape(2, 19))
    G = f32(RNG.standard_normal(x.shape))
    out = run("""
g = Gelu()
OUT['y'] = g.forward(IN['x'])
OUT['dx'] = g.backward(IN['G'])
""", x=x, G=G)
    assert np.abs(out["y"] - gelu_forward(x)).max() <= 1e-6 * max(1.0, np.abs(x).max())
    assert rel(out["dx"], gelu_backward(G, x)) < TOL
    # not the tanh form: that differs from x Phi(x) by up to 4.7e-4 near |x| = 2.4
    x1 = np.array([-2.4])
    assert abs(gelu_forward(x1)[0] - x1[0] * 0.5 * (1 + erf(x1[0] / np.sqrt(2)))) < 1e-12


ENCODER_CASE = """
c = IN['c']
layer = TransformerEncoderLayer(c['E'], c['H'], c['F'], activation=c['act'],
                                norm_first=c['norm_first'], seq_len=c['S'], seed=3)
for name, param, grad in layer.collect_params():
    param[:] = IN[name]
mask = padding_mask(c['lengths'], c['S']) if c['lengths'] else None
OUT['y'] = layer.forward(IN['x'], True, mask=mask, causal=c['causal'])
OUT['dx'] = layer.backward(IN['G'])
for name, param, grad in layer.collect_params():
    OUT['d' + name] = grad
OUT['config'] = layer.config()
"""


def encoder_params(E, F):
    shapes = {"linear1.W": (F, E), "linear1.b": (F,), "linear2.W": (E, F), "linear2.b": (E,)}
    for n in "qkvo":
        shapes["self_attn.W" + n], shapes["self_attn.b" + n] = (E, E), (E,)
    p = {k: f32(RNG.standard_normal(s) * 0.4) for k, s in shapes.items()}
    for i in (1, 2):
        p["norm%d.gamma" % i] = f32(1 + 0.3 * RNG.standard_normal(E))
        p["norm%d.beta" % i] = f32(0.3 * RNG.standard_normal(E))
    return p


@pytest.mark.parametrize("act, norm_first, lengths, causal", [
    ("relu", False, None, False), ("gelu", False, [4, 2], False),
    ("gelu", True, None, True), ("relu", True, [3, 4], True)])
def test_encoder_layer_matches_reference(act, norm_first, lengths, causal):
    E, H, F, S, B = 8, 2, 12, 4, 2
    p = encoder_params(E, F)
    x, G = f32(RNG.standard_normal((B * S, E))), f32(RNG.standard_normal((B * S, E)))
    c = dict(E=E, H=H, F=F, S=S, act=act, norm_first=norm_first, lengths=lengths, causal=causal)
    out = run_device(IMPORTS + ENCODER_CASE, dict(c=c, x=x, G=G, **p))
    mask = None if lengths is None else (np.arange(S)[None, :] < np.array(lengths)[:, None]) * 1.0
    y, cache = encoder_forward(x, p, H, S, act, norm_first, 1e-5, mask, causal)
    dx, grads = encoder_backward(G, p, cache)
    assert out["config"] == ["TransformerEncoderLayer", E, H, F, 0.0, act, norm_first, 1e-5, S, False]
    assert rel(out["y"], y) < TOL
    assert rel(out["dx"], dx) < TOL
    assert sorted(grads) == sorted(p)
    assert_grads_close({n: out["d" + n] for n in grads}, grads, TOL)


MODEL = [["Tokens", 4], ["Dense", 3, 8, True], ["PositionalEmbedding", 4, 8],
         ["TransformerEncoderLayer", 8, 2, 16, 0.0, "gelu", False, 1e-5, 4, False],
         ["TransformerEncoderLayer", 8, 2, 16, 0.0, "relu", True, 1e-5, 4, True],
         ["LayerNorm", 8, 1e-5], ["Gelu"], ["GlobalAvgPool", 4], ["Dense", 8, 3, True]]


def test_sequential_with_encoder_saves_loads_and_trains_like_the_reference(tmp_path):
    x = f32(RNG.standard_normal((5, 12)))
    labels = [0, 2, 1, 1, 2]
    path = str(tmp_path / "m.bin")
    out = run(f"""
m = Sequential.from_config(IN['config'], seed=9)
OUT['config'] = m.config()
for name, p, g in m.collect_params():
    p[:] = p + 0.1 * (p * p - 0.3)  # move gamma, beta and the zero biases off their init
    OUT['p' + name] = p
OUT['logits'] = m.forward(IN['x'])
save(m, {path!r})
m2 = load({path!r})
OUT['loaded'] = m2.forward(IN['x'])
opt = Adam(m2.collect_params(), lr=0.01)
OUT['losses'] = [train_step(m2, opt, IN['x'], IN['labels']) for _ in range(2)]
for name, p, g in m2.collect_params():
    OUT['q' + name] = p
""", config=MODEL, x=x, labels=labels)
    assert out["config"] == MODEL
    params = {k[1:]: v for k, v in out.items() if k.startswith("p")}
    assert "3.self_attn.Wq" in params and "2.P" in params and "5.gamma" in params
    logits, _ = sequential_forward(MODEL, params, x)
    assert rel(out["logits"], logits) < TOL
    assert np.array_equal(out["loaded"], out["logits"])
    opt = Adam(lr=0.01)
    losses = [train_step(MODEL, params, opt, x, labels) for _ in range(2)]
    assert np.allclose(out["losses"], losses, rtol=TOL)
    for name, p in params.items():
        if not name.endswith("self_attn.bk"):  # its gradient is float32 noise around 0
            assert rel(out["q" + name], p) < TOL, name


def test_sequential_gradients_match_reference():
    x, G = f32(RNG.standard_normal((3, 12))), f32(RNG.standard_normal((3, 3)))
    out = run("""
m = Sequential.from_config(IN['config'], seed=4)
for name, p, g in m.collect_params():
    p[:] = p + 0.1 * (p * p - 0.3)
    OUT['p' + name] = p
m.forward(IN['x'], True)
OUT['dx'] = m.backward(IN['G'])
for name, p, g in m.collect_params():
    OUT['g' + name] = g
""", config=MODEL, x=x, G=G)
    params = {k[1:]: v for k, v in out.items() if k.startswith("p")}
    _, caches = sequential_forward(MODEL, params, x)
    dx, grads = sequential_backward(MODEL, params, caches, G)
    assert sorted(grads) == sorted(params)
    assert rel(out["dx"], dx) < TOL
    assert_grads_close({n: out["g" + n] for n in grads}, grads, TOL)


@pytest.mark.parametrize("code, words", [
    ("LayerNorm(0)", ["normalized_shape", "0"]),
    ("LayerNorm(4, eps=0.0)", ["eps"]),
    ("LayerNorm(4).forward(np.zeros((2, 5)))", ["x", "4 columns", "5"]),
    ("LayerNorm(4).backward(np.zeros((2, 4)))", ["backward() called before forward()"]),
    ("PositionalEmbedding(4, 8).forward(np.zeros((6, 8)))", ["6 rows", "4"]),
    ("PositionalEmbedding(0, 8)", ["seq_len", "0"]),
    ("TransformerEncoderLayer(8, 3, 16)", ["divisible", "3"]),
    ("TransformerEncoderLayer(8, 2, 16, dropout=0.1)", ["dropout", "0.0"]),
    ("TransformerEncoderLayer(8, 2, 16, activation='tanh')", ["activation", "tanh"]),
    ("TransformerEncoderLayer(8, 2, 16).forward(np.zeros((4, 8)))", ["seq_len"]),
    ("TransformerEncoderLayer(8, 2, 16, seq_len=4).forward(np.zeros((4, 8)), mask=np.zeros((2, 4)))",
     ["mask", "(1, 4)"]),
    ("Sequential.from_config([['Conv', 3]])", ["unknown layer kind", "Conv"]),
    ("l = TransformerEncoderLayer(8, 2, 16, seq_len=4); y = l.forward(np.zeros((4, 8)) + 1.0); "
     "l.backward(y); l.backward(y)", ["backward() called before forward()"]),  # caches dropped
])
def test_bad_input_gets_a_clear_value_error(code, words):
    assert_value_error(run, code, words)


@pytest.mark.parametrize("name", ["layernorm.py", "positional.py", "gelu.py", "encoder.py",
                                  "digits.py"])
def test_public_classes_and_functions_have_docstrings(name):
    assert not missing_docstrings(DEVICE_DIR / "tinyattn" / name)
