"""@micropython.asm_xtensa functions for tests/emulator/test_emulator_asm.py: the way in for
the chip-specific kernels (issue 23): compiled by mpy-cross for xtensawin, run as the S3 would."""
import micropython


@micropython.asm_xtensa
def add2(a2, a3):
    add(a2, a2, a3)


@micropython.asm_xtensa
def sum_bytes(a2, a3):
    """The sum of the a3 bytes at a2, in a zero-overhead LOOP (the inline assembler has no
    `loop`: its word is data)."""
    movi(a4, 0)
    data(1, 0x76, 0x83, 0x08)  # loop a3, over the next 9 bytes
    l8ui(a5, a2, 0)
    add(a4, a4, a5)
    addi(a2, a2, 1)
    mov(a2, a4)
