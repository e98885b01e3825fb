"""LOAD_QMODEL's description check on the device: tests/board/case_qcheck.py."""

from board_cases import board_test

test_qcheck_on_board = board_test("case_qcheck")
