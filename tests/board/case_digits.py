"""The device's digits loader against the host's split, and the digits model's config
(tests/device/test_digits_device.py writes the fixtures: 40 rows of data/digits.csv)."""

import check

PIXEL_MAX = 16.0  # X * 16 gives the CSV's pixels back exactly


def pixels(X):
    return X * PIXEL_MAX


def test_loader_splits_as_the_host_does():
    from tinyattn.datasets.digits import digits_model, load_digits

    train, test = load_digits(check.path("digits40.csv"), seed=7, rows=40)
    want = check.fixture("split")
    check.equal(pixels(train.X), want["train_pixels"], "train rows")
    check.equal(train.y, want["train_y"], "train labels")
    check.equal(pixels(test.X), want["test_pixels"], "test rows")
    check.equal(test.y, want["test_y"], "test labels")
    config = digits_model(1).config()
    assert config == check.fixture("model")["config"], config


def test_loader_says_a_file_is_short():
    from tinyattn.datasets.digits import load_digits

    text = check.raises(ValueError, load_digits, check.path("digits40.csv"), rows=41)
    assert "ends after 40 rows, 41 expected" in text, text


def test_loader_refuses_another_file():
    from tinyattn.datasets.digits import load_digits

    text = check.raises(ValueError, load_digits, check.path("iris.csv"))
    assert "not digits.csv" in text, text


def test_loading_returns_the_heap():
    from tinyattn.datasets.digits import load_digits

    path = check.path("digits40.csv")
    check.heap_returns(lambda: load_digits(path, seed=7, rows=40), what="load_digits")
