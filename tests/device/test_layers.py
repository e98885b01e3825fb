"""The device's Dense, Activation, Tokens, GlobalAvgPool, Sequential, cross-entropy, SGD and
Adam against the NumPy reference, block by block; their bad input; their docstrings."""

import ast

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host.reference.layers import (
    activation_backward, activation_forward, cross_entropy, dense_backward, dense_forward,
    gap_backward, gap_forward, sequential_backward, sequential_forward)
from tinyattn_host.reference.training import SGD, Adam
from tinyattn_host.shared import device_module
from tinyattn_host.unixport import DEVICE_DIR, MicroPythonError

RNG = np.random.default_rng(5)
TOL = 1e-4  # float32 device against the float64 reference, relative (Frobenius norm)


def f32(a):
    return np.asarray(a, dtype=np.float32).astype(np.float64)


def rel(got, want):
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)


IMPORTS = ("from tinyattn import Dense, Activation, Tokens, GlobalAvgPool, Sequential, "
           "cross_entropy, SGD, Adam, iris_model, train_step\n")


def run(code, **inputs):
    return run_device(IMPORTS + code, inputs)


@pytest.mark.parametrize("bias", [True, False])
def test_dense_matches_reference_and_accumulates(bias):
    x, W, G = f32(RNG.standard_normal((6, 5))), f32(RNG.standard_normal((3, 5))), f32(RNG.standard_normal((6, 3)))
    b = f32(RNG.standard_normal(3)) if bias else None
    inputs = dict(x=x, W=W, G=G, bias=bias, **({"b": b} if bias else {}))
    out = run("""
d = Dense(5, 3, use_bias=IN['bias'], seed=1)
d.W[:] = IN['W']
if IN['bias']:
    d.b[:] = IN['b']
OUT['y'] = d.forward(IN['x'])
OUT['dx'] = d.backward(IN['G'])
OUT['dW1'] = d.dW.copy()
d.forward(IN['x'], True)
d.backward(IN['G'])
OUT['dW2'] = d.dW.copy()
OUT['names'] = [n for n, _, _ in d.collect_params()]
if IN['bias']:
    OUT['db'] = d.db.copy()
d.zero_grad()
OUT['zero'] = d.dW
""", **inputs)
    dx, dW, db = dense_backward(G, x, W, b)
    assert rel(out["y"], dense_forward(x, W, b)) < TOL
    assert rel(out["dx"], dx) < TOL
    assert rel(out["dW1"], dW) < TOL
    assert rel(out["dW2"], 2 * dW) < TOL  # gradients accumulate
    assert out["names"] == (["W", "b"] if bias else ["W"])
    if bias:
        assert rel(out["db"], 2 * db) < TOL
    assert not out["zero"].any()


def test_dense_init_is_seeded_xavier_uniform():
    out = run("""
a, b, c = Dense(4, 32, seed=3), Dense(4, 32, seed=3), Dense(4, 32, seed=4)
OUT['a'], OUT['b'], OUT['c'], OUT['bias'] = a.W, b.W, c.W, a.b
OUT['config'] = a.config()
""")
    bound = np.sqrt(6 / 36)
    assert out["a"].shape == (32, 4) and np.array_equal(out["a"], out["b"])
    assert not np.array_equal(out["a"], out["c"])
    assert np.all(np.abs(out["a"]) <= bound) and np.max(np.abs(out["a"])) > 0.8 * bound
    assert not out["bias"].any()
    assert out["config"] == ["Dense", 4, 32, True]


@pytest.mark.parametrize("kind", ["relu", "gelu", "tanh", "sigmoid"])
def test_activation_matches_reference(kind):
    x = f32(RNG.standard_normal((5, 6)) * 3)
    x[0, :3] = [-30.0, 30.0, 0.0]  # saturated ends, and relu's kink at 0 (slope 0 there)
    G = f32(RNG.standard_normal(x.shape))
    out = run(f"""
a = Activation({kind!r})
OUT['y'] = a.forward(IN['x'])
OUT['dx'] = a.backward(IN['G'])
""", x=x, G=G)
    assert rel(out["y"], activation_forward(x, kind)) < TOL
    assert rel(out["dx"], activation_backward(G, x, kind)) < TOL
    assert np.all(np.isfinite(out["y"])) and np.all(np.isfinite(out["dx"]))


def test_tokens_is_a_view_and_pool_matches_reference():
    x = f32(RNG.standard_normal((3, 32)))
    y = f32(RNG.standard_normal((12, 8)))
    G = f32(RNG.standard_normal((3, 8)))
    out = run("""
t = Tokens(4)
x = IN['x'].copy()
tokens = t.forward(x)
tokens[5, 2] = 123.0          # the same memory: the write shows in x
OUT['x'], OUT['tokens'] = x, tokens
OUT['back'] = t.backward(tokens)
p = GlobalAvgPool(4)
OUT['pool'] = p.forward(IN['y'])
OUT['dpool'] = p.backward(IN['G'])
""", x=x, y=y, G=G)
    assert out["x"][1, 8 + 2] == 123.0
    assert out["tokens"].shape == (12, 8)
    assert np.array_equal(out["tokens"], out["x"].reshape(12, 8))
    assert np.array_equal(out["back"], out["x"])
    assert rel(out["pool"], gap_forward(y, 4)) < TOL
    assert rel(out["dpool"], gap_backward(G, 4)) < TOL


def test_iris_model_matches_reference_layer_by_layer():
    x = f32(RNG.standard_normal((5, 4)))
    labels = [0, 2, 1, 1, 2]
    out = run("""
m = iris_model(7)
OUT['config'] = m.config()
for name, p, g in m.collect_params():
    OUT['p' + name] = p
logits = m.forward(IN['x'], True)
loss, d = cross_entropy(logits, IN['labels'])
OUT['logits'], OUT['loss'], OUT['dlogits'] = logits, loss, d
OUT['dx'] = m.backward(d)
for name, p, g in m.collect_params():
    OUT['g' + name] = g
OUT['types'] = [type(l).__name__ for l in m.layers]
OUT['count'] = m.num_params()
""", x=x, labels=labels)
    config = out["config"]
    assert out["types"] == ["Dense", "Activation", "Tokens", "SelfAttention", "GlobalAvgPool", "Dense"]
    params = {k[1:]: v for k, v in out.items() if k.startswith("p")}
    assert sorted(params) == sorted(["0.W", "0.b", "5.W", "5.b"] + ["3." + n for n in
                                    ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")])
    assert out["count"] == 4 * 32 + 32 + 4 * 64 + 4 * 8 + 8 * 3 + 3
    logits, caches = sequential_forward(config, params, x)
    loss, dlogits = cross_entropy(logits, labels)
    dx, grads = sequential_backward(config, params, caches, dlogits)
    assert rel(out["logits"], logits) < TOL
    assert out["loss"] == pytest.approx(loss, rel=TOL)
    assert rel(out["dlogits"], dlogits) < TOL
    assert rel(out["dx"], dx) < TOL
    for name, g in grads.items():
        scale = grads["3.bq"] if name == "3.bk" else g  # dbk is exactly 0: see test_attention
        assert np.linalg.norm(out["g" + name] - g) <= TOL * np.linalg.norm(scale), name


def test_cross_entropy_is_stable_and_checks_labels():
    logits = f32(RNG.standard_normal((4, 3)) * 4 + 500.0)  # exp(500) overflows float32
    out = run("""
loss, d = cross_entropy(IN['z'], [2, 0, 1, 2])
OUT['loss'], OUT['d'] = loss, d
errors = []
for labels in ([0, 1, 3, 0], [0, 1, -1, 0], [0, 1]):
    try:
        cross_entropy(IN['z'], labels)
    except ValueError as e:
        errors.append(str(e))
OUT['errors'] = errors
""", z=logits)
    loss, d = cross_entropy(logits, [2, 0, 1, 2])
    assert np.isfinite(out["loss"]) and out["loss"] == pytest.approx(loss, rel=1e-4)
    assert rel(out["d"], d) < TOL
    assert "label 3" in out["errors"][0] and "0..2" in out["errors"][0]
    assert "label -1" in out["errors"][1]
    assert "2 entries" in out["errors"][2] and "4 rows" in out["errors"][2]


BK_NOTE = """The key bias bk has no effect on the output (it adds the same number to every
score of a softmax row), so its exact gradient is 0; float32 leaves ~1e-9 of noise there, and
Adam, which divides by sqrt(v), turns that noise into steps of a fraction of lr. Its value is
noise, not a result to compare."""

OPTIMIZERS = {
    "Adam(m.collect_params(), lr=0.01)": lambda: Adam(lr=0.01),
    "Adam(m.collect_params(), lr=0.05, beta1=0.5, beta2=0.9, eps=1e-6)":
        lambda: Adam(lr=0.05, beta1=0.5, beta2=0.9, eps=1e-6),
    "SGD(m.collect_params(), lr=0.1)": lambda: SGD(lr=0.1),
    "SGD(m.collect_params(), lr=0.05, momentum=0.9, weight_decay=0.01)":
        lambda: SGD(lr=0.05, momentum=0.9, weight_decay=0.01),
}


@pytest.mark.parametrize("make", list(OPTIMIZERS))
def test_optimizer_steps_match_reference_in_place(make):
    x = f32(RNG.standard_normal((6, 4)))
    labels = [0, 1, 2, 2, 1, 0]
    out = run(f"""
m = iris_model(3)
for name, p, g in m.collect_params():
    OUT['p' + name] = p.copy()
opt = {make}
ids = [id(p) for _, p, _ in m.collect_params()]
losses = []
for step in range(3):
    losses.append(train_step(m, opt, IN['x'], IN['labels']))
OUT['losses'] = losses
OUT['same'] = ids == [id(p) for _, p, _ in m.collect_params()]
for name, p, g in m.collect_params():
    OUT['q' + name] = p
""", x=x, labels=labels)
    config = device_module("iris").CONFIG
    params = {k[1:]: v for k, v in out.items() if k.startswith("p")}
    opt = OPTIMIZERS[make]()
    from tinyattn_host.reference.training import train_step
    losses = [train_step(config, params, opt, x, labels) for _ in range(3)]
    assert out["same"]
    assert np.allclose(out["losses"], losses, rtol=TOL)
    for name, p in params.items():
        if name != "3.bk":  # see BK_NOTE
            assert rel(out["q" + name], p) < TOL, name


@pytest.mark.parametrize("code, words", [
    ("Dense(0, 3)", ["in_features", "0"]),
    ("Dense(4, 3).forward(np.zeros((2, 5)))", ["x", "4 columns", "5"]),
    ("Dense(4, 3).backward(np.zeros((2, 3)))", ["backward() called before forward()"]),
    ("d = Dense(4, 3); d.forward(np.zeros((2, 4))); d.backward(np.zeros((3, 3)))", ["grad_out", "(2, 3)"]),
    ("Activation('swish')", ["relu", "swish"]),
    ("Tokens(3).forward(np.zeros((2, 32)))", ["32 columns", "seq_len 3"]),
    ("GlobalAvgPool(4).forward(np.zeros((6, 8)))", ["6 rows", "4"]),
    ("GlobalAvgPool(0)", ["seq_len", "0"]),
    ("Adam([], lr=0.1)", ["no parameters"]),
    ("SGD(iris_model().collect_params(), lr=0.0)", ["lr"]),
    ("SGD(iris_model().collect_params(), lr=0.1, momentum=1.5)", ["momentum"]),
    ("Adam(iris_model().collect_params(), beta1=1.0)", ["beta1"]),
    ("Sequential.from_config([['Conv', 3]])", ["unknown layer kind", "Conv"]),
])
def test_bad_input_gets_a_clear_value_error(code, words):
    with pytest.raises(MicroPythonError) as err:
        run(code)
    assert err.value.kind == "ValueError", err.value.output
    for word in words:
        assert word in err.value.message


FILES = ["layers.py", "losses.py", "optim.py", "data.py", "model.py", "store.py", "iris_demo.py",
         "iris.py", "__init__.py"]


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
