"""Calibration in a small heap (tests/device/test_inference_memory.py runs it in 1 MB with a
real ulab): quantize with all 600 rows as one batch fails with MemoryError and leaves the
heap where it was (its modules imported before); batch_size=16 then calibrates the same rows in the same heap."""

import check
from tinyattn.datasets.digits import digits_model
from tinyattn.int8 import quantize
from tinyattn.rng import Rng

ROWS = 600


def test_a_failed_calibration_leaves_the_heap_and_batches_fit():
    model = digits_model(7)
    x = Rng(3).uniform_matrix(ROWS, 64, -2.0, 2.0)
    quantize(model, x[:2, :].copy())  # its modules imported: what stays is their code
    before = check.heap_in_use()
    check.raises(MemoryError, quantize, model, x, batch_size=ROWS)
    after = check.heap_in_use()
    assert after - before <= 64, "a failed quantize leaves %d bytes" % (after - before)
    qmodel = quantize(model, x, batch_size=16)
    check.equal(len(qmodel.layers), len(model.layers), "the int8 model's layers")
