"""The one median of timings (device/tinyattn/link/timing.py, plain Python), which the link's
BENCH message and the bench package both take."""

import statistics

import numpy as np

from tinyattn_host.device_modules import device_module

timing = device_module("link/timing")


def test_median_is_the_statistics_median():
    rng = np.random.default_rng(3)
    for n in range(1, 12):
        values = [int(v) for v in rng.integers(0, 10 ** 6, n)]
        assert timing.median(values) == statistics.median(values), values
    assert timing.median([0.25, 0.5]) == 0.375
