"""The int8 attention core (kernels_attend._attend without keep mask or trace) on the Xtensa
core's MAC16 unit and zero-overhead loops: @micropython.asm_xtensa for -march=xtensawin only,
deployed and chosen as asm_mac16.py is (int8/backend.py).

attend(header, work, table): a header of kernels_attend bound by bind_attend (set_keep without
keep bytes, set_bias), the work buffer of T keys and exp table of attend_layout. Per sequence
and K/V head (once for its group of H / H_kv query heads) it widens K_h and V_h^T to int16,
per query: n = min(max(i + offset + 1, 0), T) keys pass the causal mask (T when not causal),
the scores of keys 0 .. n - 1 (each key a dot product on MAC16; for D = 16 the query row sits
in 8 address registers and one LOOP over the keys runs 16 MULA.DA a key), the bias row added,
their maximum, e_j from the table at ((min(top - v_j, cap) >> p) m + half) >> s,
inv = (2^30 + total / 2) // total (QUOU), -P_j = (-e_j inv + 2^14 - 1) >> 15 (P_j can be 2^15:
int16 holds it only negated, so V is widened negated too), P_j = 0 past n, then each output's
(-P)(-V) dot product (MULA.DD), clamped to the context multiplier's cap, requantized and
saturated (CLAMPS). A query with n = 0 takes the header's empty value for every key (uniform,
or zeros: no division). The viper kernel's integer steps, bit for bit (tests/emulator).

As in asm_mac16: LOOP, MAC16, MIN/MAX, MOVEQZ, SEXT, EXTUI, CLAMPS, QUOU and special registers
are `data(3, word)` (each line names its instruction); loop bodies start 4-byte aligned (the
nops sit outside the loops); conditional branches go backwards only.

Header (bytes): m 0, s 4, p 8, cap 12, rows 28, q 32, S 36, D 44, E 48, k 52, vt 56, ctx 60,
causal 72, score multiplier 76..88, T 108, E_kv 112, group 116, causal offset 120, bias 124,
use bias 128, bias items a sequence 132 and a head 136, empty 140. Work words (bytes): pd 0,
ps 4, offsets 8..24; filled in here: Q 32, K - 4 36, V - 4 40, P 44, scores 48, scores end
52, the two rounding halves 56, 60, K/V rows of the sequence 64, heads left in the group 68,
K/V head column 72, causal limit of the next query 76, n 80, bias of the sequence 84 and of
the head 88, the next query's bias row 92.
Frame: +4 sequence's first row, +8 head column, +12 query source, +16 header, +20 work,
+24 table, +28 context row, +32 queries left.

Over the ~350 lines a module is held to, and it must stay whole: it is one asm function (an
asm_xtensa function cannot call another one without a call frame and the register window
rotating under it), most of its lines one instruction each. Its runs that repeat (the query
row's eight register pairs, each widened alike) are written out: a register is not named by
a loop index, and the inline assembler has no macro.
"""

import micropython


@micropython.asm_xtensa
def attend(a2, a3, a4):
    s32i(a2, a1, 16)
    s32i(a3, a1, 20)
    s32i(a4, a1, 24)
    l32i(a5, a3, 8)
    add(a5, a5, a3)
    s32i(a5, a3, 32)  # Q
    l32i(a5, a3, 12)
    add(a5, a5, a3)
    addi(a5, a5, -4)
    s32i(a5, a3, 36)  # K - 4: LDINC adds 4 first
    l32i(a5, a3, 16)
    add(a5, a5, a3)
    addi(a5, a5, -4)
    s32i(a5, a3, 40)  # V - 4
    l32i(a5, a3, 20)
    add(a5, a5, a3)
    s32i(a5, a3, 44)  # P
    l32i(a5, a3, 24)
    add(a5, a5, a3)
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
    # ---- K_h widened (k - 128): T rows of D from K + b T E_kv + kv col, two items a pass
    label(widen)
    l32i(a13, a2, 112)  # E_kv
    l32i(a14, a2, 52)
    add(a5, a2, a14)
    l32i(a14, a3, 64)
    add(a5, a5, a14)
    l32i(a14, a3, 72)
    add(a5, a5, a14)
    l32i(a6, a3, 36)
    addi(a6, a6, 4)
    l32i(a7, a3, 0)
    slli(a7, a7, 3)  # 8 pd: a widened row's bytes
    l32i(a8, a2, 108)  # T rows
    l32i(a9, a2, 44)
    addi(a9, a9, 1)
    srli(a9, a9, 1)  # passes of a row
    nop_n()  # here and below: the loop bodies start 4-byte aligned
    label(krow)
    mov(a10, a5)
    mov(a11, a6)
    data(3, 0x17A976)  # loopgtz a9, +24 bytes
    l8ui(a12, a10, 0)
    l8ui(a15, a10, 1)
    addi(a12, a12, -128)
    addi(a15, a15, -128)
    s16i(a12, a11, 0)
    s16i(a15, a11, 2)
    addi(a10, a10, 2)
    addi(a11, a11, 4)
    add(a5, a5, a13)
    add(a6, a6, a7)
    addi(a8, a8, -1)
    bnez(a8, krow)
    # ---- V_h^T widened negated (128 - v): D rows of T, contiguous from VT + b T E_kv + kv col T
    l32i(a14, a2, 56)
    add(a5, a2, a14)
    l32i(a14, a3, 64)
    add(a5, a5, a14)
    l32i(a9, a2, 108)
    l32i(a14, a3, 72)
    mull(a14, a14, a9)
    add(a5, a5, a14)  # row 0
    mov(a10, a9)  # T: the source row stride
    addi(a9, a9, 1)
    srli(a9, a9, 1)  # passes of a row
    l32i(a6, a3, 40)
    addi(a6, a6, 4)
    l32i(a7, a3, 4)
    slli(a7, a7, 3)  # 8 ps
    l32i(a8, a2, 44)  # D rows
    movi(a4, 128)
    nop()
    label(vrow)
    mov(a15, a5)
    mov(a11, a6)
    data(3, 0x17A976)  # loopgtz a9, +24 bytes
    l8ui(a12, a15, 0)
    l8ui(a14, a15, 1)
    sub(a12, a4, a12)
    sub(a14, a4, a14)
    s16i(a12, a11, 0)
    s16i(a14, a11, 2)
    addi(a15, a15, 2)
    addi(a11, a11, 4)
    add(a5, a5, a10)
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
    l32i(a15, a3, 48)
    addx4(a15, a14, a15)
    s32i(a15, a3, 52)  # scores end
    l32i(a4, a3, 36)  # K - 4
    l32i(a7, a3, 48)  # scores
    movi_n(a10, 1)
    slli(a10, a10, 31)  # top = -2^31
    l32i(a9, a2, 44)
    addi(a14, a9, -16)
    j(score_choose)
    # ---- scores, any D: the query row widened in memory, each key a LOOPGTZ of pd passes
    label(score_any)
    l32i(a5, a1, 12)
    l32i(a6, a3, 32)
    movi(a13, 128)
    data(3, 0x11A976)  # loopgtz a9, +18 bytes
    l8ui(a12, a5, 0)
    addi(a5, a5, 1)
    xor(a12, a12, a13)
    addi(a12, a12, -128)
    s16i(a12, a6, 0)
    addi(a6, a6, 2)
    l32i(a15, a3, 32)
    addi(a15, a15, -4)  # Q - 4
    l32i(a6, a3, 0)  # pd
    l32i(a8, a3, 52)  # scores end
    movi_n(a9, 0)
    data(3, 0x802404)  # ldinc m2, a4: K word 0
    nop_n()
    label(score)
    mov(a5, a15)
    data(3, 0x800504)  # ldinc m0, a5: Q word 0
    data(3, 0x131090)  # wsr a9, acclo
    data(3, 0x0BA676)  # loopgtz a6, +12 bytes
    data(3, 0x081504)  # mula.dd.ll.ldinc m1, a5, m0, m2
    data(3, 0x0B3404)  # mula.dd.hh.ldinc m3, a4, m0, m2
    data(3, 0x084544)  # mula.dd.ll.ldinc m0, a5, m1, m3
    data(3, 0x0B6444)  # mula.dd.hh.ldinc m2, a4, m1, m3
    data(3, 0x0310B0)  # rsr a11, acclo
    data(3, 0x53AAB0)  # max a10, a10, a11
    s32i(a11, a7, 0)
    addi(a7, a7, 4)
    bne(a7, a8, score)
    j(scored)
    # ---- scores, D = 16: the query row as int16 pairs in a5..a12, one LOOP over the keys
    label(score_16)
    l32i(a13, a1, 12)
    # pairs: (sext(q[2n + 1]) << 16) | (sext(q[2n]) & 0xFFFF)
    l8ui(a14, a13, 0)
    l8ui(a15, a13, 1)
    data(3, 0x23EE00)  # sext a14, a14, 7
    data(3, 0x23FF00)  # sext a15, a15, 7
    data(3, 0xF4E0E0)  # extui a14, a14, 0, 16
    slli(a15, a15, 16)
    or_(a5, a14, a15)
    l8ui(a14, a13, 2)
    l8ui(a15, a13, 3)
    data(3, 0x23EE00)  # sext a14, a14, 7
    data(3, 0x23FF00)  # sext a15, a15, 7
    data(3, 0xF4E0E0)  # extui a14, a14, 0, 16
    slli(a15, a15, 16)
    or_(a6, a14, a15)
    l8ui(a14, a13, 4)
    l8ui(a15, a13, 5)
    data(3, 0x23EE00)  # sext a14, a14, 7
    data(3, 0x23FF00)  # sext a15, a15, 7
    data(3, 0xF4E0E0)  # extui a14, a14, 0, 16
    slli(a15, a15, 16)
    or_(a7, a14, a15)
    l8ui(a14, a13, 6)
    l8ui(a15, a13, 7)
    data(3, 0x23EE00)  # sext a14, a14, 7
    data(3, 0x23FF00)  # sext a15, a15, 7
    data(3, 0xF4E0E0)  # extui a14, a14, 0, 16
    slli(a15, a15, 16)
    or_(a8, a14, a15)
    l8ui(a14, a13, 8)
    l8ui(a15, a13, 9)
    data(3, 0x23EE00)  # sext a14, a14, 7
    data(3, 0x23FF00)  # sext a15, a15, 7
    data(3, 0xF4E0E0)  # extui a14, a14, 0, 16
    slli(a15, a15, 16)
    or_(a9, a14, a15)
    l8ui(a14, a13, 10)
    l8ui(a15, a13, 11)
    data(3, 0x23EE00)  # sext a14, a14, 7
    data(3, 0x23FF00)  # sext a15, a15, 7
    data(3, 0xF4E0E0)  # extui a14, a14, 0, 16
    slli(a15, a15, 16)
    or_(a10, a14, a15)
    l8ui(a14, a13, 12)
    l8ui(a15, a13, 13)
    data(3, 0x23EE00)  # sext a14, a14, 7
    data(3, 0x23FF00)  # sext a15, a15, 7
    data(3, 0xF4E0E0)  # extui a14, a14, 0, 16
    slli(a15, a15, 16)
    or_(a11, a14, a15)
    l8ui(a14, a13, 14)
    l8ui(a15, a13, 15)
    data(3, 0x23EE00)  # sext a14, a14, 7
    data(3, 0x23FF00)  # sext a15, a15, 7
    data(3, 0xF4E0E0)  # extui a14, a14, 0, 16
    slli(a15, a15, 16)
    or_(a12, a14, a15)
    l32i(a13, a3, 48)  # scores
    data(3, 0x800404)  # ldinc m0, a4: K word 0
    movi_n(a14, 1)
    slli(a14, a14, 31)  # top = -2^31
    l32i(a2, a3, 80)  # n keys
    movi_n(a3, 0)
    data(3, 0x3EA276)  # loopgtz a2, +63 bytes
    data(3, 0x131030)  # wsr a3, acclo
    data(3, 0x481454)  # mula.da.ll.ldinc m1, a4, m0, a5
    data(3, 0x6B0054)  # mula.da.hh m0, a5
    data(3, 0x484464)  # mula.da.ll.ldinc m0, a4, m1, a6
    data(3, 0x6B4064)  # mula.da.hh m1, a6
    data(3, 0x481474)  # mula.da.ll.ldinc m1, a4, m0, a7
    data(3, 0x6B0074)  # mula.da.hh m0, a7
    data(3, 0x484484)  # mula.da.ll.ldinc m0, a4, m1, a8
    data(3, 0x6B4084)  # mula.da.hh m1, a8
    data(3, 0x481494)  # mula.da.ll.ldinc m1, a4, m0, a9
    data(3, 0x6B0094)  # mula.da.hh m0, a9
    data(3, 0x4844A4)  # mula.da.ll.ldinc m0, a4, m1, a10
    data(3, 0x6B40A4)  # mula.da.hh m1, a10
    data(3, 0x4814B4)  # mula.da.ll.ldinc m1, a4, m0, a11
    data(3, 0x6B00B4)  # mula.da.hh m0, a11
    data(3, 0x4844C4)  # mula.da.ll.ldinc m0, a4, m1, a12
    data(3, 0x6B40C4)  # mula.da.hh m1, a12
    data(3, 0x0310F0)  # rsr a15, acclo
    data(3, 0x53EEF0)  # max a14, a14, a15
    s32i(a15, a13, 0)
    addi(a13, a13, 4)
    l32i(a2, a1, 16)
    l32i(a3, a1, 20)
    mov(a10, a14)
    j(scored)
    label(no_keys)
    j(empty_row)
    label(score_choose)
    l32i(a15, a3, 80)
    beqz(a15, no_keys)
    beqz(a14, score_16)
    j(score_any)
    label(scored)
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
    nop()
    nop()
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
    # ---- the context row: D outputs, each (-P)(-V_d) requantized
    label(context)
    l32i(a11, a1, 28)
    l32i(a15, a3, 44)
    addi(a15, a15, -4)  # P - 4
    l32i(a4, a3, 40)
    data(3, 0x802404)  # ldinc m2, a4: V word 0
    l32i(a6, a3, 4)  # ps
    l32i(a7, a2, 44)
    add(a7, a7, a11)  # the row's end
    l32i(a8, a2, 12)  # cap
    neg(a9, a8)
    l32i(a10, a2, 0)  # m
    l32i(a12, a2, 8)  # p
    l32i(a13, a2, 4)  # s
    l32i(a14, a3, 60)  # half
    movi_n(a3, 0)
    nop()
    label(out)
    mov(a5, a15)
    data(3, 0x800504)  # ldinc m0, a5: P word 0
    data(3, 0x131030)  # wsr a3, acclo
    data(3, 0x0BA676)  # loopgtz a6, +12 bytes
    data(3, 0x081504)  # mula.dd.ll.ldinc m1, a5, m0, m2
    data(3, 0x0B3404)  # mula.dd.hh.ldinc m3, a4, m0, m2
    data(3, 0x084544)  # mula.dd.ll.ldinc m0, a5, m1, m3
    data(3, 0x0B6444)  # mula.dd.hh.ldinc m2, a4, m1, m3
    data(3, 0x031020)  # rsr a2, acclo
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
    l32i(a3, a1, 20)
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
