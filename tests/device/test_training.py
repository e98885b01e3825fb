"""Data, the training loop and the demo on the device, against the NumPy reference: the spec's
run (split 0.2 seed 42, Adam 1e-3, 100 epochs, batch 16) end to end
(tests/board/case_training.py and case_training_spec.py on the board)."""

import math
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from board_cases import BOARD_DIR, board_test
from checks import f32
from heap_budget import board_heap
from tinyattn_host.virtual import unixport
from tinyattn_host.bench.bench import compiled_package
from tinyattn_host.reference.training import (
    Rng, permutation, split_indices, standardize, train)
from tinyattn_host.reference.training import accuracy as reference_accuracy
from tinyattn_host.device_modules import device_module
from tinyattn_host.interop.statedict import param_shapes

ROOT = Path(__file__).resolve().parents[2]
IRIS_CSV = ROOT / "data" / "iris.csv"
IRIS = device_module("datasets/iris")
CONFIG = IRIS.CONFIG


def bundled_iris():
    """X (150, 4) as the device stores it (float32) and y, read from the bundled module."""
    rows = [IRIS.record(i) for i in range(IRIS.COUNT)]
    X = np.array([features for features, _ in rows])
    return f32(X), np.array([label for _, label in rows])


def iris_split():
    """(train X, train y, test X, test y), standardised as the device splits (float64)."""
    X, y = bundled_iris()
    tr, te = split_indices(150, 0.2, 42)
    Xtr, Xte, mean, std = standardize(X[tr], X[te])
    return Xtr, y[tr], Xte, y[te], mean, std


def test_bundled_iris_is_the_csv():
    lines = IRIS_CSV.read_text().split()
    want = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    X, y = bundled_iris()
    assert np.array_equal(X, want[:, :4].astype(np.float32)) and np.array_equal(y, want[:, 4])
    assert np.bincount(y).tolist() == [50, 50, 50]


def make_fixtures():
    X, y = bundled_iris()
    tr, _ = split_indices(150, 0.2, 42)
    Xtr, ytr, Xte, yte, mean, std = iris_split()
    return {
        "iris": {"X": X, "y": y.tolist()},
        "split": {"train_y": ytr.tolist(), "test_y": yte.tolist(), "mean": mean, "std": std,
                  "train_X": Xtr, "test_X": Xte,
                  "shuffled_y": [int(y[tr][i]) for i in permutation(120, Rng(7))]},
    }


test_training_on_board = board_test("case_training", make_fixtures)


# ---- the spec's run ------------------------------------------------------------------------
def device_initial_params(config, seed):
    """The weights Sequential.from_config(config, seed) draws on the device, with the device's
    own Rng: one Rng(seed) gives each seeded layer its seed; Xavier-uniform matrices row by
    row from Rng(that seed), stored as float32; biases zero; an Attention first draws its
    dropout stream's seed."""
    rng = Rng(seed)
    params = {}

    def uniform(layer_rng, shape, bound):
        return f32(layer_rng.uniform(-bound, bound, shape[0] * shape[1])).reshape(shape)

    for i, spec in enumerate(config):
        shapes = param_shapes(spec)
        if spec[0] == "Dense":
            layer_rng = Rng(rng.next32())
            n_out, n_in = shapes["W"]
            params["%d.W" % i] = uniform(layer_rng, (n_out, n_in),
                                         math.sqrt(6.0 / (n_in + n_out)))
        elif spec[0] == "SelfAttention":
            layer_rng = Rng(rng.next32())
            layer_rng.next32()  # the dropout stream's seed
            E = spec[1]
            for n in "qkvo":
                params["%d.W%s" % (i, n)] = uniform(layer_rng, (E, E), math.sqrt(6.0 / (E + E)))
        elif shapes:
            raise NotImplementedError(spec[0])
        for name, shape in shapes.items():
            params.setdefault("%d.%s" % (i, name), np.zeros(shape))
    return params


@lru_cache(maxsize=None)
def spec_reference():
    """The reference's spec run from the device's initial weights, on the standardised rows
    as the device holds them (float32): (initial, final params, epoch losses)."""
    initial = device_initial_params(CONFIG, 42)
    params = dict(initial)
    Xtr, ytr, _, _, _, _ = iris_split()
    losses = train(CONFIG, params, f32(Xtr), ytr, epochs=100, batch_size=16, seed=42)
    return initial, params, np.array(losses)


def make_spec_fixtures():
    initial, final, losses = spec_reference()
    return {"initial": initial, "reference": dict(final, loss=losses)}


def test_reference_spec_run_reaches_93_percent():
    _, final, _ = spec_reference()
    _, _, Xte, yte, _, _ = iris_split()
    assert reference_accuracy(CONFIG, final, f32(Xte), yte) >= 0.93


test_training_spec_on_board = board_test("case_training_spec", make_spec_fixtures)


@pytest.mark.skipif(not unixport.has_ulab(unixport.interpreter()),
                    reason="the pure-Python ulab stand-in needs ~192k of heap; the 128k "
                           "budget is for ulab arrays (run with MICROPYTHON=<ulab build>)")
def test_spec_run_fits_in_128k_of_heap_as_deployed(tmp_path):
    """The package compiled as `make deploy` ships it, at heapsize=128k, a 32-bit figure
    (heap_budget; tests/board/scripts/spec_run.py). Host-driven: the bound is for the compiled
    package, and the unix port's heap is set from outside."""
    heap = board_heap("128k")
    compiled_package(unixport.interpreter(), tmp_path)
    stdout = unixport.run_file(BOARD_DIR / "scripts" / "spec_run.py", heap=heap,
                               device_dir=tmp_path)
    assert float(stdout.split("accuracy")[1]) >= 0.93
