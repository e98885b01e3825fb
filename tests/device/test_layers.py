"""The device's Dense, Activation, Tokens, GlobalAvgPool, Sequential, cross-entropy, SGD and
Adam against the NumPy reference, block by block; their bad input (tests/board/case_layers.py
on the --board target); their docstrings (here)."""

import ast

import numpy as np
import pytest

from board_cases import board_test
from checks import f32
from tinyattn_host.digits import init_params
from tinyattn_host.reference.layers import (
    activation_backward, activation_forward, cross_entropy, dense_backward, dense_forward,
    gap_backward, gap_forward)
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward
from tinyattn_host.reference.training import SGD, Adam, train_step
from tinyattn_host.device_modules import device_module
from tinyattn_host.virtual.unixport import DEVICE_DIR

CONFIG = device_module("datasets/iris").CONFIG


BK_NOTE = """The key bias bk has no effect on the output (it adds the same number to every
score of a softmax row), so its exact gradient is 0; float32 leaves ~1e-9 of noise there, and
Adam, which divides by sqrt(v), turns that noise into steps of a fraction of lr. Its value is
noise, not a result to compare."""

# (kind, keyword arguments): the device makes kind(m.collect_params(), **kwargs), the
# reference kind(**kwargs)
OPTIMIZERS = [
    ("Adam", {"lr": 0.01}),
    ("Adam", {"lr": 0.05, "beta1": 0.5, "beta2": 0.9, "eps": 1e-6}),
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "weight_decay": 0.01}),
]


def dense_fixture(rng, bias):
    x, W, G = (f32(rng.standard_normal(s)) for s in ((6, 5), (3, 5), (6, 3)))
    b = f32(rng.standard_normal(3)) if bias else None
    dx, dW, db = dense_backward(G, x, W, b)
    fixture = {"bias": bias, "x": x, "W": W, "G": G, "y": dense_forward(x, W, b), "dx": dx,
               "dW": dW}
    if bias:
        fixture.update(b=b, db=db)
    return fixture


def activation_fixture(rng, kind):
    x = f32(rng.standard_normal((5, 6)) * 3)
    x[0, :3] = [-30.0, 30.0, 0.0]  # saturated ends, and relu's kink at 0 (slope 0 there)
    G = f32(rng.standard_normal(x.shape))
    return {"kind": kind, "x": x, "G": G, "y": activation_forward(x, kind),
            "dx": activation_backward(G, x, kind)}


def tokens_pool_fixture(rng):
    x, y, G = (f32(rng.standard_normal(s)) for s in ((3, 32), (12, 8), (3, 8)))
    return {"x": x, "y": y, "G": G, "pool": gap_forward(y, 4), "dpool": gap_backward(G, 4)}


def iris_fixtures(rng, params):
    x = f32(rng.standard_normal((5, 4)))
    labels = [0, 2, 1, 1, 2]
    logits, caches = sequential_forward(CONFIG, params, x)
    loss, dlogits = cross_entropy(logits, labels)
    dx, grads = sequential_backward(CONFIG, params, caches, dlogits)
    return {"iris": {"config": CONFIG, "names": sorted(params), "x": x, "labels": labels,
                     "logits": logits, "loss": float(loss), "dlogits": dlogits, "dx": dx},
            "iris_grads": grads}


def optimizer_fixtures(rng, params, i, kind, kwargs):
    x = f32(rng.standard_normal((6, 4)))
    labels = [0, 1, 2, 2, 1, 0]
    params = dict(params)
    opt = {"Adam": Adam, "SGD": SGD}[kind](**kwargs)
    losses = [float(train_step(CONFIG, params, opt, x, labels)) for _ in range(3)]
    label = "%s(m.collect_params(), %s)" % (kind, ", ".join(
        "%s=%r" % item for item in kwargs.items()))
    return {"opt%02d" % i: {"optimizer": label, "kind": kind, "kwargs": kwargs, "x": x,
                            "labels": labels, "losses": losses},
            "after_opt%02d" % i: params}


def make_fixtures():
    rng = np.random.default_rng(5)
    fixtures = {"dense_bias": dense_fixture(rng, True), "dense_nobias": dense_fixture(rng, False)}
    for kind in ("relu", "gelu_tanh", "tanh", "sigmoid"):
        fixtures["act_" + kind] = activation_fixture(rng, kind)
    fixtures["tokens_pool"] = tokens_pool_fixture(rng)
    params = init_params(CONFIG, 7)  # Xavier-uniform, zero biases, as the device initialises
    fixtures["iris_params"] = params
    fixtures.update(iris_fixtures(rng, params))
    z = f32(rng.standard_normal((4, 3)) * 4 + 500.0)  # exp(500) overflows float32
    loss, d = cross_entropy(z, [2, 0, 1, 2])
    fixtures["cross_entropy"] = {"z": z, "loss": float(loss), "d": d}
    for i, (kind, kwargs) in enumerate(OPTIMIZERS):
        fixtures.update(optimizer_fixtures(rng, params, i, kind, kwargs))
    return fixtures


test_layers_on_board = board_test("case_layers", make_fixtures)


FILES = ["nn/layers.py", "nn/sequential.py", "nn/losses.py", "nn/optim.py", "datasets/dataset.py",
         "training.py", "store.py", "iris_demo.py", "datasets/iris.py", "__init__.py"]


@pytest.mark.parametrize("name", FILES)
def test_public_classes_and_functions_have_docstrings(name):
    tree = ast.parse((DEVICE_DIR / "tinyattn" / name).read_text())
    assert ast.get_docstring(tree), name
    missing = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            for item in [node] + [n for n in node.body if isinstance(n, ast.FunctionDef)]:
                if not item.name.startswith("_") and not ast.get_docstring(item):
                    missing.append(item.name)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_") \
                and not ast.get_docstring(node):
            missing.append(node.name)
    assert not missing, missing
