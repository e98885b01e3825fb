"""The device's LayerNorm, PositionalEmbedding, Gelu and TransformerEncoderLayer against the
NumPy reference; in a Sequential with save/load and Adam; their bad input; docstrings.

The device cases are tests/board/case_encoder.py; this file makes their inputs and the
reference's answers, and keeps the host-only checks."""

from math import erf

import numpy as np
import pytest

from board_cases import board_test
from checks import f32, missing_docstrings
from tinyattn_host.reference.encoder import (
    encoder_backward, encoder_forward, gelu_backward, gelu_forward, layernorm_backward,
    layernorm_forward, positional_backward, positional_forward)
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward
from tinyattn_host.reference.training import Adam, train_step
from tinyattn_host.interop.statedict import param_shapes
from tinyattn_host.virtual.unixport import DEVICE_DIR

TOL = 1e-4  # float32 device against the float64 reference, relative (Frobenius norm)


def layernorm_fixture(rng):
    x = f32(rng.standard_normal((6, 5)) * 4 + 3)
    gamma, beta = f32(1 + 0.3 * rng.standard_normal(5)), f32(rng.standard_normal(5))
    G = f32(rng.standard_normal((6, 5)))
    y, cache = layernorm_forward(x, gamma, beta, 1e-5)
    dx, dgamma, dbeta = layernorm_backward(G, cache)
    # two backward passes accumulate: twice the gradients
    return dict(x=x, gamma=gamma, beta=beta, G=G, y=y, dx=dx, dgamma2=2 * dgamma,
                dbeta2=2 * dbeta, config=["LayerNorm", 5, 1e-5])


def positional_fixture(rng):
    x, P = f32(rng.standard_normal((12, 4))), f32(rng.standard_normal((3, 4)))
    G = f32(rng.standard_normal((12, 4)))
    dx, dP = positional_backward(G, 3)
    return dict(x=x, P=P, G=G, y=positional_forward(x, P), dx=dx, dP=dP,
                init_bound=float(np.sqrt(3) * 0.02), config=["PositionalEmbedding", 3, 4])


def gelu_fixture(rng):
    x = f32(np.concatenate([np.linspace(-8, 8, 33), [-30.0, 30.0, 0.0, -1e-3, 1e-3]])
            .reshape(2, 19))
    G = f32(rng.standard_normal(x.shape))
    return dict(x=x, G=G, y=gelu_forward(x), dx=gelu_backward(G, x),
                atol=1e-6 * max(1.0, float(np.abs(x).max())))


def test_gelu_reference_is_the_erf_form():
    # not the tanh form: that differs from x Phi(x) by up to 4.7e-4 near |x| = 2.4
    x1 = np.array([-2.4])
    assert abs(gelu_forward(x1)[0] - x1[0] * 0.5 * (1 + erf(x1[0] / np.sqrt(2)))) < 1e-12


ENCODER_CASES = [("relu", False, None, False), ("gelu", False, [4, 2], False),
                 ("gelu", True, None, True), ("relu", True, [3, 4], True)]


def encoder_params(rng, E, F):
    shapes = {"linear1.W": (F, E), "linear1.b": (F,), "linear2.W": (E, F), "linear2.b": (E,)}
    for n in "qkvo":
        shapes["self_attn.W" + n], shapes["self_attn.b" + n] = (E, E), (E,)
    p = {k: f32(rng.standard_normal(s) * 0.4) for k, s in shapes.items()}
    for i in (1, 2):
        p["norm%d.gamma" % i] = f32(1 + 0.3 * rng.standard_normal(E))
        p["norm%d.beta" % i] = f32(0.3 * rng.standard_normal(E))
    return p


def encoder_fixture(rng, act, norm_first, lengths, causal):
    E, H, F, S, B = 8, 2, 12, 4, 2
    p = encoder_params(rng, E, F)
    x, G = f32(rng.standard_normal((B * S, E))), f32(rng.standard_normal((B * S, E)))
    mask = None if lengths is None else (np.arange(S)[None, :] < np.array(lengths)[:, None]) * 1.0
    y, cache = encoder_forward(x, p, H, S, act, norm_first, 1e-5, mask, causal)
    dx, grads = encoder_backward(G, p, cache)
    assert sorted(grads) == sorted(p)
    c = dict(E=E, H=H, F=F, S=S, act=act, norm_first=norm_first, lengths=lengths,
             causal=causal)
    fixture = dict(p, c=c, x=x, G=G, y=y, dx=dx, names=sorted(p),
                   config=["TransformerEncoderLayer", E, H, F, 0.0, act, norm_first, 1e-5, S,
                           False])
    fixture.update({"d" + n: g for n, g in grads.items()})
    return fixture


MODEL = [["Tokens", 4], ["Dense", 3, 8, True], ["PositionalEmbedding", 4, 8],
         ["TransformerEncoderLayer", 8, 2, 16, 0.0, "gelu", False, 1e-5, 4, False],
         ["TransformerEncoderLayer", 8, 2, 16, 0.0, "relu", True, 1e-5, 4, True],
         ["LayerNorm", 8, 1e-5], ["Gelu"], ["GlobalAvgPool", 4], ["Dense", 8, 3, True]]


def model_params(rng):
    """MODEL's parameters: weights of scale 1/sqrt(fan in), gamma near 1, beta and the biases
    off 0, P of PositionalEmbedding's size."""
    params = {}
    for i, spec in enumerate(MODEL):
        for name, shape in param_shapes(spec).items():
            if name == "P":
                value = 0.02 * rng.standard_normal(shape)
            elif len(shape) == 2:
                value = rng.standard_normal(shape) / np.sqrt(shape[1])
            elif name.endswith("gamma"):
                value = 1 + 0.1 * rng.standard_normal(shape)
            else:
                value = 0.1 * rng.standard_normal(shape)
            params["%d.%s" % (i, name)] = f32(value)
    return params


def test_model_parameters_are_the_devices():
    names = list(model_params(np.random.default_rng(0)))
    assert "3.self_attn.Wq" in names and "2.P" in names and "5.gamma" in names


def sequential_fixture(rng):
    """Logits, two Adam steps' losses and the parameters after them, from the reference."""
    params = model_params(rng)
    x = f32(rng.standard_normal((5, 12)))
    labels = [0, 2, 1, 1, 2]
    logits, _ = sequential_forward(MODEL, params, x)
    tuned = {k: v.copy() for k, v in params.items()}
    opt = Adam(lr=0.01)
    losses = [train_step(MODEL, tuned, opt, x, labels) for _ in range(2)]
    fixture = dict(params, config=MODEL, names=list(params), x=x, labels=labels,
                   logits=logits, losses=losses)
    fixture.update({"after." + n: v for n, v in tuned.items()})
    return fixture


def gradients_fixture(rng):
    params = model_params(rng)
    x, G = f32(rng.standard_normal((3, 12))), f32(rng.standard_normal((3, 3)))
    _, caches = sequential_forward(MODEL, params, x)
    dx, grads = sequential_backward(MODEL, params, caches, G)
    assert sorted(grads) == sorted(params)
    fixture = dict(params, config=MODEL, names=list(params), x=x, G=G, dx=dx)
    fixture.update({"d." + n: g for n, g in grads.items()})
    return fixture


def make_fixtures():
    rng = np.random.default_rng(151)
    fixtures = {"layernorm": layernorm_fixture(rng), "positional": positional_fixture(rng),
                "gelu": gelu_fixture(rng)}
    for i, case in enumerate(ENCODER_CASES):
        fixtures["encoder%d" % i] = encoder_fixture(rng, *case)
    fixtures["sequential"] = sequential_fixture(rng)
    fixtures["gradients"] = gradients_fixture(rng)
    return fixtures


test_encoder_on_board = board_test("case_encoder", make_fixtures)


@pytest.mark.parametrize("name", ["nn/norm.py", "nn/positional.py", "nn/gelu.py",
                                  "nn/encoder.py", "datasets/digits.py"])
def test_public_classes_and_functions_have_docstrings(name):
    assert not missing_docstrings(DEVICE_DIR / "tinyattn" / name)
