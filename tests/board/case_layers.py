"""The device's Dense, Activation, Tokens, GlobalAvgPool, Sequential, cross-entropy, SGD and
Adam against the NumPy reference, block by block, and their bad input
(tests/device/test_layers.py writes the inputs and the reference's results)."""

import check
from tinyattn import (
    SGD, Activation, Adam, Dense, GlobalAvgPool, Sequential, Tokens, cross_entropy, iris_model,
    train_step)
from ulab import numpy as np

TOL = 1e-4  # float32 device against the float64 reference, relative (Frobenius norm)


def numbers(a):
    """The numbers of an ndarray (1-D or 2-D) or a number, as a flat list."""
    if isinstance(a, float):
        return [a]
    out = []
    for row in a.tolist():
        if isinstance(row, list):
            out.extend(row)
        else:
            out.append(row)
    return out


def finite(a, what):
    for v in numbers(a):
        if not v - v == 0:
            raise AssertionError("%s holds %r" % (what, v))


def same(a, b):
    return a.tolist() == b.tolist()


def test_dense_matches_reference_and_accumulates():
    for name in check.names("dense_"):
        fx = check.fixture(name)
        bias = fx["bias"]
        d = Dense(5, 3, use_bias=bias, seed=1)
        d.W[:] = fx["W"]
        if bias:
            d.b[:] = fx["b"]
        check.rel_error_below(d.forward(fx["x"], True), fx["y"], TOL, what="%s y" % name)
        check.rel_error_below(d.backward(fx["G"]), fx["dx"], TOL, what="%s dx" % name)
        check.rel_error_below(d.dW, fx["dW"], TOL, what="%s dW" % name)
        d.forward(fx["x"], True)
        d.backward(fx["G"])
        # gradients accumulate
        check.rel_error_below(d.dW, fx["dW"] * 2, TOL, what="%s dW after two backwards" % name)
        check.equal([n for n, _, _ in d.collect_params()], ["W", "b"] if bias else ["W"],
                    "%s parameter names" % name)
        if bias:
            check.rel_error_below(d.db, fx["db"] * 2, TOL, what="%s db after two backwards" % name)
        d.zero_grad()
        check.equal(d.dW, [0.0] * 15, "%s dW after zero_grad" % name)


def test_dense_init_is_seeded_xavier_uniform():
    a, b, c = Dense(4, 32, seed=3), Dense(4, 32, seed=3), Dense(4, 32, seed=4)
    bound = (6 / 36) ** 0.5
    check.equal(a.W.shape, (32, 4), "W shape")
    check.equal(a.W, b.W, "W of the same seed")
    if same(a.W, c.W):
        raise AssertionError("seeds 3 and 4 give the same W")
    largest = max(abs(v) for v in numbers(a.W))
    if not (largest <= bound and largest > 0.8 * bound):
        raise AssertionError("max |W| = %g, expected in (%g, %g]" % (largest, 0.8 * bound, bound))
    check.equal(a.b, [0.0] * 32, "b")
    if a.config() != ["Dense", 4, 32, True]:
        raise AssertionError("config() %r" % (a.config(),))


def test_activation_matches_reference():
    for name in check.names("act_"):
        fx = check.fixture(name)
        a = Activation(fx["kind"])
        y = a.forward(fx["x"], True)
        dx = a.backward(fx["G"])
        check.rel_error_below(y, fx["y"], TOL, what="%s y" % name)
        check.rel_error_below(dx, fx["dx"], TOL, what="%s dx" % name)
        finite(y, "%s y" % name)
        finite(dx, "%s dx" % name)


def test_tokens_is_a_view_and_pool_matches_reference():
    fx = check.fixture("tokens_pool")
    t = Tokens(4)
    x = fx["x"].copy()
    tokens = t.forward(x, True)
    tokens[5, 2] = 123.0  # the same memory: the write shows in x
    check.equal(x[1, 8 + 2], 123.0, "x[1, 10] after the write through the tokens")
    check.equal(tokens.shape, (12, 8), "tokens shape")
    check.equal(tokens, x.reshape((12, 8)), "tokens")
    check.equal(t.backward(tokens), x, "Tokens.backward")
    p = GlobalAvgPool(4)
    check.rel_error_below(p.forward(fx["y"], True), fx["pool"], TOL, what="pool")
    check.rel_error_below(p.backward(fx["G"]), fx["dpool"], TOL, what="dpool")


def test_iris_model_matches_reference_layer_by_layer():
    fx = check.fixture("iris")
    m = iris_model(7)
    if m.config() != fx["config"]:
        raise AssertionError("config() %r, expected %r" % (m.config(), fx["config"]))
    check.equal([type(l).__name__ for l in m.layers],
                ["Dense", "Activation", "Tokens", "SelfAttention", "GlobalAvgPool", "Dense"],
                "layer types")
    check.equal(sorted(n for n, _, _ in m.collect_params()), sorted(fx["names"]), "parameters")
    check.equal(m.num_params(), 4 * 32 + 32 + 4 * 64 + 4 * 8 + 8 * 3 + 3, "num_params")
    check.set_params(m, check.fixture("iris_params"))
    logits = m.forward(fx["x"], True)
    loss, d = cross_entropy(logits, fx["labels"])
    check.rel_error_below(logits, fx["logits"], TOL, what="logits")
    check.close_each(loss, fx["loss"], rtol=TOL, what="loss")
    check.rel_error_below(d, fx["dlogits"], TOL, what="dlogits")
    check.rel_error_below(m.backward(d), fx["dx"], TOL, what="dx")
    grads = check.fixture("iris_grads")
    for name, _, g in m.collect_params():
        scale = grads["3.bq"] if name == "3.bk" else None  # dbk is exactly 0: see case_attention
        check.rel_error_below(g, grads[name], TOL, scale=scale, what="grad of " + name)


def test_iris_model_forward_backward_returns_the_heap_to_its_baseline():
    fx = check.fixture("iris")
    m = iris_model(7)
    x, labels = fx["x"], fx["labels"]
    fx = None

    def step():
        loss, d = cross_entropy(m.forward(x, True), labels)
        m.backward(d)

    check.heap_returns(step, 6, 64, "iris model forward + backward")


def test_cross_entropy_is_stable_and_checks_labels():
    fx = check.fixture("cross_entropy")
    z = fx["z"]  # logits near 500: exp(500) overflows float32
    loss, d = cross_entropy(z, [2, 0, 1, 2])
    finite(loss, "loss")
    check.close_each(loss, fx["loss"], rtol=1e-4, what="loss")
    check.rel_error_below(d, fx["d"], TOL, what="dlogits")
    for labels, words in (([0, 1, 3, 0], ["label 3", "0..2"]), ([0, 1, -1, 0], ["label -1"]),
                          ([0, 1], ["2 entries", "4 rows"])):
        raises_naming(lambda: cross_entropy(z, labels), words, "labels %r" % (labels,))


def test_optimizer_steps_match_reference_in_place():
    for name in check.names("opt"):
        fx = check.fixture(name)
        what = fx["optimizer"]
        m = iris_model(3)
        check.set_params(m, check.fixture("iris_params"))
        kind, kwargs = {"Adam": Adam, "SGD": SGD}[fx["kind"]], fx["kwargs"]
        opt = kind(m.collect_params(), **kwargs)
        ids = [id(p) for _, p, _ in m.collect_params()]
        losses = [train_step(m, opt, fx["x"], fx["labels"]) for step in range(3)]
        check.equal(ids, [id(p) for _, p, _ in m.collect_params()],
                    "%s: the parameters are the same arrays" % what)
        check.close_each(losses, fx["losses"], atol=1e-8, rtol=TOL, what="%s losses" % what)
        fx = None
        want = check.fixture("after_" + name)
        for pname, p, _ in m.collect_params():
            if pname != "3.bk":  # noise, not a result: see BK_NOTE in tests/device/test_layers.py
                check.rel_error_below(p, want[pname], TOL, what="%s %s" % (what, pname))
        want = None


def raises_naming(call, words, what):
    """`call` raises ValueError whose message holds every one of `words`."""
    message = check.raises(ValueError, call)
    for word in words:
        if word not in message:
            raise AssertionError("%s: %r not in the message %r" % (what, word, message))


def backward_bad_shape():
    d = Dense(4, 3)
    d.forward(np.zeros((2, 4)), True)
    d.backward(np.zeros((3, 3)))


def test_bad_input_gets_a_clear_value_error():
    for what, call, words in (
            ("Dense(0, 3)", lambda: Dense(0, 3), ["in_features", "0"]),
            ("Dense x 5 columns", lambda: Dense(4, 3).forward(np.zeros((2, 5))),
             ["x", "4 columns", "5"]),
            ("Dense backward first", lambda: Dense(4, 3).backward(np.zeros((2, 3))),
             ["backward() called before forward(x, training=True)"]),
            ("Dense grad_out (3, 3)", backward_bad_shape, ["grad_out", "(2, 3)"]),
            ("Activation('swish')", lambda: Activation("swish"), ["relu", "swish"]),
            ("Tokens(3) 32 columns", lambda: Tokens(3).forward(np.zeros((2, 32))),
             ["32 columns", "seq_len 3"]),
            ("GlobalAvgPool(4) 6 rows", lambda: GlobalAvgPool(4).forward(np.zeros((6, 8))),
             ["6 rows", "4"]),
            ("GlobalAvgPool(0)", lambda: GlobalAvgPool(0), ["seq_len", "0"]),
            ("Adam([])", lambda: Adam([], lr=0.1), ["no parameters"]),
            ("SGD lr=0", lambda: SGD(iris_model().collect_params(), lr=0.0), ["lr"]),
            ("SGD momentum=1.5", lambda: SGD(iris_model().collect_params(), lr=0.1,
                                             momentum=1.5), ["momentum"]),
            ("Adam beta1=1", lambda: Adam(iris_model().collect_params(), beta1=1.0), ["beta1"]),
            ("Sequential Conv", lambda: Sequential.from_config([["Conv", 3]]),
             ["unknown layer kind", "Conv"])):
        raises_naming(call, words, what)
