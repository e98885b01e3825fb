"""Two mp_fun_table entries as Xtensa code in the emulator: the int division and modulo.

Viper's `//` and `%` call mp_small_int_floor_divide / mp_small_int_modulo once a row or a head
in the attention core and the LayerNorm (py/emitnative.c): hundreds of calls a kernel call,
too many for a gdb round trip each (xtensa_cpu emulates the other entries at a breakpoint).
So they run here, in code that has no branch: every call executes the same instructions, which
are subtracted from the count exactly (each stub adds 1 to its counter word). DIV32's quos and
rems truncate toward zero; Python's floor needs a fix-up when the remainder is non-zero and its
sign differs from the divisor's (conditional moves: moveqz, movltz).
"""

from dataclasses import dataclass

from .xtensa_encode import (ADD, ENTRY_A1_32, MOVEQZ, MOVLTZ, OR, QUOS, REMS, RETW, XOR, addi,
                            l32i, movi, rrr, s32i)

COUNTERS = 0x100  # one word per stub, in RAM below the vectors


def _count(slot):
    """counter[slot] += 1 (a8, a9 are the callee's scratch)."""
    return (movi(8, COUNTERS + 4 * slot) + l32i(9, 8, 0) + addi(9, 9, 1) + s32i(9, 8, 0))


@dataclass
class NativeStub:
    name: str
    slot: int  # its counter: COUNTERS + 4 slot
    code: bytes

    @property
    def instructions(self):
        return len(self.code) // 3  # every instruction here is 3 bytes


def floor_divide_stub(slot):
    """a2 = floor(a2 / a3)."""
    return NativeStub("small_int_floor_divide", slot, ENTRY_A1_32 + _count(slot) + b"".join([
        rrr(QUOS, 4, 2, 3),  # q = a / b, toward zero
        rrr(REMS, 5, 2, 3),  # r = a % b, the sign of a
        rrr(XOR, 6, 5, 3),  # < 0 when r and b differ in sign
        rrr(MOVEQZ, 6, 5, 5),  # ... and r != 0 (r == 0: a6 = 0)
        addi(7, 4, -1),
        rrr(MOVLTZ, 4, 7, 6),  # then q - 1
        rrr(OR, 2, 4, 4),
    ]) + RETW)


def modulo_stub(slot):
    """a2 = a2 mod a3 with the divisor's sign."""
    return NativeStub("small_int_modulo", slot, ENTRY_A1_32 + _count(slot) + b"".join([
        rrr(REMS, 4, 2, 3),
        rrr(XOR, 6, 4, 3),
        rrr(MOVEQZ, 6, 4, 4),
        rrr(ADD, 7, 4, 3),
        rrr(MOVLTZ, 4, 7, 6),  # r + b when r != 0 and its sign differs from b's
        rrr(OR, 2, 4, 4),
    ]) + RETW)


STUBS = {"small_int_floor_divide": floor_divide_stub(0), "small_int_modulo": modulo_stub(1)}
