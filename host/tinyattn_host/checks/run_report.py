"""`make run`'s report folder: summary.json with every figure, and the PNG plots of each model."""

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from . import plots
from ..device_modules import device_module

IRIS = device_module("datasets/iris")  # the Iris model (its attention: NUM_HEADS, SEQ_LEN)


def write_report(directory, summary, samples):
    """summary.json with every figure, and the PNG plots (tinyattn_host.checks.plots) of each model:
    error histogram and relative error (the tolerance and where it comes from), int8 against
    float, the trained model's attention on inputs of each class and the board's maps against
    the reference's, the vowels stream frame by frame; the trained model's training curve."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    data = {
        "ok": summary.ok, "line": summary.line(), "device": summary.device,
        "resets": summary.resets, "seconds": summary.seconds, "train_step": summary.train_step,
        "training": summary.training,
        "batches": [dict(asdict(b), ok=b.ok) for b in summary.batches],
        "digits": summary.digits, "vowels": summary.vowels, "reduced": summary.reduced,
    }
    (directory / "summary.json").write_text(json.dumps(data, indent=1))
    written = [directory / "summary.json"]
    heads, seq_len = IRIS.NUM_HEADS, IRIS.SEQ_LEN
    for name, kept in samples.items():
        device = np.concatenate(kept["device"])
        reference = np.concatenate(kept["reference"])
        tolerance, source = _tolerance(kept, reference)
        what = "%s model, float logits of %d rows" % (name, len(device))
        written.append(plots.error_histogram(directory / ("%s_errors.png" % name), what,
                                             device, reference, tolerance, source))
        written.append(plots.relative_error(directory / ("%s_relative_error.png" % name), what,
                                            device, reference, tolerance, source))
        if kept.get("int8"):
            written.append(plots.int8_against_float(
                directory / ("%s_int8.png" % name),
                "%s model in int8 on the board (bit for bit the integer reference's) against "
                "the float64 reference" % name, np.concatenate(kept["int8"]), reference))
        if kept.get("stream"):
            errors, logits = kept["stream"]
            shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
            written.append(plots.stream_steps(
                directory / ("%s_stream.png" % name), "%s model: one utterance streamed a "
                "frame at a time (STREAM)" % name, errors, shifted / shifted.sum(axis=1,
                                                                              keepdims=True),
                RELATIVE, "relative: the float check's bound\n(float32 on the board, float64 "
                "reference)"))
        if name == "random":
            continue  # its attention is uniform (0.25 everywhere): nothing to learn from
        if kept.get("maps") is not None:
            rows, classes = _by_class(kept["classes"])
            written.append(plots.attention_by_input(
                directory / ("%s_attention.png" % name),
                "%s model: where each token looks, on %d inputs, two of each class\n(the "
                "float64 reference's maps; the board's agree: %s_attention_check.png)"
                % (name, len(rows), name),
                kept["maps"], heads, seq_len, rows, ["predicted class %d" % c for c in classes]))
        if kept.get("attention") is not None:
            got, want = kept["attention"]
            written.append(plots.attention_maps(
                directory / ("%s_attention_check.png" % name),
                "%s model: the board's attention weights against the reference's" % name,
                got, want, heads, seq_len))
    if summary.training:
        epochs = range(1, len(summary.training["loss"]) + 1)
        written.append(plots.training_curve(
            directory / "trained_training.png",
            "the trained model, on the host (reference, Adam, all 150 rows)",
            summary.training["loss"], {"training rows": (epochs, summary.training["accuracy"])}))
    return written


RELATIVE = 1e-4
"""The float checks' relative bound: |board - reference| <= 1e-4 x max(1, max |reference|)."""


def _tolerance(kept, reference):
    """(absolute tolerance, where it comes from) of a model's float outputs."""
    scale = max(1.0, float(np.abs(reference).max()))
    tolerance = kept.get("tolerance", RELATIVE * scale)
    return tolerance, "= %.0e x max(1, max|reference|) = %.0e x %.2f:\nthe float check's " \
        "bound (float32 on the board, float64 reference)" % (tolerance / scale, tolerance / scale,
                                                             scale)


def _by_class(classes, each=2):
    """(rows, their classes): the first `each` rows of every class, class by class."""
    classes = np.asarray(classes)
    rows = [int(r) for c in np.unique(classes) for r in np.flatnonzero(classes == c)[:each]]
    return rows, [int(classes[r]) for r in rows]

