"""Data, the training API and the demo on the device, against the NumPy reference
(tests/device/test_training.py writes the fixtures; case_training_spec.py has the spec's
whole run)."""

import array
import re

import check
from ulab import numpy as np


def float32(values):
    """The values rounded to float32, as a flat list (NumPy's astype(float32))."""
    flat = []
    for row in values:
        flat.extend(row.tolist() if hasattr(row, "tolist") else [row])
    return list(array.array("f", flat))


def mean(a):
    return np.sum(a) / (a.shape[0] * a.shape[1])


def test_load_iris_split_shuffle_and_batches_match_reference():
    from tinyattn import load_iris

    data = load_iris()
    want = check.fixture("iris")
    check.equal(float32(data.X), float32(want["X"]), "X as float32")
    check.equal(data.y, want["y"], "y")
    check.equal([data.y.count(c) for c in range(3)], [50, 50, 50], "rows of each class")
    train, test = data.split(0.2, seed=42)
    want = check.fixture("split")
    check.equal(train.y, want["train_y"], "train y")
    check.equal(test.y, want["test_y"], "test y")
    check.close_each(train.mean, want["mean"], atol=1e-8, rtol=1e-6, what="mean")
    check.close_each(train.std, want["std"], atol=1e-8, rtol=1e-5, what="std")
    check.close_each(train.X, want["train_X"], atol=1e-5, rtol=1e-5, what="standardised train X")
    check.close_each(test.X, want["test_X"], atol=1e-5, rtol=1e-5, what="standardised test X")
    assert abs(mean(train.X)) < 1e-5, "train X mean %g: not standardised" % mean(train.X)
    assert abs(mean(test.X)) > 1e-3, "test X mean %g: standardised with its own statistics" \
        % mean(test.X)
    train.shuffle(7)
    check.equal(train.y, want["shuffled_y"], "train y after shuffle(7)")
    check.equal([len(y) for _, y in train.batches(16)], [16] * 7 + [8], "batch sizes")


def test_dataset_bad_input():
    from tinyattn import Dataset, load_iris

    text = check.raises(ValueError, Dataset, np.zeros((3, 2)), [0, 1])
    assert "3 rows" in text and "2 labels" in text, text
    text = check.raises(ValueError, load_iris().split, 0.0, seed=1)
    assert "test_ratio" in text, text
    text = check.raises(ValueError, lambda: list(load_iris().batches(0)))
    assert "batch_size" in text, text


def test_train_step_and_history_api():
    from tinyattn import SGD, Adam, iris_model, load_iris, train, train_step

    train_set, _ = load_iris().split(0.2, seed=1)
    model = iris_model(1)
    lines = []
    history = train(model, train_set, epochs=3, log_every=0, log=lines.append,
                    optimizer=SGD(model.collect_params(), lr=0.05, momentum=0.9))
    check.equal(lines, [], "lines logged with log_every=0")
    check.equal(sorted(history), ["loss", "seconds"], "history keys")
    assert history["seconds"] >= 0, history["seconds"]
    step = train_step(model, Adam(model.collect_params()), *next(train_set.batches(16)))
    assert 0 < step < 5, "train_step's loss %r" % step
    text = check.raises(ValueError, train, model, train_set, epochs=0)
    assert "epochs" in text, text


def test_train_step_returns_the_heap():
    from tinyattn import Adam, iris_model, load_iris, train_step

    train_set, _ = load_iris().split(0.2, seed=1)
    model = iris_model(1)
    optimizer = Adam(model.collect_params())
    x, y = next(train_set.batches(16))
    check.heap_returns(lambda: train_step(model, optimizer, x, y), what="train_step")


def run_demo(**kwargs):
    """The lines tinyattn.demo(**kwargs) gives its `out` (print at a REPL; a RECORD each
    through the link, iris_demo.records), train's log among them."""
    import tinyattn

    lines = []

    def capture(text):
        lines.extend(str(text).split("\n"))

    assert type(tinyattn.demo).__name__ == "function", "tinyattn.demo is %r" % tinyattn.demo
    tinyattn.demo(out=capture, **kwargs)
    return lines


def test_the_demo_through_the_link_sends_its_lines_then_its_history():
    """iris_demo.records, RUN's entry to the demo: a record a line, the history last."""
    from tinyattn.iris_demo import records

    sent = []
    records(sent.append, epochs=2)
    check.equal([r["kind"] for r in sent[:-1]], ["line"] * (len(sent) - 1), "line records")
    assert sent[0]["text"].startswith("training the Iris model"), sent[0]
    check.equal(sent[-1]["kind"], "history", "the last record")
    check.equal([len(sent[-1]["loss"]), len(sent[-1]["test_accuracy"])], [2, 2], "history")


ACCURACY = r"test accuracy \d+\.\d% \(\d+ of 30\) after \d+\.\d s of training$"


def check_attention_map(lines):
    """Two heads, each a header and 4 rows of 4 weights >= 0 summing to 1."""
    for h in (0, 1):
        block = lines[5 * h:5 * h + 5]
        check.equal(block[0].split(), ["head", str(h), "t0", "t1", "t2", "t3"], "head line")
        for line in block[1:]:
            weights = [float(v) for v in line.split()[1:]]
            check.equal(len(weights), 4, "weights in %r" % line)
            assert min(weights) >= 0, line
            check.close_each(sum(weights), 1.0, atol=3e-3, rtol=1e-5, what="sum of %r" % line)


def test_demo_prints_progress_accuracy_and_an_attention_map():
    lines = run_demo(epochs=2, log_every=1)
    assert lines[0].startswith("training the Iris model: 475 parameters, 120 train rows"), \
        lines[0]
    check.equal([line.startswith("epoch") for line in lines[1:3]], [True, True], "epoch lines")
    assert re.match(ACCURACY, lines[3]), lines[3]
    assert lines[4].startswith("attention of test row 0 ("), lines[4]
    check_attention_map(lines[5:])
    check.equal(len(lines), 15, "lines printed")

    lines = run_demo(epochs=1, log_every=0, sample=3)  # still the function, not the module
    assert lines[0].startswith("training the Iris model"), lines[0]
    assert re.match(ACCURACY, lines[1]), lines[1]
    assert lines[2].startswith("attention of test row 3 ("), lines[2]
    check_attention_map(lines[3:])
