"""Bad arguments at the public API get a ValueError naming the argument; the NaN policy
(docs/device-api.md, "NaN and infinity"): Dataset and the optimizers refuse non-finite
input, train stops at the first non-finite loss or gradient with the weights of the last good
step."""

import check
from tinyattn import (SGD, Adam, Attention, Dataset, Dense, Sequential, iris_model, load,
                      padding_mask, save, train, train_step)
from ulab import numpy as np


def calls():
    """{what: a call with one bad argument}."""
    x = np.zeros((4, 8))
    params = iris_model(1).collect_params()
    data = Dataset(np.zeros((2, 4)), [0, 1])
    return {
        "Attention use_bias": lambda: Attention(8, 2, use_bias=3),
        "Attention dropout": lambda: Attention(8, 2, dropout="a"),
        "Attention checkpoint": lambda: Attention(8, 2, checkpoint=2),
        "Attention seed": lambda: Attention(8, 2, seed="a"),
        "forward causal": lambda: Attention(8, 2).forward(x, 4, causal="y"),
        "Dense use_bias": lambda: Dense(4, 3, use_bias="no"),
        "Dense seed": lambda: Dense(4, 3, seed=1.5),
        "Sequential layers": lambda: Sequential(5),
        "Sequential a layer": lambda: Sequential([5]),
        "from_config entry": lambda: Sequential.from_config([["Dense", 4]]),
        "from_config list": lambda: Sequential.from_config(5),
        "padding_mask lengths": lambda: padding_mask(3, 4),
        "padding_mask seq_len": lambda: padding_mask([1, 2], "4"),
        "SGD params": lambda: SGD(iris_model(1), 0.1),
        "SGD lr str": lambda: SGD(params, "0.1"),
        "SGD lr inf32": lambda: SGD(params, 1e39),
        "SGD lr zero": lambda: SGD(params, 0.0),
        "SGD momentum": lambda: SGD(params, 0.1, momentum=1.0),
        "SGD weight_decay": lambda: SGD(params, 0.1, weight_decay=float("nan")),
        "Adam eps": lambda: Adam(params, eps=0),
        "Adam beta1": lambda: Adam(params, beta1="x"),
        "Dataset X": lambda: Dataset([[1.0]], [0]),
        "Dataset NaN": lambda: Dataset(np.array([[float("nan"), 1.0]]), [0]),
        "Dataset inf": lambda: Dataset(np.array([[1.0, float("inf")]]), [0]),
        "Dataset label": lambda: Dataset(np.zeros((1, 2)), [1.5]),
        "Dataset y": lambda: Dataset(np.zeros((1, 2)), 3),
        "split ratio": lambda: data.split("0.5"),
        "train data": lambda: train(iris_model(1), "data"),
        "train epochs": lambda: train(iris_model(1), data, epochs="3"),
        "train lr": lambda: train(iris_model(1), data, lr=float("inf"), log_every=0),
        "train log": lambda: train(iris_model(1), data, log=3),
        "save model": lambda: save("m", check.path("never_written")),
        "save path": lambda: save(iris_model(1), 5),
        "load path": lambda: load(5),
    }


def test_bad_arguments_name_the_argument():
    named = check.fixture("named")["named"]
    bad = calls()
    if sorted(bad) != sorted(named):
        raise AssertionError("calls %s, names for %s" % (sorted(bad), sorted(named)))
    for what in sorted(bad):
        message = check.message(ValueError, bad[what])
        if named[what] not in message:
            raise AssertionError("%s: %r does not name %r" % (what, message, named[what]))


X = [[0.5, -0.2, 0.1, 0.3], [0.1, 0.4, -0.3, 0.2]]


def weights(model):
    return [p.tolist() for _, p, _ in model.collect_params()]


def test_train_stops_at_the_first_non_finite_loss_and_keeps_the_last_good_weights():
    x = np.array(X)
    model = iris_model(3)
    opt = SGD(model.collect_params(), 0.1)
    before = weights(model)
    train_step(model, opt, x, [0, 1])
    good = weights(model)
    if good == before:
        raise AssertionError("a good step changed no weight")
    bad = x.copy()
    bad[1, 2] = float("nan")
    message = check.message(ValueError, train_step, model, opt, bad, [0, 1])
    if not ("not finite" in message or "loss is nan" in message):
        raise AssertionError("the error: %r" % message)
    if "the weights are those of the last good step" not in message:
        raise AssertionError("the error: %r" % message)
    if weights(model) != good:
        raise AssertionError("the refused step changed the weights")
    # the forward pass propagates NaN, as NumPy does: the row with NaN, and only it
    y = model.forward(bad).tolist()
    if not (all(v != v for v in y[1]) and all(v - v == 0 for v in y[0])):
        raise AssertionError("forward of a row with NaN: %r" % y)


def test_refused_steps_and_calls_leave_the_heap_as_they_found_it():
    model = iris_model(3)
    opt = SGD(model.collect_params(), 0.1)
    bad = np.array(X)
    bad[1, 2] = float("nan")
    check.heap_returns(lambda: check.message(ValueError, train_step, model, opt, bad, [0, 1]),
                       what="a refused train_step")
    params = model.collect_params()
    check.heap_returns(lambda: check.message(ValueError, SGD, params, 1e39),
                       what="a refused SGD")
    check.heap_returns(lambda: check.message(ValueError, Dataset,
                                             np.array([[1.0, float("inf")]]), [0]),
                       what="a refused Dataset")
