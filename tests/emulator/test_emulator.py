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


def test_qemu_dies_with_the_process_that_started_it():
    """A killed test run leaves no emulator behind (QEMU would resume the machine and spin
    once its gdb connection closed)."""
    import os
    import signal
    import subprocess
    import sys
    import time

    if MISSING:
        pytest.skip(MISSING)
    code = ("from tinyattn_host.emulator.qemu import GdbRemote\nimport time\n"
            "print(GdbRemote().proc.pid, flush=True)\ntime.sleep(120)\n")
    parent = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    qemu_pid = int(parent.stdout.readline())
    parent.kill()
    parent.wait()
    parent.stdout.close()
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            os.kill(qemu_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.05)
    os.kill(qemu_pid, signal.SIGKILL)
    raise AssertionError("qemu-system-xtensa %d outlived its parent" % qemu_pid)
