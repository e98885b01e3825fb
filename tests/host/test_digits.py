"""The digits data in the repository, its split, and the host side of the digits model."""

import numpy as np

from tinyattn_host.digits import DIGITS_CONFIG, DIGITS_CSV, init_params, load_digits, split
from tinyattn_host.reference.sequential import sequential_forward
from tinyattn_host.interop.statedict import param_shapes


def test_the_data_and_its_licence_are_in_the_repository():
    X, y = load_digits()
    assert X.shape == (1797, 64) and y.shape == (1797,)
    assert X.min() == 0.0 and X.max() == 1.0 and np.all(X * 16 == np.round(X * 16))
    assert sorted(set(y.tolist())) == list(range(10))
    readme = (DIGITS_CSV.parent / "README.md").read_text()
    assert "CC BY 4.0" in readme and "Alpaydin" in readme


def test_split_is_80_20_and_covers_every_row():
    X, y = load_digits()
    X_train, y_train, X_test, y_test = split(np.arange(1797)[:, None], y, seed=42)
    assert len(X_test) == 359 and len(X_train) == 1438
    assert sorted(np.concatenate([X_train[:, 0], X_test[:, 0]]).tolist()) == list(range(1797))


def test_model_is_the_issues_and_runs_on_the_reference():
    kinds = [spec[0] for spec in DIGITS_CONFIG]
    assert kinds == ["Tokens", "Dense", "PositionalEmbedding", "TransformerEncoderLayer",
                     "TransformerEncoderLayer", "GlobalAvgPool", "Dense"]
    assert DIGITS_CONFIG[1][1:3] == [8, DIGITS_CONFIG[3][1]] and DIGITS_CONFIG[-1][2] == 10
    params = init_params(DIGITS_CONFIG, seed=3)
    for i, spec in enumerate(DIGITS_CONFIG):
        for name, shape in param_shapes(spec).items():
            assert params["%d.%s" % (i, name)].shape == shape
    logits, _ = sequential_forward(DIGITS_CONFIG, params, load_digits()[0][:5])
    assert logits.shape == (5, 10) and np.all(np.isfinite(logits))
