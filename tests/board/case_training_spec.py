"""The spec's whole run on the device (split 0.2 seed 42, Adam 1e-3, 100 epochs, batch 16; a
few tens of seconds on the ulab stand-in), once: accuracy, progress lines, and the NumPy
reference's run from the same initial weights (tests/device/test_training.py)."""

import gc
import re

import check

LINE = r"epoch +\d+/100  loss \d+\.\d\d\d\d  \d+\.\d s$"
ZERO_GRADIENT = "3.bk"  # its gradient is exactly 0: see test_layers.BK_NOTE


def test_spec_run_reaches_93_percent_and_matches_the_numpy_reference():
    from tinyattn import evaluate, iris_model, load_iris, train

    train_set, test_set = load_iris().split(0.2, seed=42)
    model = iris_model(42)
    want = check.fixture("initial")
    for name, p, _ in model.collect_params():
        check.close(p, want[name], rtol=1e-6, what="initial %s (the reference's mirror)" % name)
    want = None
    gc.collect()
    lines = []
    history = train(model, train_set, epochs=100, batch_size=16, lr=1e-3, seed=42,
                    log_every=25, log=lines.append)
    accuracy = evaluate(model, test_set)
    assert accuracy >= 0.93, "test accuracy %g" % accuracy

    check.equal([int(re.match(r"epoch +(\d+)/100 ", line).group(1)) for line in lines],
                [1, 25, 50, 75, 100], "epochs logged")
    for line in lines:
        assert re.match(LINE, line), line
    device = history["loss"]
    check.equal(list(device.shape), [100], "loss history shape")
    assert device[-1] < 0.5 * device[0], "loss %g after %g" % (device[-1], device[0])

    want = check.fixture("reference")
    losses = want["loss"]
    for epoch in range(20):
        check.close_each(device[epoch], losses[epoch], rtol=1e-4,
                         what="loss of epoch %d" % (epoch + 1))
    for name, p, _ in model.collect_params():
        if name != ZERO_GRADIENT:
            check.rel_error_below(p, want[name], 1e-3, what="final " + name)
