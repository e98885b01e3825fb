"""The port's word size, as heap_budget asks it of the interpreter, agrees with the
interpreter's own sys.maxsize (its machine word, signed)."""

import subprocess

import pytest

from heap_budget import board_heap
from tinyattn_host.errors import BoardError
from tinyattn_host.virtual import unixport


def test_word_bits_is_the_interpreters_own():
    command = unixport.interpreter()
    maxsize = int(subprocess.run([command, "-c", "import sys; print(sys.maxsize)"],
                                 capture_output=True, text=True, timeout=30).stdout)
    assert maxsize == 2 ** (unixport.word_bits(command) - 1) - 1


def test_a_32_bit_budget_runs_on_a_32_bit_float32_port_only():
    command = unixport.interpreter()
    if unixport.word_bits(command) != 32:
        with pytest.raises(pytest.skip.Exception, match="32-bit figure.*64-bit"):
            board_heap("300k")
    elif unixport.float_bytes(command) not in (None, 4):
        with pytest.raises(pytest.skip.Exception, match="float32 figure.*8-byte floats"):
            board_heap("300k")
    else:
        assert board_heap("300k") == "300k"


def test_an_interpreter_that_cannot_answer_is_one_line(tmp_path):
    fake = tmp_path / "micropython"
    fake.write_text("#!/bin/sh\necho 'ImportError: no module named struct' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(BoardError, match="could not tell its word size"):
        unixport.word_bits(str(fake))
