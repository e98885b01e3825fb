"""The emulated core itself: the instruction count is exact (a loop of known length, with
branches and with the zero-overhead LOOP), a fault or a runaway stops with a message, and the
division stubs compute Python's // and %."""

import pytest

from tinyattn_host.emulator import funtable, layout
from tinyattn_host.emulator.xtensa_cpu import EmulatorFault
from tinyattn_host.emulator.xtensa_encode import (ENTRY_A1_32, RETW, addi, bnez, j, l32i, loop,
                                                  movi, s32i)
from tinyattn_host.virtual.unixport import DEVICE_DIR

KERNELS = DEVICE_DIR / "tinyattn" / "int8" / "kernels.py"

def no_stub(index, args):
    raise AssertionError("no stub is called here")


def run(emulator, code, args=(), limit=1 << 20):
    at = emulator.regions["code"].take(len(code), 4)  # beside the kernels, never over them
    emulator.cpu.write(at, code)
    return emulator.cpu.call(at, [a & 0xFFFFFFFF for a in args], no_stub, limit)


@pytest.mark.parametrize("n", [1, 2, 1000])
def test_a_branch_loop_counts_every_instruction(emulator, n):
    body = addi(2, 2, 1) + addi(3, 3, -1)
    code = ENTRY_A1_32 + movi(2, 0) + movi(3, n) + body + bnez(3, -(len(body) + 4)) + RETW
    result = run(emulator, code)
    assert result.value == n
    assert result.instructions == 3 + 3 * n + 1  # entry, 2 movi; n x 3; retw


@pytest.mark.parametrize("n", [1, 7, 1000])
def test_a_zero_overhead_loop_counts_its_body_only(emulator, n):
    body = addi(2, 2, 3) + addi(4, 4, 1)
    code = ENTRY_A1_32 + movi(2, 0) + movi(4, 0) + movi(3, n) + loop(3, len(body)) + body + RETW
    result = run(emulator, code)
    assert result.value == 3 * n
    assert result.instructions == 4 + 1 + 2 * n + 1  # entry, 3 movi, loop; n x 2; retw


def test_an_unaligned_load_is_a_fault_that_names_itself(emulator):
    code = ENTRY_A1_32 + l32i(3, 2, 0) + RETW
    with pytest.raises(EmulatorFault, match="EXCCAUSE 9, unaligned load or store"):
        run(emulator, code, [0x2000001])
    assert run(emulator, code, [0x2000000]).instructions == 3  # the core works on


def test_a_runaway_stops_at_the_limit(emulator):
    with pytest.raises(EmulatorFault, match="ran 5000 instructions without returning"):
        run(emulator, ENTRY_A1_32 + j(-4), limit=5000)


@pytest.mark.parametrize("name,python", [("small_int_floor_divide", lambda a, b: a // b),
                                         ("small_int_modulo", lambda a, b: a % b)])
def test_division_stubs_are_pythons(emulator, name, python):
    index = funtable.INDEX[name]
    address = layout.STUBS + layout.STUB_SPACING * index
    values = [0, 1, -1, 2, -2, 7, -7, 1000, -1000, 123456789, -123456789, 2 ** 30, -2 ** 30,
              2 ** 31 - 1, -2 ** 31]
    for a in values:
        for b in [v for v in values if v]:
            got = emulator.cpu.call(address, [a & 0xFFFFFFFF, b & 0xFFFFFFFF], no_stub)
            assert got.value == python(a, b) & 0xFFFFFFFF, (name, a, b)  # C wraps: -2^31 // -1
            assert got.instructions == 0 and got.stub_calls == 1  # its own are subtracted



def test_a_call_that_faults_leaves_no_stale_buffer_behind(emulator):
    """A kernel that stops half-way may have written its buffers; the next call sees the
    Python side's bytes again."""
    from tinyattn_host.emulator.machine import EmulatedFunction
    from tinyattn_host.emulator.loader import LoadedFunction

    store_then_fault = (ENTRY_A1_32 + movi(3, 99) + s32i(3, 2, 0) + addi(5, 2, 1) + l32i(4, 5, 0)
                        + RETW)
    at = emulator.regions["code"].take(len(store_then_fault), 4)
    emulator.cpu.write(at, store_then_fault)
    asm = EmulatedFunction(emulator, LoadedFunction("store_then_fault", 3, at,
                                                    store_then_fault, 0))
    buf = bytearray(8)
    with pytest.raises(EmulatorFault, match="unaligned"):
        asm(buf)
    assert buf == bytearray(8)  # the Python side was not updated from a half-done call
    lookup = emulator.function(KERNELS, "table_lookup")
    table = bytearray(range(256))
    lookup(buf, buf, 4, table)  # reads buf: it must be the Python side's zeros again
    assert buf == bytearray(8)
