"""Inference memory (issue 20): tests/board/case_inference_memory.py on the board, and
tests/board/case_calibration_small_heap.py in a 1 MB heap (a real ulab only: the stand-in's
heap figures mean nothing)."""

from board_cases import board_test

test_inference_memory_on_board = board_test("case_inference_memory")
test_calibration_small_heap_on_board = board_test(
    "case_calibration_small_heap", heap="1m",
    needs_ulab="a heap of 1 MB is for a real ulab's buffers, not the stand-in's lists")
