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

COUNTERS = 0x100  # one word per stub, in RAM below the vectors


def _rrr(op2, op1, r, s, t, op0=0):
    return ((op2 << 20) | (op1 << 16) | (r << 12) | (s << 8) | (t << 4) | op0).to_bytes(3, "little")


def _addi(t, s, imm):
    return (0x2 | (t << 4) | (s << 8) | (0xC << 12) | ((imm & 0xFF) << 16)).to_bytes(3, "little")


def _movi(t, imm):  # RRI8 MOVI: imm12 split in s (high 4) and imm8
    return (0x2 | (t << 4) | (((imm >> 8) & 0xF) << 8) | (0xA << 12)
            | ((imm & 0xFF) << 16)).to_bytes(3, "little")


def _l32i(t, s, words):
    return (0x2 | (t << 4) | (s << 8) | (0x2 << 12) | (words << 16)).to_bytes(3, "little")


def _s32i(t, s, words):
    return (0x2 | (t << 4) | (s << 8) | (0x6 << 12) | (words << 16)).to_bytes(3, "little")


ENTRY_A1_32 = bytes.fromhex("364100")  # entry a1, 32
RETW = bytes.fromhex("900000")
QUOS, REMS, XOR, ADD, OR = (0xD, 2), (0xF, 2), (3, 0), (8, 0), (2, 0)
MOVEQZ, MOVLTZ = (8, 3), (0xA, 3)


def _op(kind, r, s, t):
    return _rrr(kind[0], kind[1], r, s, t)


def _count(slot):
    """counter[slot] += 1 (a8, a9 are the callee's scratch)."""
    return (_movi(8, COUNTERS + 4 * slot) + _l32i(9, 8, 0) + _addi(9, 9, 1) + _s32i(9, 8, 0))


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
        _op(QUOS, 4, 2, 3),  # q = a / b, toward zero
        _op(REMS, 5, 2, 3),  # r = a % b, the sign of a
        _op(XOR, 6, 5, 3),  # < 0 when r and b differ in sign
        _op(MOVEQZ, 6, 5, 5),  # ... and r != 0 (r == 0: a6 = 0)
        _addi(7, 4, -1),
        _op(MOVLTZ, 4, 7, 6),  # then q - 1
        _op(OR, 2, 4, 4),
    ]) + RETW)


def modulo_stub(slot):
    """a2 = a2 mod a3 with the divisor's sign."""
    return NativeStub("small_int_modulo", slot, ENTRY_A1_32 + _count(slot) + b"".join([
        _op(REMS, 4, 2, 3),
        _op(XOR, 6, 4, 3),
        _op(MOVEQZ, 6, 4, 4),
        _op(ADD, 7, 4, 3),
        _op(MOVLTZ, 4, 7, 6),  # r + b when r != 0 and its sign differs from b's
        _op(OR, 2, 4, 4),
    ]) + RETW)


STUBS = {"small_int_floor_divide": floor_divide_stub(0), "small_int_modulo": modulo_stub(1)}
