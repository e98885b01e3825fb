"""The NumPy reference of LayerNorm, the positional embedding, GELU (erf) and the encoder
layer, checked by central finite differences and by closed forms."""

from math import erf

import numpy as np
import pytest

from tinyattn_host.reference.encoder import (
    encoder_backward, encoder_forward, gelu_backward, gelu_forward,
    layernorm_backward, layernorm_forward, positional_backward, positional_forward)
from tinyattn_host.reference.layers import cross_entropy
from tinyattn_host.reference.kinds import param_shapes
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward
from checks import assert_grads_close, numeric_grad, rel

RNG = np.random.default_rng(15)


def test_layernorm_values_and_backward():
    x = RNG.standard_normal((5, 6)) * 3 + 1
    gamma, beta = RNG.standard_normal(6), RNG.standard_normal(6)
    y, cache = layernorm_forward(x, gamma, beta, 1e-5)
    xhat = (y - beta) / gamma
    assert np.allclose(xhat.mean(axis=1), 0) and np.allclose(xhat.var(axis=1), 1, atol=1e-4)
    G = RNG.standard_normal(y.shape)
    loss = lambda: np.sum(layernorm_forward(x, gamma, beta, 1e-5)[0] * G)
    dx, dgamma, dbeta = layernorm_backward(G, cache)
    assert rel(dx, numeric_grad(loss, x)) < 1e-6
    assert rel(dgamma, numeric_grad(loss, gamma)) < 1e-6
    assert rel(dbeta, numeric_grad(loss, beta)) < 1e-6


def test_positional_adds_to_every_sequence():
    P = RNG.standard_normal((3, 4))
    x = RNG.standard_normal((6, 4))
    y = positional_forward(x, P)
    assert np.array_equal(y[3:], x[3:] + P) and np.array_equal(y[:3], x[:3] + P)
    G = RNG.standard_normal(y.shape)
    dx, dP = positional_backward(G, 3)
    assert np.array_equal(dx, G)
    assert rel(dP, numeric_grad(lambda: np.sum(positional_forward(x, P) * G), P)) < 1e-6


def test_gelu_is_x_phi_and_backward():
    x = np.array([[-6.0, -1.5, -0.3, 0.0, 0.4, 2.0, 7.0]])
    want = [[v * 0.5 * (1 + erf(v / np.sqrt(2))) for v in x[0]]]
    assert np.allclose(gelu_forward(x), want, rtol=1e-15, atol=0)
    G = RNG.standard_normal(x.shape)
    assert rel(gelu_backward(G, x), numeric_grad(lambda: np.sum(gelu_forward(x) * G), x)) < 1e-8


def encoder_params(E, F, rng):
    shapes = {"linear1.W": (F, E), "linear1.b": (F,), "linear2.W": (E, F), "linear2.b": (E,)}
    for n in "qkvo":
        shapes["self_attn.W" + n], shapes["self_attn.b" + n] = (E, E), (E,)
    p = {k: rng.standard_normal(s) * 0.4 for k, s in shapes.items()}
    for i in (1, 2):
        p["norm%d.gamma" % i] = 1 + 0.3 * rng.standard_normal(E)
        p["norm%d.beta" % i] = 0.3 * rng.standard_normal(E)
    return p


@pytest.mark.parametrize("activation, norm_first, masked, causal", [
    ("relu", False, False, False), ("gelu", True, False, False),
    ("gelu", False, True, False), ("relu", True, True, True)])
def test_encoder_backward(activation, norm_first, masked, causal):
    E, H, F, S, B = 8, 2, 12, 4, 2
    p = encoder_params(E, F, RNG)
    x = RNG.standard_normal((B * S, E))
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=float) if masked else None
    G = RNG.standard_normal((B * S, E))

    def loss():
        return np.sum(encoder_forward(x, p, H, S, activation, norm_first, 1e-5, mask, causal)[0] * G)

    y, cache = encoder_forward(x, p, H, S, activation, norm_first, 1e-5, mask, causal)
    dx, grads = encoder_backward(G, p, cache)
    assert sorted(grads) == sorted(param_shapes(["TransformerEncoderLayer", E, H, F]))
    assert rel(dx, numeric_grad(loss, x)) < 1e-6
    assert_grads_close(grads, {name: numeric_grad(loss, p[name]) for name in p}, 1e-6)


def test_post_norm_output_rows_are_normalised():
    E, S = 8, 3
    p = encoder_params(E, 16, RNG)
    p["norm2.gamma"], p["norm2.beta"] = np.ones(E), np.zeros(E)
    y, _ = encoder_forward(RNG.standard_normal((2 * S, E)), p, 4, S)
    assert np.allclose(y.mean(axis=1), 0) and np.allclose(y.var(axis=1), 1, atol=1e-3)


DIGITS_LIKE = [["Tokens", 4], ["Dense", 3, 8, True], ["PositionalEmbedding", 4, 8],
               ["TransformerEncoderLayer", 8, 2, 16, 0.0, "gelu", False, 1e-5, 4, False],
               ["LayerNorm", 8, 1e-5], ["GlobalAvgPool", 4], ["Dense", 8, 3, True]]


def test_sequential_with_encoder_layers_backward():
    p = {"1.W": (8, 3), "1.b": (8,), "2.P": (4, 8), "4.gamma": (8,), "4.beta": (8,),
         "6.W": (3, 8), "6.b": (3,)}
    params = {k: RNG.standard_normal(s) * 0.5 for k, s in p.items()}
    params.update({"3." + k: v for k, v in encoder_params(8, 16, RNG).items()})
    x, labels = RNG.standard_normal((2, 12)), np.array([2, 0])

    def loss():
        return cross_entropy(sequential_forward(DIGITS_LIKE, params, x)[0], labels)[0]

    logits, caches = sequential_forward(DIGITS_LIKE, params, x)
    dx, grads = sequential_backward(DIGITS_LIKE, params, caches, cross_entropy(logits, labels)[1])
    assert sorted(grads) == sorted(params)
    assert rel(dx, numeric_grad(loss, x)) < 1e-5
    assert_grads_close(grads, {name: numeric_grad(loss, params[name]) for name in params}, 1e-5)
