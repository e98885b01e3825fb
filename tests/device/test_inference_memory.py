"""Inference memory (issue 20): tests/board/case_inference_memory.py (heap figures: a real
ulab only, the stand-in's mean nothing), case_calibration_batches.py, and
case_calibration_small_heap.py (a real ulab only; 1 MB on the unix port, the board's own heap
on a board: the case sizes its rows from the free heap)."""

from board_cases import board_test

REAL_ULAB = "heap figures are for a real ulab's buffers, not the stand-in's lists"

test_inference_memory_on_board = board_test("case_inference_memory", needs_ulab=REAL_ULAB)
test_calibration_batches_on_board = board_test("case_calibration_batches")
test_calibration_small_heap_on_board = board_test(
    "case_calibration_small_heap", heap="1m",
    needs_ulab=REAL_ULAB)
