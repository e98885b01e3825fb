"""Issue 39's refusals on the device (tests/board/case_arrival_checks.py): bad int8 files at
load, save refusing what load would, LOAD_QMODEL, a refused STREAM changing nothing, Stream's
argument, a .ts file that is not UTF-8."""

from board_cases import board_test

test_arrival_checks_on_board = board_test("case_arrival_checks", heap="1m")
