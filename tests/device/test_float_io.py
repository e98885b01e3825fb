"""int8/float_io.py against ulab's own float arithmetic, bit for bit (tests/board/
case_float_io.py on the board; a real ulab only)."""

from board_cases import board_test

test_float_io_on_board = board_test("case_float_io", needs_ulab="the steps need ulab's buffers")
