"""tinyattn.int8.backend on the unix port (tests/board/case_backend.py): the stock-firmware
detection, the self-test's mismatch and crash marker, forced viper."""

from board_cases import board_test

test_case_backend = board_test("case_backend")
