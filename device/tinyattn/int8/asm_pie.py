"""linear (x W^T + b, requantized) on the ESP32-S3's PIE vector unit: @micropython.asm_xtensa,
for -march=xtensawin ESP32-S3 firmware built with MICROPY_EMIT_INLINE_XTENSA=1 only
(int8/backend.py decides whether it runs; an ESP32 without PIE never passes its self-test).

The same header as kernels.linear (its fields, bias and strides, every requantize step) and
as asm_mac16.linear; instead of the offset-binary W it takes the operand buffer of
pie_layout.operands: signed int8 weights in 16-byte-aligned rows of 32n bytes. The inner loop
is a pass of 4 instructions for 32 MACs:

    ee.vmulas.s8.accx.ld.ip q2, a5, 16, q0, q1   ACCX += row block . weight block; next row
    ee.vld.128.ip           q3, a4, 16           next weight block
    ee.vmulas.s8.accx.ld.ip q0, a5, 16, q2, q3
    ee.vld.128.ip           q1, a4, 16

Each VMULAS adds 16 int8 products to the 40-bit ACCX. Why no lane or sum can saturate (the
ISA saturates ACCX at +-2^39, and Espressif's QEMU has saturation bugs, espressif/qemu issues
161, 165, 166): a product is at most 128 * 128 = 2^14 in size, so after K items
|ACCX| <= K 2^14 <= 2^29 (K <= kernels.MAX_DEPTH = 2^15), far inside 40 bits; ACCX's low 32
bits (RUR.ACCX_0) are then the exact dot product, and dot + bias fits in int32
(linear_header checks depth * 2^14 + |bias| < 2^31). No QACC lane (20 bits) is used.

The inline assembler has no PIE, LOOP, MIN/MAX mnemonic: their words are `data(3, word)` or
`data(4, word)` (the 32-bit FLIX format of the .LD.IP form), encoded from the ESP32-S3's
xtensa-modules opcode tables (Espressif's QEMU, target/xtensa/core-esp32s3); each line says
which instruction it is. The LOOPGTZ bodies start on a 4-byte boundary. Conditional branches
go backwards only, after the first label (see asm_mac16).

From the bias on (requantize, store, the next destination row) the code is asm_mac16's line
for line: the inline assembler has no macro or include, and a call a column would cost more
than the column's inner loop.

Registers: a2 header, a3 operands (rounded up to 16), a4 weight pointer, a5 row pointer,
a6 passes of the inner loop, a7 columns left, a8 cap, a9 rounding half, a10 source row,
a11 destination item, a12 bias, a13 value, a14 scratch, a15 destination row; in the frame:
+4 group base, +8 row in group, +12 rows left. q0..q3 the blocks.
"""

import micropython


@micropython.asm_xtensa
def address(a2):
    """The address of a buffer (pie_layout finds its 16-byte boundary with it)."""
    addi(a2, a2, 0)


@micropython.asm_xtensa
def linear(a2, a3):
    addi(a3, a3, 15)
    movi(a14, -16)
    and_(a3, a3, a14)  # the operands' first 16-byte boundary (pie_layout.start)
    l32i(a6, a2, 40)  # depth
    addi(a6, a6, 31)
    srli(a6, a6, 5)  # passes: 32 items each
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
    # the row copied as int8 to the start of the operands: u ^ flip ^ 128
    l32i(a14, a2, 48)  # flip
    movi(a13, 128)
    xor(a14, a14, a13)
    l32i(a7, a2, 40)  # depth
    addi(a13, a10, 0)
    addi(a5, a3, 0)
    data(3, 0x0020F0)  # nop: the loop bodies start 4-byte aligned
    data(3, 0x0EA776)  # loopgtz a7, +15 bytes
    l8ui(a11, a13, 0)
    xor(a11, a11, a14)
    s8i(a11, a5, 0)
    addi(a13, a13, 1)
    addi(a5, a5, 1)
    slli(a4, a6, 5)
    add(a4, a4, a3)  # weight row 0 follows the row's 32 * passes bytes
    data(3, 0x838144)  # ee.vld.128.ip q1, a4, 16: weight block 0
    l32i(a7, a2, 36)  # cols
    addi(a12, a2, 80)  # bias
    mov(a11, a15)
    label(col)
    addi(a5, a3, 0)
    data(3, 0x830154)  # ee.vld.128.ip q0, a5, 16: row block 0
    data(3, 0x250804)  # ee.zero.accx
    data(3, 0x0DA676)  # loopgtz a6, +14 bytes
    data(4, 0xF182015E)  # ee.vmulas.s8.accx.ld.ip q2, a5, 16, q0, q1
    data(3, 0x938144)  # ee.vld.128.ip q3, a4, 16
    data(4, 0xF082915E)  # ee.vmulas.s8.accx.ld.ip q0, a5, 16, q2, q3
    data(3, 0x838144)  # ee.vld.128.ip q1, a4, 16
    data(3, 0xE3D000)  # rur.accx_0 a13
    # from here to label(done): asm_mac16's lines, the same to the letter (the inline assembler
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
