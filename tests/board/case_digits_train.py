"""The digits model's whole training run on the device: at least 95% test accuracy. A
measurement, minutes long with a real ulab (hours with the stand-in, so the host skips it
there): tests/device/test_digits_device.py."""

import check


def test_training_on_the_device_reaches_95_percent():
    from tinyattn.datasets.digits import train_digits

    _, accuracy, _ = train_digits(check.path("digits.csv"), log_every=1)
    assert accuracy >= 0.95, "test accuracy %g" % accuracy
