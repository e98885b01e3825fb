"""`make run`'s report folder: summary.json with every figure, and the PNG plots of each model."""

import json
from dataclasses import asdict
from pathlib import Path

import numpy as np

from . import plots
from ..device_modules import device_module

IRIS_CONFIG = device_module("datasets/iris").CONFIG


def write_report(directory, summary, samples):
    """summary.json with every figure, and the PNG plots (tinyattn_host.checks.plots) of each model:
    attention maps, error histogram, relative error; the trained model's training curve."""
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
    heads, seq_len = _attention_shape(IRIS_CONFIG)
    for name, kept in samples.items():
        device = np.concatenate(kept["device"])
        reference = np.concatenate(kept["reference"])
        tolerance = kept["tolerance"]  # absolute: the relative bound at the largest logit
        what = "%s model, float logits of %d rows" % (name, len(device))
        written.append(plots.error_histogram(directory / ("%s_errors.png" % name), what,
                                             device, reference, tolerance))
        written.append(plots.relative_error(directory / ("%s_relative_error.png" % name), what,
                                            device, reference, tolerance))
        if kept["attention"] is not None:
            got, want = kept["attention"]
            written.append(plots.attention_maps(
                directory / ("%s_attention.png" % name),
                "%s model: attention weights of the first sequences" % name,
                got, want, heads, seq_len))
    if summary.training:
        epochs = range(1, len(summary.training["loss"]) + 1)
        written.append(plots.training_curve(
            directory / "trained_training.png",
            "the trained model, on the host (reference, Adam, all 150 rows)",
            summary.training["loss"], {"training rows": (epochs, summary.training["accuracy"])}))
    return written


def _attention_shape(config):
    """(heads, sequence length) of the model's SelfAttention layer."""
    spec = next(spec for spec in config if spec[0] == "SelfAttention")
    return spec[2], spec[3]
