"""The report's plots are written from the harness's figures, for any head count and length."""

import numpy as np
import pytest

from tinyattn_host.checks import plots
from tinyattn_host.checks.run_check import BatchResult, Summary
from tinyattn_host.checks.run_report import write_report


def png(path):
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    return path


@pytest.mark.parametrize("heads, seq_len, keys", [(2, 4, 4), (4, 8, 8), (1, 3, 5)])
def test_attention_maps_any_shape(tmp_path, heads, seq_len, keys):
    rng = np.random.default_rng(heads)
    reference = rng.dirichlet(np.ones(keys), size=3 * heads * seq_len)
    device = reference + rng.normal(0, 1e-7, reference.shape)
    png(plots.attention_maps(tmp_path / "a.png", "t", device, reference, heads, seq_len))


def test_errors_that_are_all_zero_still_plot(tmp_path):
    values = np.linspace(-3, 3, 30)
    png(plots.error_histogram(tmp_path / "h.png", "t", values, values, 1e-4))
    png(plots.relative_error(tmp_path / "r.png", "t", values, values, 1e-4))


def test_write_report_writes_every_plot(tmp_path):
    rng = np.random.default_rng(1)
    reference = rng.normal(0, 3, (20, 3))
    attention = rng.dirichlet(np.ones(4), size=2 * 2 * 4)
    maps = rng.dirichlet(np.ones(4), size=20 * 2 * 4)
    summary = Summary(batches=[BatchResult("trained", 0, 20, 1e-6, 20, 20, 20, 1, 1, 1e-3)],
                      training={"loss": [1.0, 0.5, 0.3], "accuracy": [0.5, 0.8, 0.9]})
    logits = rng.normal(0, 1, (12, 6))
    samples = {
        "trained": {"device": [reference + 1e-6], "reference": [reference],
                    "attention": (attention + 1e-8, attention), "tolerance": 1e-3,
                    "int8": [reference + 0.02], "maps": maps,
                    "classes": np.repeat([0, 1, 2, 1], 5)},
        "random": {"device": [reference], "reference": [reference], "tolerance": 1e-3,
                   "attention": (attention, attention), "maps": maps, "classes": [0] * 20},
        "vowels": {"device": [logits], "reference": [logits], "int8": [logits],
                   "stream": ([1e-7] * 12, logits)}}
    written = write_report(tmp_path, summary, samples)
    assert sorted(p.name for p in written) == [
        "random_errors.png", "random_relative_error.png", "summary.json",
        "trained_attention.png", "trained_attention_check.png", "trained_errors.png",
        "trained_int8.png", "trained_relative_error.png", "trained_training.png",
        "vowels_errors.png", "vowels_int8.png", "vowels_relative_error.png",
        "vowels_stream.png"]  # no attention plot of the random model: uniform, 0.25
    for path in written:
        if path.suffix == ".png":
            png(path)


def test_each_tolerance_says_where_it_comes_from():
    from tinyattn_host.checks.run_report import _by_class, _tolerance

    reference = np.array([[5.49, -1.0]])
    tolerance, source = _tolerance({"tolerance": 5.49e-4}, reference)
    assert tolerance == 5.49e-4
    assert source.startswith("= 1e-04 x max(1, max|reference|) = 1e-04 x 5.49:\nthe float "
                             "check's bound (float32 on the board, float64 reference)")
    assert _tolerance({}, np.array([[0.5]]))[0] == 1e-4  # max(1, ...)
    assert _by_class([2, 0, 0, 1, 2, 0]) == ([1, 2, 3, 0, 4], [0, 0, 1, 2, 2])
