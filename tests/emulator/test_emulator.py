"""The emulator is there (else this one test skips, naming what is missing, and the other
emulator tests are not collected: tests/emulator/conftest.py), and it is the machine the
harness assumes: QEMU's dc233c gdb register map, halted at its reset vector."""

import pytest

from emulator_tools import MISSING
from tinyattn_host.emulator.qemu import GdbRemote
from tinyattn_host.emulator.xtensa_cpu import A0, PC, PS, VECBASE


def test_qemu_runs_the_dc233c_with_the_register_map_the_harness_uses():
    if MISSING:
        pytest.skip(MISSING)
    gdb = GdbRemote()
    try:
        regs = gdb.registers()
    finally:
        gdb.close()
    assert len(regs) == A0 + 16  # pc, ar0..ar31, special registers, then a0..a15
    assert regs[PC] == 0xFE000000 and regs[VECBASE] == 0x2000  # dc233c's reset state
    assert regs[PS] == 0x1F  # INTLEVEL 15, EXCM: reset
