"""The int8 attention core (kernels_attend._attend without keep mask or trace) on the
ESP32-S3's PIE vector unit, for heads of D <= 16: @micropython.asm_xtensa, -march=xtensawin
ESP32-S3 firmware only, chosen as asm_pie.py is (int8/backend.py; D > 16 stays on MAC16's
asm_attend).

attend(header, work, table): the header, masks and exp table of asm_attend.attend, the work
buffer of attend_layout.pie_work. The steps are asm_attend's (its docstring: grouped K/V heads
widened once a group, n = min(max(i + offset + 1, 0), T) keys a query, the bias row, the exp
table, QUOU, -P_j, empty rows), with the two dot products on PIE:

- scores: K_h widened to signed int8 rows of 16 bytes (k - 128 = the offset binary's top bit
  flipped), the query row in q0; a key is EE.ZERO.ACCX, EE.VLD.128.IP q1 (its row),
  EE.VMULAS.S8.ACCX q0, q1 (16 MACs), RUR.ACCX_0, MAX, store: 7 instructions for 16 MACs.
- P V: V_h^T widened negated (128 - v, int16) in rows of 16 ps items, P negated (-P_j,
  int16, zero past n and T); an output is ps passes of EE.VMULAS.S16.ACCX.LD.IP (8 MACs and
  the next P block) and EE.VLD.128.IP (the next V block), twice: 16 MACs in 4 instructions
  (asm_pie.linear's loop; the V rows follow each other, so the block loaded past a row is the
  next row's first), then asm_attend's requantize.

ACCX is 40 bits and saturates there; nothing comes near: a score is at most 16 * 2^14 = 2^18,
a P V sum at most sum_j P_j 128 <= (2^15 + T) 128 < 2^31, and RUR.ACCX_0 reads its low 32 bits,
the exact value (as asm_pie.linear does).

Encodings (the inline assembler has no PIE, LOOP, MIN/MAX, MOVEQZ, CLAMPS, QUOU mnemonic;
`data(3, word)` from the esp32s3 core's opcode tables, Espressif's QEMU target/xtensa/
core-esp32s3): EE.VLD.128.IP 0x830004 | qu bit 0 << 15 | qu bits 1-2 << 20 | as << 4 |
(imm / 16) << 8; EE.VMULAS.S8.ACCX 0x1A00C4 | qx << 8 | qy bits 0-1 << 11 | qy bit 2 << 14;
EE.ZERO.ACCX 0x250804; RUR.ACCX_0 0xE30000 | ar << 12; EE.VMULAS.S16.ACCX.LD.IP (the 32-bit
FLIX format, `data(4, word)`) asm_pie's S8 words with the opcode's slot bit 18 (word bit 17)
clear. Loop bodies start 4-byte aligned; conditional branches go backwards only. q0..q3 only
(the coprocessor state FreeRTOS saves: performance.md, the PIE backend).

Header, frame and work words (bytes) are asm_attend's, ps counting passes of 16 keys; the
work's areas (Q 16 bytes, K T rows of 16, V D rows of 32 ps, P 32 ps, scores) start at its
first 16-byte boundary past the GEOMETRY words. Over the ~350 lines a module is held to for
asm_attend's reason: one asm function, most lines one instruction.
"""

import micropython


@micropython.asm_xtensa
def attend(a2, a3, a4):
    s32i(a2, a1, 16)
    s32i(a3, a1, 20)
    s32i(a4, a1, 24)
    addi(a6, a3, 111)
    movi(a5, -16)
    and_(a6, a6, a5)  # the areas' base: the first 16-byte boundary past 24 words
    l32i(a5, a3, 8)
    add(a5, a5, a6)
    s32i(a5, a3, 32)  # Q
    l32i(a5, a3, 12)
    add(a5, a5, a6)
    s32i(a5, a3, 36)  # K
    l32i(a5, a3, 16)
    add(a5, a5, a6)
    s32i(a5, a3, 40)  # V
    l32i(a5, a3, 20)
    add(a5, a5, a6)
    s32i(a5, a3, 44)  # P
    l32i(a5, a3, 24)
    add(a5, a5, a6)
    s32i(a5, a3, 48)  # scores
    l32i(a6, a2, 80)
    movi_n(a5, 1)
    ssl(a6)
    sll(a5, a5)
    srai(a5, a5, 1)
    s32i(a5, a3, 56)  # the score multiplier's half
    l32i(a6, a2, 4)
    movi_n(a5, 1)
    ssl(a6)
    sll(a5, a5)
    srai(a5, a5, 1)
    s32i(a5, a3, 60)  # the context multiplier's half
    movi_n(a14, 0)
    s32i(a14, a1, 4)
    s32i(a14, a3, 64)
    s32i(a14, a3, 84)
    label(seq)
    movi_n(a14, 0)
    s32i(a14, a1, 8)
    s32i(a14, a3, 68)
    s32i(a14, a3, 72)
    s32i(a14, a3, 88)
    label(head)
    l32i(a14, a3, 68)  # heads left in the group: 0 widens the next K/V head
    j(widen_choose)
    # ---- K_h as int8 (k - 128): T rows of 16 bytes from K + b T E_kv + kv col
    label(widen)
    l32i(a13, a2, 112)  # E_kv
    l32i(a14, a2, 52)
    add(a5, a2, a14)
    l32i(a14, a3, 64)
    add(a5, a5, a14)
    l32i(a14, a3, 72)
    add(a5, a5, a14)
    l32i(a6, a3, 36)
    l32i(a8, a2, 108)  # T rows
    l32i(a9, a2, 44)  # D bytes a row
    movi(a4, 128)
    nop()
    label(krow)
    mov(a10, a5)
    mov(a11, a6)
    data(3, 0x0EA976)  # loopgtz a9, +15 bytes
    l8ui(a12, a10, 0)
    xor(a12, a12, a4)
    s8i(a12, a11, 0)
    addi(a10, a10, 1)
    addi(a11, a11, 1)
    add(a5, a5, a13)
    addi(a6, a6, 16)
    addi(a8, a8, -1)
    bnez(a8, krow)
    # ---- V_h^T widened negated (128 - v): D rows of T, from VT + b T E_kv + kv col T
    l32i(a14, a2, 56)
    add(a5, a2, a14)
    l32i(a14, a3, 64)
    add(a5, a5, a14)
    l32i(a9, a2, 108)
    l32i(a14, a3, 72)
    mull(a14, a14, a9)
    add(a5, a5, a14)  # row 0
    l32i(a6, a3, 40)
    l32i(a7, a3, 4)
    slli(a7, a7, 5)  # 32 ps: a widened row's bytes
    l32i(a8, a2, 44)  # D rows
    nop_n()
    label(vrow)
    mov(a15, a5)
    mov(a11, a6)
    data(3, 0x0EA976)  # loopgtz a9, +15 bytes
    l8ui(a12, a15, 0)
    sub(a12, a4, a12)
    s16i(a12, a11, 0)
    addi(a15, a15, 1)
    addi(a11, a11, 2)
    add(a5, a5, a9)
    add(a6, a6, a7)
    addi(a8, a8, -1)
    bnez(a8, vrow)
    l32i(a14, a2, 116)
    s32i(a14, a3, 68)  # heads left: the group
    j(widened)
    label(widen_choose)
    beqz(a14, widen)
    label(widened)
    # ---- the queries' source and context rows: + first E + col
    l32i(a13, a2, 48)  # E
    l32i(a14, a1, 4)
    mull(a14, a14, a13)
    l32i(a12, a1, 8)
    add(a14, a14, a12)
    l32i(a12, a2, 32)
    add(a12, a12, a2)
    add(a12, a12, a14)
    s32i(a12, a1, 12)
    l32i(a12, a2, 60)
    add(a12, a12, a2)
    add(a12, a12, a14)
    s32i(a12, a1, 28)
    l32i(a14, a2, 36)
    s32i(a14, a1, 32)
    # the first query's causal limit: offset + 1, or T when not causal; its bias row
    l32i(a14, a2, 120)
    addi(a14, a14, 1)
    l32i(a12, a2, 108)
    l32i(a15, a2, 72)
    data(3, 0x83ECF0)  # moveqz a14, a12, a15
    s32i(a14, a3, 76)
    l32i(a14, a2, 124)
    add(a14, a14, a2)
    l32i(a12, a3, 84)
    add(a14, a14, a12)
    l32i(a12, a3, 88)
    add(a14, a14, a12)
    s32i(a14, a3, 92)
    label(query)
    # n = min(max(limit, 0), T) keys pass the causal mask: keys 0 .. n - 1
    l32i(a14, a3, 76)
    addi(a15, a14, 1)
    s32i(a15, a3, 76)
    l32i(a15, a2, 108)
    data(3, 0x43EEF0)  # min a14, a14, a15
    movi_n(a15, 0)
    data(3, 0x53EEF0)  # max a14, a14, a15
    s32i(a14, a3, 80)
    # the query row (int8, D bytes; the rest of the 16 stay 0) into q0
    l32i(a5, a1, 12)
    l32i(a6, a3, 32)
    l32i(a9, a2, 44)
    nop_n()
    data(3, 0x0BA976)  # loopgtz a9, +12 bytes
    l8ui(a12, a5, 0)
    s8i(a12, a6, 0)
    addi(a5, a5, 1)
    addi(a6, a6, 1)
    l32i(a6, a3, 32)
    data(3, 0x830064)  # ee.vld.128.ip q0, a6, 0
    l32i(a4, a3, 36)  # K
    l32i(a7, a3, 48)  # scores
    movi_n(a10, 1)
    slli(a10, a10, 31)  # top = -2^31
    j(score_choose)
    label(no_keys)
    j(empty_row)
    label(score_choose)
    beqz(a14, no_keys)
    nop()
    # ---- scores of the n keys: one VMULAS.S8 of 16 MACs a key, their maximum
    data(3, 0x14AE76)  # loopgtz a14, +21 bytes
    data(3, 0x250804)  # ee.zero.accx
    data(3, 0x838144)  # ee.vld.128.ip q1, a4, 16
    data(3, 0x1A08C4)  # ee.vmulas.s8.accx q0, q1
    data(3, 0xE3F000)  # rur.accx_0 a15
    data(3, 0x53AAF0)  # max a10, a10, a15
    s32i(a15, a7, 0)
    addi(a7, a7, 4)
    # ---- the bias row added to the n scores, their maximum again
    l32i(a14, a2, 128)
    j(bias_choose)
    label(bias_add)
    l32i(a7, a3, 48)
    l32i(a6, a3, 92)
    movi_n(a10, 1)
    slli(a10, a10, 31)
    l32i(a14, a3, 80)
    data(3, 0x14AE76)  # loopgtz a14, +21 bytes
    l32i(a15, a7, 0)
    l32i(a11, a6, 0)
    add(a15, a15, a11)
    s32i(a15, a7, 0)
    data(3, 0x53AAF0)  # max a10, a10, a15
    addi(a7, a7, 4)
    addi(a6, a6, 4)
    j(biased)
    label(bias_choose)
    bnez(a14, bias_add)
    label(biased)
    # ---- e_j from the table into P, their total in a13
    l32i(a7, a3, 48)  # scores
    l32i(a6, a3, 44)  # P
    l32i(a4, a1, 24)  # table
    l32i(a5, a2, 88)  # cap
    l32i(a8, a2, 76)  # m
    l32i(a12, a2, 80)  # s
    l32i(a9, a3, 56)  # half
    l32i(a11, a2, 84)  # p
    movi_n(a13, 0)
    l32i(a14, a3, 80)
    j(exp_choose)
    nop_n()
    label(exp_shifted)  # p > 0
    data(3, 0x2CAE76)  # loopgtz a14, +45 bytes
    l32i(a14, a7, 0)
    sub(a14, a10, a14)
    data(3, 0x43EE50)  # min a14, a14, a5
    ssr(a11)
    sra(a14, a14)
    mull(a14, a14, a8)
    add(a14, a14, a9)
    ssr(a12)
    sra(a14, a14)
    addx2(a14, a14, a4)
    l16ui(a14, a14, 0)
    s16i(a14, a6, 0)
    add(a13, a13, a14)
    addi(a7, a7, 4)
    addi(a6, a6, 2)
    j(normalise)
    label(exp_plain)  # p = 0: one shift, set once
    ssr(a12)
    nop_n()
    data(3, 0x23AE76)  # loopgtz a14, +36 bytes
    l32i(a14, a7, 0)
    sub(a14, a10, a14)
    data(3, 0x43EE50)  # min a14, a14, a5
    mull(a14, a14, a8)
    add(a14, a14, a9)
    sra(a14, a14)
    addx2(a14, a14, a4)
    l16ui(a14, a14, 0)
    s16i(a14, a6, 0)
    add(a13, a13, a14)
    addi(a7, a7, 4)
    addi(a6, a6, 2)
    j(normalise)
    label(exp_choose)
    beqz(a11, exp_plain)
    j(exp_shifted)
    # ---- no key passes the masks: e_j = the header's empty value (2^15 or 0) for all T keys
    label(empty_row)
    l32i(a5, a2, 140)
    l32i(a14, a2, 108)
    l32i(a6, a3, 44)
    s32i(a14, a3, 80)  # T values to normalise
    data(3, 0x05AE76)  # loopgtz a14, +6 bytes
    s16i(a5, a6, 0)
    addi(a6, a6, 2)
    mull(a13, a5, a14)
    j(empty_choose)
    label(no_context)
    j(context)
    label(empty_choose)
    beqz(a13, no_context)  # P = 0: a row of zeros
    # ---- -inv = -((2^30 + total / 2) // total); -P_j = (-e_j inv + 2^14 - 1) >> 15
    label(normalise)
    srai(a14, a13, 1)
    movi(a15, 1)
    slli(a15, a15, 30)
    add(a14, a14, a15)
    data(3, 0xC2EED0)  # quou a14, a14, a13
    neg(a14, a14)
    l32i(a6, a3, 44)
    movi(a5, 16383)
    l32i(a7, a3, 80)
    data(3, 0x11A776)  # loopgtz a7, +18 bytes
    l16ui(a8, a6, 0)
    mull(a8, a8, a14)
    add(a8, a8, a5)
    srai(a8, a8, 15)
    s16i(a8, a6, 0)
    addi(a6, a6, 2)
    l32i(a8, a2, 108)
    sub(a8, a8, a7)
    movi_n(a9, 0)
    nop()
    data(3, 0x05A876)  # loopgtz a8, +6 bytes: P_j = 0 for the keys past n
    s16i(a9, a6, 0)
    addi(a6, a6, 2)
    # ---- the context row: D outputs, each (-P)(-V_d) on PIE, requantized
    label(context)
    l32i(a11, a1, 28)
    l32i(a15, a3, 44)  # P
    l32i(a4, a3, 40)  # V: its rows follow each other
    l32i(a6, a3, 4)  # ps
    l32i(a7, a2, 44)
    add(a7, a7, a11)  # the row's end
    l32i(a8, a2, 12)  # cap
    neg(a9, a8)
    l32i(a10, a2, 0)  # m
    l32i(a12, a2, 8)  # p
    l32i(a13, a2, 4)  # s
    l32i(a14, a3, 60)  # half
    data(3, 0x838144)  # ee.vld.128.ip q1, a4, 16: V block 0
    label(out)
    mov(a5, a15)
    data(3, 0x830154)  # ee.vld.128.ip q0, a5, 16: P block 0
    data(3, 0x250804)  # ee.zero.accx
    data(3, 0x0DA676)  # loopgtz a6, +14 bytes
    data(4, 0xF180015E)  # ee.vmulas.s16.accx.ld.ip q2, a5, 16, q0, q1
    data(3, 0x938144)  # ee.vld.128.ip q3, a4, 16
    data(4, 0xF080915E)  # ee.vmulas.s16.accx.ld.ip q0, a5, 16, q2, q3
    data(3, 0x838144)  # ee.vld.128.ip q1, a4, 16
    data(3, 0xE32000)  # rur.accx_0 a2
    data(3, 0x432280)  # min a2, a2, a8
    data(3, 0x532290)  # max a2, a2, a9
    ssr(a12)
    sra(a2, a2)
    mull(a2, a2, a10)
    add(a2, a2, a14)
    ssr(a13)
    sra(a2, a2)
    data(3, 0x332200)  # clamps a2, a2, 7
    s8i(a2, a11, 0)
    addi(a11, a11, 1)
    bne(a11, a7, out)
    l32i(a2, a1, 16)
    # ---- next query, head, sequence
    l32i(a14, a3, 92)
    l32i(a12, a2, 108)
    addx4(a14, a12, a14)
    s32i(a14, a3, 92)  # the next query's bias row
    l32i(a13, a2, 48)
    l32i(a14, a1, 12)
    add(a14, a14, a13)
    s32i(a14, a1, 12)
    l32i(a14, a1, 28)
    add(a14, a14, a13)
    s32i(a14, a1, 28)
    l32i(a14, a1, 32)
    addi(a14, a14, -1)
    s32i(a14, a1, 32)
    bnez(a14, query)
    l32i(a14, a1, 8)
    l32i(a12, a2, 44)
    add(a14, a14, a12)
    s32i(a14, a1, 8)
    l32i(a15, a3, 88)
    l32i(a11, a2, 136)
    addx4(a15, a11, a15)
    s32i(a15, a3, 88)  # the next head's bias block
    l32i(a15, a3, 68)
    addi(a15, a15, -1)
    s32i(a15, a3, 68)
    l32i(a11, a3, 72)
    add(a10, a11, a12)
    data(3, 0x83BAF0)  # moveqz a11, a10, a15: the group done, the next K/V head
    s32i(a11, a3, 72)
    sub(a14, a14, a13)
    bnez(a14, head)
    l32i(a15, a3, 64)
    l32i(a12, a2, 108)
    l32i(a11, a2, 112)
    mull(a12, a12, a11)
    add(a15, a15, a12)
    s32i(a15, a3, 64)  # the next sequence's K/V rows
    l32i(a15, a3, 84)
    l32i(a12, a2, 132)
    addx4(a15, a12, a15)
    s32i(a15, a3, 84)  # its bias blocks
    l32i(a14, a1, 4)
    l32i(a13, a2, 36)
    add(a14, a14, a13)
    s32i(a14, a1, 4)
    l32i(a13, a2, 28)
    sub(a14, a14, a13)
    bnez(a14, seq)
