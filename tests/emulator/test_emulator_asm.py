"""@micropython.asm_xtensa code from a .mpy runs and is counted like viper code: called as
MicroPython calls it (a C function of the arguments' words: an int, a buffer's address), with
LOOP written as data (tests/emulator/asm_sample.py)."""

from pathlib import Path

SAMPLE = Path(__file__).with_name("asm_sample.py")


def test_asm_functions_run_and_their_loop_costs_its_body(emulator):
    functions = emulator.module(SAMPLE)
    assert functions["add2"](1000, -58) == 942
    counts = {}
    for n in (10, 110):
        data = bytearray((7 * i + 3) & 255 for i in range(n))
        assert functions["sum_bytes"](data, n) == sum(data)
        counts[n] = emulator.calls[-1].instructions
    assert counts[110] - counts[10] == 3 * 100  # l8ui, add, addi a byte; LOOP adds nothing
