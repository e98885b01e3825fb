"""linear (x W^T + b, requantized) on the Xtensa core's MAC16 unit and zero-overhead loops:
@micropython.asm_xtensa, for -march=xtensawin only (deploy ships it to such boards alone; the
firmware must be built with MICROPY_EMIT_INLINE_XTENSA=1, docs/chip.md; int8/backend.py
decides whether it runs).

The same header as kernels.linear (its fields, bias and strides, every requantize step);
instead of the offset-binary W it takes the operand buffer of mac16_layout.operands: int16
words the MAC16 loads two at a time. The inner loop is four MULA.DD.*.LDINC a pass, each one
multiply-accumulate into the 40-bit ACC and one 32-bit load (two int16) for the next:
4 MACs in 4 instructions. The accumulator's low 32 bits are the dot product modulo 2^32, and
its true value fits in int32 (linear_header checks depth * 2^14 + |bias| < 2^31).

The inline assembler has no LOOP, MAC16, MIN/MAX or special-register mnemonic: their words
are `data(3, word)`, encoded from the Xtensa ISA (the dc233c's and the ESP32-S3's
xtensa-modules opcode tables); each line says which instruction it is. The LOOPGTZ bodies
start on a 4-byte boundary (the code is placed 4-byte aligned; tests/emulator checks it).
Conditional branches go backwards only, after the first label: the 1.28/1.29 inline
assembler sizes a branch to a label not yet seen as one to the first label, so a forward one
would change size between its two passes (mpy-cross stops on an assertion).

Registers: a2 header, a3 operands, a4 weight pointer, a5 row pointer, a6 passes of the inner
loop, a7 columns left, a8 cap, a9 rounding half, a10 source row, a11 destination item,
a12 bias, a13 value, a14 scratch, a15 destination row; in the frame: +4 group base, +8 row in
group, +12 rows left.
"""

import micropython


@micropython.asm_xtensa
def linear(a2, a3):
    l32i(a6, a2, 40)  # depth
    addi(a6, a6, 3)
    srli(a6, a6, 2)  # passes: 4 int16 pairs each
    l32i(a8, a2, 12)  # cap
    l32i(a14, a2, 4)  # s
    movi_n(a9, 1)
    ssl(a14)
    sll(a9, a9)
    srai(a9, a9, 1)  # half = (1 << s) >> 1
    l32i(a14, a2, 32)
    add(a10, a2, a14)  # source row 0
    l32i(a14, a2, 52)
    add(a15, a2, a14)  # destination row 0 = group base
    s32i(a15, a1, 4)
    movi_n(a14, 0)
    s32i(a14, a1, 8)
    l32i(a14, a2, 28)  # rows
    s32i(a14, a1, 12)
    beqz(a14, done)
    label(row)
    # the row widened to int16 at the start of the operands: (u ^ flip) - 128
    l32i(a14, a2, 48)  # flip
    l32i(a7, a2, 40)  # depth
    addi(a13, a10, 0)
    addi(a5, a3, 0)
    nop_n()  # the loop bodies start 4-byte aligned
    data(3, 0x11A776)  # loopgtz a7, +18 bytes
    l8ui(a11, a13, 0)
    xor(a11, a11, a14)
    addi(a11, a11, -128)
    s16i(a11, a5, 0)
    addi(a13, a13, 1)
    addi(a5, a5, 2)
    slli(a4, a6, 3)
    add(a4, a4, a3)  # the weights follow the row's 8 * passes + 4 bytes: LDINC adds 4 first
    data(3, 0x802404)  # ldinc m2, a4: weight word 0
    l32i(a7, a2, 36)  # cols
    addi(a12, a2, 80)  # bias
    mov(a11, a15)
    label(col)
    addi(a5, a3, -4)
    data(3, 0x800504)  # ldinc m0, a5: row word 0
    movi_n(a13, 0)
    data(3, 0x1310D0)  # wsr a13, acclo
    data(3, 0x1311D0)  # wsr a13, acchi
    data(3, 0x0BA676)  # loopgtz a6, +12 bytes
    data(3, 0x081504)  # mula.dd.ll.ldinc m1, a5, m0, m2
    data(3, 0x0B3404)  # mula.dd.hh.ldinc m3, a4, m0, m2
    data(3, 0x084544)  # mula.dd.ll.ldinc m0, a5, m1, m3
    data(3, 0x0B6444)  # mula.dd.hh.ldinc m2, a4, m1, m3
    data(3, 0x0310D0)  # rsr a13, acclo
    # from here to label(done): asm_pie's lines, the same to the letter (the inline assembler
    # has no macro or include, and a call a column would cost more than its inner loop;
    # tests/host/test_kernel_fields.py holds the two equal)
    l32i(a14, a12, 0)
    add(a13, a13, a14)  # + bias
    addi(a12, a12, 4)
    l32i(a14, a2, 72)  # wide
    j(requantize)
    label(store_wide)
    s32i(a13, a11, 0)
    j(next_col)
    label(requantize)
    bnez(a14, store_wide)
    data(3, 0x43DD80)  # min a13, a13, a8
    neg(a14, a8)
    data(3, 0x53DDE0)  # max a13, a13, a14
    l32i(a14, a2, 8)  # p
    ssr(a14)
    sra(a13, a13)
    l32i(a14, a2, 0)  # m
    mull(a13, a13, a14)
    add(a13, a13, a9)
    l32i(a14, a2, 4)  # s
    ssr(a14)
    sra(a13, a13)
    l32i(a14, a2, 20)  # hi
    data(3, 0x43DDE0)  # min a13, a13, a14
    l32i(a14, a2, 16)  # lo
    data(3, 0x53DDE0)  # max a13, a13, a14
    l32i(a14, a2, 76)  # add
    add(a13, a13, a14)
    s8i(a13, a11, 0)
    label(next_col)
    l32i(a14, a2, 60)  # column stride
    add(a11, a11, a14)
    addi(a7, a7, -1)
    bnez(a7, col)
    # next destination row: the group's next row, or the next group's first
    l32i(a13, a1, 8)
    addi(a13, a13, 1)
    l32i(a14, a2, 64)  # rows per group
    j(group_test)
    label(next_group)
    movi_n(a13, 0)
    l32i(a15, a1, 4)
    l32i(a14, a2, 68)  # group stride
    add(a15, a15, a14)
    s32i(a15, a1, 4)
    j(row_done)
    label(group_test)
    beq(a13, a14, next_group)
    l32i(a14, a2, 56)  # row stride
    add(a15, a15, a14)
    label(row_done)
    s32i(a13, a1, 8)
    l32i(a14, a2, 44)  # source row stride
    add(a10, a10, a14)
    l32i(a14, a1, 12)
    addi(a14, a14, -1)
    s32i(a14, a1, 12)
    bnez(a14, row)
    label(done)
