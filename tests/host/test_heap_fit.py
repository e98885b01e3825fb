"""The batch sizing of `make run` (tinyattn_host.checks.heap_fit), against counts made by hand."""

import math

from tinyattn_host.checks import heap_fit
from tinyattn_host.digits import DIGITS_CONFIG

DENSE = [["Dense", 4, 3, True]]


def test_a_row_costs_its_forward_floats_times_the_factor():
    # Dense(4, 3): the input row (4 floats, the reference's cache) and the output (3)
    for work, factor in heap_fit.FACTOR.items():
        assert heap_fit.row_bytes(tuple(map(tuple, DENSE)), work) == math.ceil(4 * factor * 7)
    # Dense(4, 3) then ReLU: the input (4), the ReLU's input (3) and the output (3)
    relu = tuple(map(tuple, DENSE + [["Activation", "relu"]]))
    assert heap_fit.row_bytes(relu, "forward") == math.ceil(4 * heap_fit.FACTOR["forward"] * 10)


def test_rows_fit_the_free_heap_between_one_and_the_rows_asked():
    per_row = heap_fit.row_bytes(tuple(map(tuple, DIGITS_CONFIG)), "train")
    gradients = 4 * heap_fit.parameter_count(DIGITS_CONFIG)  # made by the first TRAIN_STEP
    free = heap_fit.RESERVE + heap_fit.FIXED["train"] + gradients + 5 * per_row
    assert heap_fit.rows_that_fit(free, DIGITS_CONFIG, 16, "train") == 5
    assert heap_fit.rows_that_fit(free - 1, DIGITS_CONFIG, 16, "train") == 4
    assert heap_fit.rows_that_fit(free, DIGITS_CONFIG, 3, "train") == 3
    assert heap_fit.rows_that_fit(0, DIGITS_CONFIG, 16, "train") == 1  # never none


def test_a_double_precision_board_rows_cost_twice_the_bytes():
    """HELLO's "float" is 8 on a double-precision ulab: rows, gradients and the model double."""
    per_row = 2 * heap_fit.row_bytes(tuple(map(tuple, DIGITS_CONFIG)), "train")
    gradients = 8 * heap_fit.parameter_count(DIGITS_CONFIG)
    free = heap_fit.RESERVE + heap_fit.FIXED["train"] + gradients + 5 * per_row
    assert heap_fit.rows_that_fit(free, DIGITS_CONFIG, 16, "train", 64, 8) == 5
    assert heap_fit.rows_that_fit(free - 1, DIGITS_CONFIG, 16, "train", 64, 8) == 4
    assert heap_fit.rows_that_fit(free, DIGITS_CONFIG, 16, "train") > 5  # float32: more fit
    need = heap_fit.RESERVE + heap_fit.MODEL_FACTOR * 8 * heap_fit.parameter_count(DIGITS_CONFIG)
    assert heap_fit.model_fits(need, DIGITS_CONFIG, 8)
    assert not heap_fit.model_fits(need - 1, DIGITS_CONFIG, 8)


def test_a_model_fits_when_its_parameters_times_the_factor_do():
    assert heap_fit.parameter_count(DENSE) == 15
    need = heap_fit.RESERVE + heap_fit.MODEL_FACTOR * 4 * heap_fit.parameter_count(DIGITS_CONFIG)
    assert heap_fit.model_fits(need, DIGITS_CONFIG)
    assert not heap_fit.model_fits(need - 1, DIGITS_CONFIG)


def test_quantize_rows_past_one_calibration_batch_cost_their_own_bytes():
    per_row = heap_fit.row_bytes(tuple(map(tuple, DIGITS_CONFIG)), "quantize")
    own = heap_fit.INPUT_COPIES * 4 * 64  # the digits model takes rows of 64 features
    fixed = heap_fit.RESERVE + heap_fit.FIXED["quantize"]
    free = fixed + 3 * (per_row + own)
    assert heap_fit.rows_that_fit(free, DIGITS_CONFIG, 64, "quantize") == 3
    assert heap_fit.rows_that_fit(free - 1, DIGITS_CONFIG, 64, "quantize") == 2
    batch = heap_fit.CALIBRATION_BATCH
    free = fixed + batch * per_row + 40 * own  # 16 rows of forward, 40 of input
    assert heap_fit.rows_that_fit(free, DIGITS_CONFIG, 64, "quantize") == 40
    assert heap_fit.rows_that_fit(free - 1, DIGITS_CONFIG, 64, "quantize") == 39
    smaller = heap_fit.FIXED["quantize"] - heap_fit.FIXED_32BIT["quantize"]
    assert heap_fit.rows_that_fit(free - smaller, DIGITS_CONFIG, 64, "quantize", 32) == 40


def test_the_word_size_from_hellos_mpy_architecture():
    assert heap_fit.board_word_bits({"mpy": (10 << 10) | 6}) == 32  # xtensawin: an ESP32-S3
    assert heap_fit.board_word_bits({"mpy": 1798}) == 32  # x86 (i686 unix port)
    assert heap_fit.board_word_bits({"mpy": 2822}) == 64  # x86-64
    for unknown in ({}, {"mpy": None}, {"mpy": 6}, {"mpy": True}, {"mpy": 15 << 10}):
        assert heap_fit.board_word_bits(unknown) == 64  # the larger estimate
