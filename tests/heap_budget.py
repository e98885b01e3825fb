"""Heap budgets that are a board's figures: an ESP32-S3 has 32-bit words, so a budget such
as "300k, a board without PSRAM" holds on a 32-bit unix port (i686) as on the board. A 64-bit
port's objects are larger (8-byte pointers and object headers, not float32 data), by no fixed
factor: there such a test is skipped, with one line, rather than run at a guessed scale."""

import pytest

from tinyattn_host.virtual import unixport


def board_heap(heap):
    """`heap` (e.g. "300k"), a 32-bit figure: returned on a 32-bit interpreter; on a 64-bit
    one the calling test is skipped."""
    bits = unixport.word_bits(unixport.interpreter())
    if bits != 32:
        pytest.skip("the %s heap budget is a 32-bit figure (an ESP32-S3's); this unix port is "
                    "%d-bit: run it with a 32-bit build (MICROPYTHON=...i686)" % (heap, bits))
    return heap
