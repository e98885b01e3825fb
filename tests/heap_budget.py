"""Heap budgets that are a board's figures: an ESP32-S3 has 32-bit words and float32, so a
budget such as "300k, a board without PSRAM" holds on a 32-bit unix port (i686) with float32
ulab arrays as on the board. A 64-bit port's objects are larger (8-byte pointers and object
headers), a double-precision build's arrays twice as large: there such a test is skipped, with
one line, rather than run at a guessed scale."""

import pytest

from tinyattn_host.virtual import unixport


def board_heap(heap):
    """`heap` (e.g. "300k"), a 32-bit float32 figure: returned on a 32-bit interpreter whose
    ulab has float32 (or the stand-in); otherwise the calling test is skipped."""
    bits = unixport.word_bits(unixport.interpreter())
    if bits != 32:
        pytest.skip("the %s heap budget is a 32-bit figure (an ESP32-S3's); this unix port is "
                    "%d-bit: run it with a 32-bit build (MICROPYTHON=...i686)" % (heap, bits))
    size = unixport.float_bytes(unixport.interpreter())
    if size not in (None, 4):
        pytest.skip("the %s heap budget is a float32 figure (an ESP32-S3's); this unix port's "
                    "ulab has %d-byte floats: build it with MICROPY_FLOAT_IMPL_FLOAT (README)"
                    % (heap, size))
    return heap
