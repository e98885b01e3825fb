"""The device's digits loader against the host's split; the digits model's config; and, with a
real ulab only, the whole training run (a measurement, minutes long: see README)."""

import numpy as np
import pytest

from checks import assert_value_error
from device_runner import run_device
from tinyattn_host import unixport
from tinyattn_host.digits import DIGITS_CONFIG, DIGITS_CSV, load_digits
from tinyattn_host.reference.training import split_indices


def test_loader_splits_as_the_host_does(tmp_path):
    small = tmp_path / "digits.csv"
    small.write_text("".join(DIGITS_CSV.read_text().splitlines(True)[:41]))  # header + 40 rows
    out = run_device(f"""
from tinyattn.digits import load_digits, digits_model
train, test = load_digits({str(small)!r}, seed=7, rows=40)
OUT['Xtr'], OUT['ytr'], OUT['Xte'], OUT['yte'] = train.X, train.y, test.X, test.y
OUT['config'] = digits_model(1).config()
try:
    load_digits({str(small)!r}, rows=41)
except ValueError as err:
    OUT['short'] = str(err)
""")
    X, y = load_digits()
    train_rows, test_rows = split_indices(40, 0.2, 7)
    assert np.array_equal(out["Xtr"], X[train_rows]) and out["ytr"] == y[train_rows].tolist()
    assert np.array_equal(out["Xte"], X[test_rows]) and out["yte"] == y[test_rows].tolist()
    assert out["config"] == DIGITS_CONFIG
    assert "ends after 40 rows, 41 expected" in out["short"]


def test_loader_refuses_another_file(tmp_path):
    other = tmp_path / "iris.csv"
    other.write_text("150,4,setosa,versicolor,virginica\n5.1,3.5,1.4,0.2,0\n")
    assert_value_error(run_device, f"from tinyattn.digits import load_digits\nload_digits({str(other)!r})",
                       ["not digits.csv"])


@pytest.mark.skipif(not unixport.has_ulab(unixport.interpreter()),
                    reason="minutes with real ulab, hours with the stand-in: MICROPYTHON=...")
def test_training_on_the_device_reaches_95_percent():
    out = run_device(f"""
from tinyattn.digits import train_digits
model, accuracy, seconds = train_digits({str(DIGITS_CSV)!r}, log_every=0)
OUT['accuracy'], OUT['seconds'] = accuracy, seconds
""", timeout=3600)
    assert out["accuracy"] >= 0.95
