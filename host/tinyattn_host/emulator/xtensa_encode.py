"""Xtensa instruction words by hand (the Xtensa ISA's formats, little-endian), for the few
lines of code the emulator and its tests run that mpy-cross does not make (binutils'
xtensa-lx106 assembler, the ESP8266's core, knows no windowed, DIV32, LOOP or MAC16 instruction).

    rrr(op2, op1, r, s, t)          RRR: add, xor, or, moveqz, quos, rems...
    rri8(r, s, t, imm8)             RRI8 (op0 2): l32i, s32i, addi, movi's low part
"""

ENTRY_A1_32 = bytes.fromhex("364100")  # entry a1, 32
RETW = bytes.fromhex("900000")  # retw (the 3-byte form)
CALLX8_A15 = bytes.fromhex("e00f00")  # callx8 a15
# (op2, op1) of RRR instructions with op0 0
QUOS, REMS, XOR, ADD, OR = (0xD, 2), (0xF, 2), (3, 0), (8, 0), (2, 0)
MOVEQZ, MOVLTZ = (8, 3), (0xA, 3)


def _word(value):
    return value.to_bytes(3, "little")


def rrr(op, r, s, t):
    """ar = as OP at, for `op` one of the (op2, op1) pairs above."""
    op2, op1 = op
    return _word((op2 << 20) | (op1 << 16) | (r << 12) | (s << 8) | (t << 4))


def rri8(r, s, t, imm8):
    return _word(0x2 | (t << 4) | (s << 8) | (r << 12) | ((imm8 & 0xFF) << 16))


def addi(t, s, imm):
    return rri8(0xC, s, t, imm)


def movi(t, imm):
    """at = imm, -2048 <= imm < 2048 (its top 4 bits in the s field)."""
    return rri8(0xA, (imm >> 8) & 0xF, t, imm)


def l32i(t, s, offset):
    return rri8(0x2, s, t, offset // 4)


def s32i(t, s, offset):
    return rri8(0x6, s, t, offset // 4)


def bnez(s, offset):
    """Branch to (this address + 4 + offset) if as != 0 (BRI12, -2048 <= offset < 2048)."""
    return _word(0x6 | (1 << 4) | (1 << 6) | (s << 8) | ((offset & 0xFFF) << 12))


def loop(s, body_bytes):
    """LOOP as: the next `body_bytes` bytes run as times (zero-overhead; LEND = this + 3 +
    body_bytes, encoded as an offset from this + 4)."""
    return _word(0x76 | (s << 8) | (0x8 << 12) | (((body_bytes - 1) & 0xFF) << 16))


def j(offset):
    """Jump to (this address + 4 + offset)."""
    return _word(0x6 | ((offset & 0x3FFFF) << 6))
