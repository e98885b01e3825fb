"""A masked model on the device against the float64 reference (relative Frobenius error
under 1e-4): logits, gradients, two Adam steps; SequenceDataset and load_ts against the host's
reading of the same file; bad input gets one clear ValueError."""

import check
from tinyattn import Adam, Sequential, padding_mask, predict, train_step
from tinyattn.datasets.sequences import SequenceDataset, load_ts
from ulab import numpy as np

TOL = 1e-4


def masked_model(f):
    m = Sequential.from_config(f["config"], seed=1)
    for name, p, _ in m.collect_params():
        p[:] = f[name]
    return m, padding_mask(f["lengths"], f["config"][0][1])


def test_masked_model_forward_and_backward_match_reference():
    f = check.fixture("model")
    m, mask = masked_model(f)
    logits = m.forward(f["x"], True, mask)
    check.rel_error_below(logits, f["logits"], TOL, what="logits")
    from tinyattn import cross_entropy

    _, dlogits = cross_entropy(logits, f["labels"])
    dx = m.backward(dlogits)
    check.rel_error_below(dx, f["dx"], TOL, what="dx")
    for name, _, grad in m.collect_params():
        scale = f["d." + name[:-2] + "bq"] if name.endswith("bk") else f["d." + name]
        check.rel_error_below(grad, f["d." + name], TOL, scale=scale, what="d" + name)
    check.equal(predict(m, f["x"], 3, mask), [row.index(max(row)) for row in
                                               f["logits"].tolist()], "predict with a mask")


def test_masked_model_trains_like_the_reference():
    f = check.fixture("model")
    m, mask = masked_model(f)
    opt = Adam(m.collect_params(), lr=0.01)
    losses = [train_step(m, opt, f["x"], f["labels"], mask) for _ in range(2)]
    check.close_each(losses, f["losses"], atol=1e-8, rtol=TOL, what="losses")
    for name, p, _ in m.collect_params():
        if not name.endswith("bk"):  # a key bias: its gradient is float32 noise around 0
            check.rel_error_below(p, f["after." + name], TOL, what=name + " after two steps")
    check.heap_returns(lambda: train_step(m, opt, f["x"], f["labels"], mask),
                       what="a masked Adam step")


def test_load_ts_shuffle_batches_and_standardize_match_the_host():
    f = check.fixture("dataset")
    data = load_ts(check.path("tiny.ts"))
    check.close(data.X, f["X"], rtol=1e-7, what="X")
    check.equal(data.y, f["y"], "labels")
    check.equal(data.lengths, f["lengths"], "lengths")
    check.equal(data.classes, f["classes"], "classes")
    data.shuffle(7)
    check.close(data.X, f["shuffled"], rtol=1e-7, what="shuffled X")
    check.equal(data.lengths, f["shuffled_lengths"], "shuffled lengths")
    batches = list(data.batches(3))
    check.equal([len(b[1]) for b in batches], [3, 1], "batch sizes")
    check.equal(batches[0][1] + batches[1][1], f["shuffled_y"], "batch labels")
    check.equal(batches[1][2], f["mask"][3:4, :], "the last batch's mask")
    check.equal(batches[0][2], f["mask"][0:3, :], "the first batch's mask")
    mean, std = data.standardize()
    check.close(mean, f["mean"], rtol=1e-6, atol=1e-6, what="mean over real frames")
    check.close(std, f["std"], rtol=1e-6, what="std over real frames")
    check.close(data.X, f["standardized"], rtol=1e-5, atol=1e-6, what="standardised X")
    part = data.take([3, 0])
    check.equal(part.lengths, [f["shuffled_lengths"][3], f["shuffled_lengths"][0]], "take")


def test_bad_input_gets_a_clear_value_error():
    f = check.fixture("model")
    m, mask = masked_model(f)
    x = f["x"]
    cases = [
        (lambda: m.forward(x, False, padding_mask([5, 0, 1, 3], 5)), "sequence 1 of the batch"),
        (lambda: m.forward(x, False, mask * 0.5), "only 0 (padding) and 1"),
        (lambda: m.forward(x, False, np.zeros((3, 5)) + 1.0), "mask must have shape (4, 5)"),
        (lambda: load_ts(check.path("bad.ts")), "line 8: class 'left'"),
        (lambda: load_ts(check.path("tiny.ts"), 3), "shorter than the longest series (4"),
        (lambda: SequenceDataset(np.zeros((2, 6)), [0, 1], [1, 4], 3), "1..3"),
        (lambda: SequenceDataset(np.zeros((2, 6)), [0, 1], [1], 3), "list of 2 ints"),
        (lambda: SequenceDataset(np.zeros((2, 6)), [0, 1], [1, 1], 4), "dividing X's 6"),
    ]
    for call, words in cases:
        message = check.raises(ValueError, call)
        assert words in message, "%r lacks %r" % (message, words)
