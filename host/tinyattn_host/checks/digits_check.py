"""The digits part of `make run`: the encoder model on the board, every answer checked.

A digits model (device/tinyattn/datasets/digits.py DIGITS_CONFIG) trained briefly on the host is
loaded on the device; the test rows go over the link in batches and each batch's logits are
compared with the float64 reference (relative error: max |device - reference| over
max(1, max |reference|)); then a few SGD steps on the device and on the reference, the
weights read back after each.
"""

import numpy as np

from ..digits import DIGITS_CONFIG, load_digits, split, train_host
from ..reference.sequential import sequential_forward
from ..reference.training import SGD, train_step

TOLERANCE = 1e-4
HOST_SCHEDULE = ((1, 2e-3),)  # one epoch: confident logits, a few seconds of NumPy
TRAIN_STEPS, TRAIN_LR = 3, 0.05
STANDIN_ROWS = 64  # test rows sent by default to a virtual board on the ulab stand-in
DIGITS_BATCH = 16  # at most, rows of a digits batch: a train step holds ~32 KB of caches a row


def relative_error(got, want):
    """max |got - want| / max(1, max |want|)."""
    return float(np.abs(got - want).max() / max(1.0, np.abs(want).max()))


def check_digits(check, rows=None):
    """Run the digits check through `check` (a harness.Check); returns its summary dict.

    rows: how many test rows to send; by default all 359, or the first STANDIN_ROWS when the
    device runs the ulab stand-in (a forward there takes seconds a batch).
    """
    out, seed, batch_size = check.out, check.seed, digits_batch(check)
    if rows is None and check.summary.device.get("ulab") == "stand-in":
        rows = STANDIN_ROWS
        out("digits: the device runs the ulab stand-in: %d test rows (--digits-rows N for more)"
            % rows)
    if check.batch_size > batch_size:
        out("digits: batches of %d rows (a digits batch holds ~32 KB of caches a row on the "
            "device)" % batch_size)
    X, y = load_digits()
    X_train, y_train, X_test, y_test = split(X, y, seed)
    X_test, y_test = X_test[:rows], y_test[:rows]
    params, host_acc, _ = train_host(HOST_SCHEDULE, seed=seed)
    params = {k: v.astype(np.float32).astype(np.float64) for k, v in params.items()}

    def load():
        check.board.link.load_model(DIGITS_CONFIG, params)

    check.load("digits", load)
    want, _ = sequential_forward(DIGITS_CONFIG, params, X_test)
    keep = check.samples.setdefault("digits", {
        "device": [], "reference": [], "attention": None,
        "tolerance": TOLERANCE * max(1.0, float(np.abs(want).max()))})
    out("%-8s %5s %4s %12s %7s %9s" % ("model", "batch", "rows", "float rel", "agree", "float us"))
    batches = []
    for index, (start, stop, (head, got)) in enumerate(check.batches(
            "digits", len(X_test), batch_size,
            lambda link, a, b: link.forward(X_test[a:b]), load)):
        xb = X_test[start:stop]
        check.said("digits", "forward", head, len(xb))
        logits = got["logits"].astype(np.float64)
        ref = want[start:start + len(xb)]
        batch = {"batch": index, "rows": len(xb), "rel_err": relative_error(logits, ref),
                 "agree": int(np.sum(logits.argmax(1) == ref.argmax(1))),
                 "right": int(np.sum(logits.argmax(1) == y_test[start:start + len(xb)])),
                 "us": head.get("us", 0)}
        batch["ok"] = batch["rel_err"] <= TOLERANCE and batch["agree"] == batch["rows"]
        batches.append(batch)
        keep["device"].append(logits)
        keep["reference"].append(ref)
        out("%-8s %5d %4d %12.2e %4d/%-3d %9d%s"
            % ("digits", index, len(xb), batch["rel_err"], batch["agree"], len(xb), batch["us"],
               "" if batch["ok"] else "  <-- MISMATCH"))
    steps = _train_steps(check, params, X_train, y_train, load)
    result = {
        "rows": len(X_test), "host_epochs": HOST_SCHEDULE[0][0], "host_accuracy": host_acc,
        "device_accuracy": sum(b["right"] for b in batches) / len(X_test),
        "max_rel_err": max(b["rel_err"] for b in batches),
        "agree": sum(b["agree"] for b in batches), "batches": batches, "train_steps": steps,
    }
    result["ok"] = all(b["ok"] for b in batches) and all(s["ok"] for s in steps)
    return result


def digits_batch(check):
    """The rows of a digits batch: --batch-size, at most DIGITS_BATCH (a larger batch of the
    encoder model needs megabytes of caches: 512 rows would need ~16 MB for a train step)."""
    return min(check.batch_size, DIGITS_BATCH)


def _train_steps(check, params, X_train, y_train, load):
    """TRAIN_STEPS SGD steps on the device and on the reference; weights compared after each.
    The first survives a reset or a heap too full (check.retry): reloaded, the weights are
    still those it starts from."""
    reference = dict(params)
    optimizer = SGD(lr=TRAIN_LR)
    steps = []
    batch_size = digits_batch(check)
    for step in range(TRAIN_STEPS):
        rows = slice(step * batch_size, (step + 1) * batch_size)
        x, labels = X_train[rows], y_train[rows]
        if step == 0:
            head = check.retry(lambda link: link.train_step(x, labels, "sgd", TRAIN_LR), load)
        else:
            head = check.board.link.train_step(x, labels, "sgd", TRAIN_LR)
        check.said("digits", "train", head, len(x))
        _, weights = check.board.link.get_weights()
        loss = train_step(DIGITS_CONFIG, reference, optimizer, x, labels)
        err = max(relative_error(weights[k].astype(np.float64), reference[k]) for k in reference)
        loss_err = abs(head["loss"] - loss) / max(1.0, abs(loss))
        ok = err <= TOLERANCE and loss_err <= TOLERANCE
        steps.append({"step": step, "loss_device": head["loss"], "loss_reference": float(loss),
                      "rel_err": err, "us": head.get("us", 0), "ok": bool(ok)})
        check.out("digits train step %d: loss %.6f (reference %.6f), weights rel err %.2e  %s"
                  % (step, head["loss"], loss, err, "ok" if ok else "MISMATCH"))
    return steps


def summary_line(result):
    """The digits part of the PASS/FAIL line."""
    steps = result["train_steps"]
    return ("digits: float rel err %.2e, classes agree %d/%d, %d train steps rel err %.2e"
            % (result["max_rel_err"], result["agree"], result["rows"], len(steps),
               max(s["rel_err"] for s in steps)))
