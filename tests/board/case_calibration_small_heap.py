"""Calibration too large for the heap, in whatever heap the board has (a real ulab only): quantize
with every row as one batch fails with MemoryError and leaves the heap where it was (its
modules imported before); batch_size=16 then calibrates the same rows in the same heap.

The rows are sized from the free heap, as a board's heap is what it is (the virtual board's
too): x takes an eighth of it, and one batch of them needs many times x (every layer's
activations for all the samples at once, 24 to 48 floats a token where a sample's input is 8),
so that batch fails on any heap; 16 samples at a time fit from 1 MB."""

import gc

import check
from tinyattn.datasets.digits import digits_model
from tinyattn.int8 import quantize
from tinyattn.rng import Rng

SHARE = 8  # x takes 1/SHARE of the free heap


def rows_for_the_heap(itemsize):
    """The number of 64-pixel rows that take 1/SHARE of the free heap."""
    gc.collect()
    return gc.mem_free() // (SHARE * 64 * itemsize)


def test_a_failed_calibration_leaves_the_heap_and_batches_fit():
    model = digits_model(7)
    rng = Rng(3)
    quantize(model, rng.uniform_matrix(2, 64, -2.0, 2.0))  # its modules imported
    rows = rows_for_the_heap(model.layers[1].W.itemsize)
    x = rng.uniform_matrix(rows, 64, -2.0, 2.0)
    before = check.heap_in_use()
    check.raises(MemoryError, quantize, model, x, batch_size=rows)
    after = check.heap_in_use()
    assert after - before <= 64, "a failed quantize leaves %d bytes" % (after - before)
    qmodel = quantize(model, x, batch_size=16)
    check.equal(len(qmodel.layers), len(model.layers), "the int8 model's layers")
