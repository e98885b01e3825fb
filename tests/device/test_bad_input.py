"""Bad arguments at the public API get a ValueError naming the argument; the NaN policy
(README, "NaN and infinity"): Dataset and the optimizers refuse non-finite input, train stops
at the first non-finite loss or gradient with the weights of the last good step."""

import numpy as np

from device_runner import run_device

CALLS = """
from tinyattn import (Attention, Dense, Sequential, SGD, Adam, Dataset, train, save, load,
                      iris_model, padding_mask)
x = np.zeros((4, 8))
params = iris_model(1).collect_params()
data = Dataset(np.zeros((2, 4)), [0, 1])
calls = {
    'Attention use_bias': lambda: Attention(8, 2, use_bias=3),
    'Attention dropout': lambda: Attention(8, 2, dropout='a'),
    'Attention checkpoint': lambda: Attention(8, 2, checkpoint=2),
    'Attention seed': lambda: Attention(8, 2, seed='a'),
    'forward causal': lambda: Attention(8, 2).forward(x, 4, causal='y'),
    'Dense use_bias': lambda: Dense(4, 3, use_bias='no'),
    'Dense seed': lambda: Dense(4, 3, seed=1.5),
    'Sequential layers': lambda: Sequential(5),
    'Sequential a layer': lambda: Sequential([5]),
    'from_config entry': lambda: Sequential.from_config([['Dense', 4]]),
    'from_config list': lambda: Sequential.from_config(5),
    'padding_mask lengths': lambda: padding_mask(3, 4),
    'padding_mask seq_len': lambda: padding_mask([1, 2], '4'),
    'SGD params': lambda: SGD(iris_model(1), 0.1),
    'SGD lr str': lambda: SGD(params, '0.1'),
    'SGD lr inf32': lambda: SGD(params, 1e39),
    'SGD lr zero': lambda: SGD(params, 0.0),
    'SGD momentum': lambda: SGD(params, 0.1, momentum=1.0),
    'SGD weight_decay': lambda: SGD(params, 0.1, weight_decay=float('nan')),
    'Adam eps': lambda: Adam(params, eps=0),
    'Adam beta1': lambda: Adam(params, beta1='x'),
    'Dataset X': lambda: Dataset([[1.0]], [0]),
    'Dataset NaN': lambda: Dataset(np.array([[float('nan'), 1.0]]), [0]),
    'Dataset inf': lambda: Dataset(np.array([[1.0, float('inf')]]), [0]),
    'Dataset label': lambda: Dataset(np.zeros((1, 2)), [1.5]),
    'Dataset y': lambda: Dataset(np.zeros((1, 2)), 3),
    'split ratio': lambda: data.split('0.5'),
    'train data': lambda: train(iris_model(1), 'data'),
    'train epochs': lambda: train(iris_model(1), data, epochs='3'),
    'train lr': lambda: train(iris_model(1), data, lr=float('inf'), log_every=0),
    'train log': lambda: train(iris_model(1), data, log=3),
    'save model': lambda: save('m', '/tmp/p'),
    'save path': lambda: save(iris_model(1), 5),
    'load path': lambda: load(5),
}
OUT['errors'] = devio.value_errors(calls)
"""

NAMED = {
    "Attention use_bias": "use_bias", "Attention dropout": "dropout",
    "Attention checkpoint": "checkpoint", "Attention seed": "seed",
    "forward causal": "causal", "Dense use_bias": "use_bias", "Dense seed": "seed",
    "Sequential layers": "layers", "Sequential a layer": "layers",
    "from_config entry": "config entry 0", "from_config list": "config",
    "padding_mask lengths": "lengths", "padding_mask seq_len": "seq_len",
    "SGD params": "params", "SGD lr str": "lr", "SGD lr inf32": "lr", "SGD lr zero": "lr",
    "SGD momentum": "momentum", "SGD weight_decay": "weight_decay", "Adam eps": "eps",
    "Adam beta1": "beta1", "Dataset X": "X must", "Dataset NaN": "NaN or infinity",
    "Dataset inf": "NaN or infinity", "Dataset label": "y[0]", "Dataset y": "y must",
    "split ratio": "test_ratio", "train data": "data a Dataset", "train epochs": "epochs",
    "train lr": "lr", "train log": "log a function", "save model": "model must",
    "save path": "path", "load path": "path",
}


def test_bad_arguments_name_the_argument():
    errors = run_device(CALLS)["errors"]
    assert set(errors) == set(NAMED)
    for call, name in NAMED.items():
        assert name in errors[call], (call, errors[call])


TRAIN_NAN = """
from tinyattn import Dataset, iris_model, train, train_step, SGD
X = np.array([[0.5, -0.2, 0.1, 0.3], [0.1, 0.4, -0.3, 0.2]])
model = iris_model(3)
opt = SGD(model.collect_params(), 0.1)
before = [p.tolist() for _, p, _ in model.collect_params()]
train_step(model, opt, X, [0, 1])
good = [p.tolist() for _, p, _ in model.collect_params()]
OUT['changed'] = good != before
bad = X.copy()
bad[1, 2] = float('nan')
try:
    train_step(model, opt, bad, [0, 1])
    OUT['error'] = 'no error'
except ValueError as e:
    OUT['error'] = str(e)
OUT['kept'] = [p.tolist() for _, p, _ in model.collect_params()] == good
OUT['y'] = model.forward(bad)
"""


def test_train_stops_at_the_first_non_finite_loss_and_keeps_the_last_good_weights():
    out = run_device(TRAIN_NAN)
    assert out["changed"] and out["kept"]
    assert "not finite" in out["error"] or "loss is nan" in out["error"], out["error"]
    assert "the weights are those of the last good step" in out["error"]
    # the forward pass propagates NaN, as NumPy does: the row with NaN, and only it
    assert np.isnan(out["y"][1]).all() and np.isfinite(out["y"][0]).all()
