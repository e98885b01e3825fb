"""Bad calibration sets and loss arguments on the device (tests/board/case_bad_arguments.py):
each a ValueError naming the argument and what it must be."""

from board_cases import board_test

test_bad_arguments_on_board = board_test("case_bad_arguments")
