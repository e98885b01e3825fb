"""The vowels part of `make run`: variable-length sequences over the link, every answer checked.

A causal vowels model (device/tinyattn/datasets/vowels.py's, its encoder causal=True) trained
one epoch on the host is loaded on the device; test utterances go in padded batches with their
padding masks (float logits against the float64 reference, relative error at most 1e-4, every
class the same), the device quantizes the model with masked calibration rows and runs the same
batches in int8 (bit for bit with the integer reference of the model it replied), and one
utterance is streamed frame by frame (STREAM, a window of 29), each frame's logits against the
reference's full causal forward of the frames so far.
"""

import numpy as np

from ..quantize import out_scale, quantize_tensor
from ..reference.sequential import int8_forward, int8_layers, sequential_forward
from ..sequences import padding_mask
from ..vowels import DEVICE, causal_config, load_vowels, train_host
from .digits_check import relative_error

TOLERANCE = 1e-4
HOST_SCHEDULE = ((1, 2e-3),)
CALIB_ROWS = 8  # calibration utterances: the board runs as many at once as fit its heap
# (its reply says); the check is bit for bit against the model the device made
STANDIN_ROWS = 32  # test utterances sent by default to a virtual board on the ulab stand-in
QUANTIZE_TIMEOUT = 120  # seconds: calibration, in pieces in a small heap


def check_vowels(check, rows=None):
    """Run the vowels check through `check` (a run_check.Check); returns its summary dict."""
    out, batch_size, S = check.out, check.batch_size, DEVICE.SEQ_LEN
    if rows is None and check.summary.device.get("ulab") == "stand-in":
        rows = STANDIN_ROWS
        out("vowels: the device runs the ulab stand-in: %d test utterances (--vowels-rows N "
            "for more)" % rows)
    data = load_vowels()
    config = causal_config()
    params, _, _ = train_host(HOST_SCHEDULE, seed=check.seed, config=config, data=data)
    params = {k: v.astype(np.float32).astype(np.float64) for k, v in params.items()}
    X_train, _, train_lengths = data["train"]
    X, y, lengths = (a[:rows] for a in data["test"])
    mask = padding_mask(lengths, S)

    def load():
        check.board.link.load_model(config, params)
        return check.board.link.quantize(X_train[:CALIB_ROWS],
                                         padding_mask(train_lengths[:CALIB_ROWS], S),
                                         timeout=QUANTIZE_TIMEOUT)

    qhead, qarrays = check.load("vowels", load)
    check.said("vowels", "quantize", qhead, CALIB_ROWS)
    qlayers = int8_layers(qhead["layers"], qarrays)
    want, _ = sequential_forward(config, params, X, mask)
    out("%-8s %5s %4s %12s %7s %11s %9s %9s"
        % ("model", "batch", "rows", "float rel", "agree", "int8 exact", "float us", "int8 us"))
    batches = []
    kept = check.samples["vowels"] = {"device": [], "reference": [], "int8": [], "stream": None}
    s_out = out_scale(qhead["layers"][-1])
    for index, (start, stop, (head, got)) in enumerate(check.batches(
            "vowels", len(X), batch_size,
            lambda link, a, b: link.forward(X[a:b], mask[a:b], int8=True), load)):
        xb, mb = X[start:stop], mask[start:stop]
        check.said("vowels", "forward", head, len(xb))
        logits = got["logits"].astype(np.float64)
        ref = want[start:start + len(xb)]
        xq = got["xq"].reshape(xb.shape)  # the int8 input as the device quantized it
        yq = got["y"].reshape(head["rows"], head["cols"])
        yq_ref = int8_forward(xq.astype(np.int64), qlayers, mb)[-1]
        # the device's quantization agrees with the host's to a step (float32 at a tie)
        quantized = np.abs(xq.astype(int) - quantize_tensor(xb, head["in_scale"])) <= 1
        for key, value in ("device", logits), ("reference", ref), ("int8", yq * s_out):
            kept[key].append(value)
        batch = {"batch": index, "rows": len(xb), "rel_err": relative_error(logits, ref),
                 "agree": int(np.sum(logits.argmax(1) == ref.argmax(1))),
                 "int8_exact": int(np.sum(np.all(yq == yq_ref, axis=1)
                                          & np.all(quantized, axis=1))),
                 "lengths": [int(n) for n in lengths[start:start + len(xb)]],
                 "us": head.get("us", 0), "us_int8": head.get("int8_us", 0)}
        batch["ok"] = (batch["rel_err"] <= TOLERANCE and batch["agree"] == batch["rows"]
                       and batch["int8_exact"] == batch["rows"])
        batches.append(batch)
        out("%-8s %5d %4d %12.2e %4d/%-3d %7d/%-3d %9d %9d%s"
            % ("vowels", index, len(xb), batch["rel_err"], batch["agree"], len(xb),
               batch["int8_exact"], len(xb), batch["us"], batch["us_int8"],
               "" if batch["ok"] else "  <-- MISMATCH"))
    stream = _stream_one(check, config, params, X[0], int(lengths[0]), load)
    result = {"rows": len(X), "batches": batches, "stream": stream,
              "max_rel_err": max(b["rel_err"] for b in batches),
              "agree": sum(b["agree"] for b in batches),
              "int8_exact": sum(b["int8_exact"] for b in batches)}
    result["ok"] = all(b["ok"] for b in batches) and stream["ok"]
    return result


def _stream_one(check, config, params, row, length, load):
    """One utterance frame by frame; each step's logits against the reference's full causal
    forward of the frames so far (the padded row with a mask of that length)."""
    S, F = DEVICE.SEQ_LEN, DEVICE.FEATURES
    frames = row.reshape(S, F)
    errors, logits = [], []
    for t in range(length):
        head, got = check.retry(lambda link: link.stream(frames[t:t + 1], S, t == 0),
                                reload=load)
        want, _ = sequential_forward(config, params, row[None, :], padding_mask([t + 1], S))
        errors.append(relative_error(got["logits"].astype(np.float64), want))
        logits.append(got["logits"].astype(np.float64).ravel())
        if head["t"] != t or got["logits"].argmax() != want.argmax():
            errors[-1] = float("inf")
    ok = max(errors) <= TOLERANCE
    check.samples["vowels"]["stream"] = (errors, np.array(logits))  # for the report's plot
    check.out("vowels stream: %d frames of one utterance, every step's logits rel err %.2e "
              "(max)  %s" % (length, max(errors), "ok" if ok else "MISMATCH"))
    return {"frames": length, "max_rel_err": max(errors), "ok": bool(ok)}


def summary_line(result):
    """The vowels part of the PASS/FAIL line."""
    return ("vowels: padded batches float rel err %.2e, classes agree %d/%d, int8 bit-exact "
            "%d/%d; stream of %d frames rel err %.2e"
            % (result["max_rel_err"], result["agree"], result["rows"], result["int8_exact"],
               result["rows"], result["stream"]["frames"], result["stream"]["max_rel_err"]))
