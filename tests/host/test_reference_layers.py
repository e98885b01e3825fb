"""The NumPy reference of the layers, the loss and the optimizers, checked by hand-free means:
central finite differences for every backward, closed forms for the optimizers."""

import numpy as np
import pytest

from checks import numeric_grad

from tinyattn_host.reference.layers import (
    activation_backward, activation_forward, cross_entropy, dense_backward, dense_forward,
    gap_backward, gap_forward, tokens_backward, tokens_forward)
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward
from tinyattn_host.reference.training import SGD, Adam, Rng, permutation, split_indices
from tinyattn_host.device_modules import device_module

RNG = np.random.default_rng(11)
IRIS_CONFIG = device_module("datasets/iris").CONFIG


def rel(a, b):
    return np.linalg.norm(a - b) / max(np.linalg.norm(b), 1e-30)


@pytest.mark.parametrize("bias", [True, False])
def test_dense_backward(bias):
    x, W = RNG.standard_normal((5, 4)), RNG.standard_normal((3, 4))
    b = RNG.standard_normal(3) if bias else None
    G = RNG.standard_normal((5, 3))
    loss = lambda: np.sum(dense_forward(x, W, b) * G)
    dx, dW, db = dense_backward(G, x, W, b)
    assert rel(dx, numeric_grad(loss, x)) < 1e-6
    assert rel(dW, numeric_grad(loss, W)) < 1e-6
    if bias:
        assert rel(db, numeric_grad(loss, b)) < 1e-6
    else:
        assert db is None


@pytest.mark.parametrize("kind", ["relu", "gelu_tanh", "tanh", "sigmoid"])
def test_activation_backward(kind):
    x = RNG.standard_normal((6, 5)) * 2
    x[np.abs(x) < 1e-3] = 0.5  # keep away from relu's kink
    G = RNG.standard_normal(x.shape)
    loss = lambda: np.sum(activation_forward(x, kind) * G)
    assert rel(activation_backward(G, x, kind), numeric_grad(loss, x)) < 1e-6


def test_activation_values():
    x = np.array([[-3.0, -0.5, 0.0, 0.7, 4.0]])
    assert np.allclose(activation_forward(x, "relu"), [[0, 0, 0, 0.7, 4.0]])
    assert np.allclose(activation_forward(x, "sigmoid"), 0.5 * (1 + np.tanh(x / 2)))
    # the tanh form of GELU is within 1e-3 of x * Phi(x)
    from math import erf
    exact = np.array([[v * 0.5 * (1 + erf(v / np.sqrt(2))) for v in x[0]]])
    assert np.max(np.abs(activation_forward(x, "gelu_tanh") - exact)) < 1e-3
    with pytest.raises(ValueError, match="swish"):
        activation_forward(x, "swish")


def test_tokens_and_pool_backward():
    x = RNG.standard_normal((3, 8))
    t = tokens_forward(x, 4)
    assert t.shape == (12, 2) and np.array_equal(t[4 + 2], x[1, 4:6])
    G = RNG.standard_normal((12, 2))
    assert rel(tokens_backward(G, 4), numeric_grad(lambda: np.sum(tokens_forward(x, 4) * G), x)) < 1e-6
    y = RNG.standard_normal((12, 5))
    pooled = gap_forward(y, 4)
    assert np.allclose(pooled[1], y[4:8].mean(axis=0))
    Gp = RNG.standard_normal((3, 5))
    assert rel(gap_backward(Gp, 4), numeric_grad(lambda: np.sum(gap_forward(y, 4) * Gp), y)) < 1e-6


def test_cross_entropy_value_gradient_and_stability():
    logits = RNG.standard_normal((5, 3)) * 3
    labels = np.array([0, 2, 1, 1, 0])
    loss, d = cross_entropy(logits, labels)
    p = np.exp(logits) / np.exp(logits).sum(axis=1, keepdims=True)
    assert loss == pytest.approx(-np.mean(np.log(p[np.arange(5), labels])), rel=1e-12)
    assert rel(d, numeric_grad(lambda: cross_entropy(logits, labels)[0], logits)) < 1e-6
    big, dbig = cross_entropy(logits + 1e4, labels)  # shifting every logit changes nothing
    assert np.isfinite(big) and big == pytest.approx(loss, rel=1e-9)
    assert np.allclose(dbig, d)


def iris_params(rng):
    shapes = {"0.W": (32, 4), "0.b": (32,), "5.W": (3, 8), "5.b": (3,)}
    for n in "qkvo":
        shapes["3.W" + n], shapes["3.b" + n] = (8, 8), (8,)
    return {k: rng.standard_normal(s) * 0.5 for k, s in shapes.items()}


def test_whole_model_backward():
    params = iris_params(RNG)
    x, labels = RNG.standard_normal((3, 4)), np.array([2, 0, 1])

    def loss():
        return cross_entropy(sequential_forward(IRIS_CONFIG, params, x)[0], labels)[0]

    logits, caches = sequential_forward(IRIS_CONFIG, params, x)
    assert logits.shape == (3, 3)
    _, dlogits = cross_entropy(logits, labels)
    dx, grads = sequential_backward(IRIS_CONFIG, params, caches, dlogits)
    assert sorted(grads) == sorted(params)
    assert rel(dx, numeric_grad(loss, x)) < 1e-5
    for name in params:
        want = numeric_grad(loss, params[name])
        # dbk is exactly 0 (a constant added to every score of a row leaves the softmax as it
        # is): measure it on the scale of dbq
        scale = max(np.linalg.norm(want), np.linalg.norm(grads["3.bq"]) if name == "3.bk" else 0)
        assert np.linalg.norm(grads[name] - want) < 1e-5 * scale, name


def test_adam_closed_form():
    p = {"w": np.array([1.0, -2.0, 3.0])}
    g1, g2 = np.array([0.5, -1e-3, 0.0]), np.array([-0.2, 4.0, 1.0])
    opt = Adam(lr=0.1)
    opt.step(p, {"w": g1})
    # first step: m_hat = g, v_hat = g^2, so each weight moves lr * g / (|g| + eps)
    assert np.allclose(p["w"], [1.0 - 0.1, -2.0 + 0.1 * 1e-3 / (1e-3 + 1e-8), 3.0])
    before = p["w"].copy()
    opt.step(p, {"w": g2})
    m = 0.9 * 0.1 * g1 + 0.1 * g2
    v = 0.999 * 0.001 * g1 ** 2 + 0.001 * g2 ** 2
    want = before - 0.1 * (m / (1 - 0.81)) / (np.sqrt(v / (1 - 0.999 ** 2)) + 1e-8)
    assert np.allclose(p["w"], want, rtol=1e-12)


def test_sgd_closed_form():
    p = {"w": np.array([1.0, -1.0])}
    opt = SGD(lr=0.5, momentum=0.9, weight_decay=0.1)
    opt.step(p, {"w": np.array([1.0, 2.0])})
    u1 = np.array([1.0, 2.0]) + 0.1 * np.array([1.0, -1.0])
    assert np.allclose(p["w"], [1.0, -1.0] - 0.5 * u1)
    w1 = p["w"].copy()
    opt.step(p, {"w": np.array([0.0, 1.0])})
    u2 = 0.9 * u1 + (np.array([0.0, 1.0]) + 0.1 * w1)
    assert np.allclose(p["w"], w1 - 0.5 * u2)
    plain = {"w": np.array([1.0])}
    SGD(lr=0.25).step(plain, {"w": np.array([2.0])})
    assert plain["w"][0] == 0.5


def test_rng_permutation_and_split():
    r = Rng(42)
    first = [r.next32() for _ in range(3)]
    assert all(0 < v < 2 ** 32 for v in first) and len(set(first)) == 3
    order = permutation(150, Rng(7))
    assert sorted(order) == list(range(150)) and order != list(range(150))
    train, test = split_indices(150, 0.2, 42)
    assert len(test) == 30 and len(train) == 120 and sorted(train + test) == list(range(150))
