"""The PIE backend on Espressif's emulated ESP32-S3 (QEMU_XTENSA_S3, s3.py): executed
instructions per MAC of asm_pie.linear's inner loop, and the int8 Attention(64, 4) S = 64
forward with the PIE (projections and attention core) and the viper backends on that same
machine, bit for bit equal.

    python -m tinyattn_host emulate-pie [--doc docs/performance.md]
"""

import sys

from . import backend_counts

HEADING = "## The PIE backend on the emulated ESP32-S3"
NOTES = [
    "To run it: build Espressif's QEMU fork (espressif/qemu) for `xtensa-softmmu` yourself "
    "(this repository holds no recipe for it), check that `qemu-system-xtensa -M help` lists "
    "`esp32s3`, then `export QEMU_XTENSA_S3=/path/to/that/qemu-system-xtensa` and run "
    "`.venv/bin/python -m pytest -p no:xdist tests/emulator/test_pie.py "
    "tests/emulator/test_pie_attend.py` (the 40 linear configurations and worst cases of the "
    "board cases, extreme int8 values at depths 1, 15, 17, 31, 33, 100 and 4096, the inner "
    "loop's count; the attention core on the board cases' and the grouped-query, bias and "
    "causal-offset configurations against the reference, 15 shapes against viper) and this "
    "command. Without QEMU_XTENSA_S3 the tests skip with one line.",
    "",
    "Why nothing saturates (the ISA saturates the 40-bit ACCX, and Espressif's QEMU has "
    "saturation bugs, espressif/qemu issues 161, 165 and 166): the kernel only uses "
    "EE.VMULAS.S8.ACCX, whose 16 products of int8 lanes are at most 128 x 128 = 2^14 each, "
    "so after K items |ACCX| <= K 2^14 <= 2^29 (K <= 32768, checked by linear_header), far "
    "inside 2^39; no per-lane QACC accumulator is used.",
    "",
    "PIE under FreeRTOS on the board (esp-idf's Xtensa port, "
    "components/freertos/FreeRTOS-Kernel/portable/xtensa: xtensa_vectors.S and portasm.S; "
    "components/xtensa/esp32s3/include/xtensa/config/tie.h): PIE is coprocessor 3 "
    "(`cop_ai`; XCHAL_CP_MASK 0x09 is it and the FPU, coprocessor 0), its state ACCX, QACC "
    "and the q registers (tie.h's XCHAL_CP3_SA_LIST, 144 bytes; the list ends at q5, so the "
    "kernel uses q0..q3 only). A task switch saves no coprocessor state: vPortYield clears "
    "CPENABLE and the task's saved CPENABLE. A task's first PIE instruction then raises the "
    "Coprocessor3Disabled exception (EXCCAUSE 35), which the user exception vector sends to "
    "`_xt_coproc_exc`: it sets CPENABLE bit 3, makes the task the owner of coprocessor 3 on "
    "its core (`_xt_coproc_owner_sa`), stores the previous owner's state into that task's "
    "save area if it was using it (`xchal_cpi_store_funcbody`, marked in its CPSTORED), "
    "loads the new owner's state if it had been stored, and returns to rerun the "
    "instruction. So the state is saved lazily, only when another task uses PIE; "
    "coprocessor instructions are for task code only (in an interrupt they panic). "
    "MicroPython's code runs in its own task, so a kernel call costs at most one such "
    "exception. Espressif's QEMU does not model this: its PIE instructions declare no "
    "coprocessor (translate_tie_esp32s3.c) and run with CPENABLE clear.",
    "",
]
PIE_DEPTHS = (64, 128)  # whole passes of 32 items apart


def measure(emu, seed=22):
    """backend_counts.measure of viper and PIE on the S3."""
    return backend_counts.measure(emu, seed, "pie", PIE_DEPTHS)


def section(emu, m=None):
    """The markdown section of measure()'s result `m` (measured here when None)."""
    m = m or measure(emu)
    vr, pr = m["forward"]["viper"][0], m["forward"]["pie"][0]
    lines = [HEADING, "",
             "Written by `python -m tinyattn_host emulate-pie --doc docs/performance.md` "
             "(tinyattn_host.emulator.pie_counts), exact counts (ICOUNT) on `-M esp32s3 -cpu "
             "esp32s3` of the QEMU named by QEMU_XTENSA_S3 (Espressif's fork, the user's own "
             "build). PIE is `device/tinyattn/int8/asm_pie.py` (the projections) and "
             "`asm_pie_attend.py` (the attention core, heads of D <= 16: EE.VMULAS.S8.ACCX "
             "scores, EE.VMULAS.S16.ACCX P V; MAC16's `asm_attend.py` for larger heads), "
             "chosen by "
             "`tinyattn.int8.backend` after its self-test against viper (run in the emulator); "
             "both forwards give the same bytes. mp_fun_table's entries are answered in "
             "Python here and not counted.", ""] + NOTES + backend_counts.table(m, "pie", "%.3f")
    (vt, vl, vc), (pt, pl, pc) = backend_counts.split(vr), backend_counts.split(pr)
    lines += ["", "With PIE the four projections run %.1fx fewer instructions (%.1f MACs an "
              "instruction in its inner loop), the attention core (asm_pie_attend) %.1fx "
              "fewer, the whole forward %.1fx fewer." % (
                  vl / pl, 1 / m["loop"]["pie"], vc / pc, vt / pt),
              "",
              "Cycle estimate (a model, not a measurement): one cycle an executed instruction; "
              "no stall counted (a q register loaded by EE.VLD.128.IP is used by the very next "
              "VMULAS, a load-use stall if the load takes 2 cycles), so a lower "
              "bound: ~%d cycles for the four projections (~%.1f ms at 240 MHz), ~%d for the "
              "whole forward (~%.1f ms), %.1f MACs a cycle in the projections' inner loop "
              "against the PIE peak of 16 (ESP-DL reports 2 to 3.5 on real layers)." % (
                  pl, pl / 240e3, pt, pt / 240e3, 1 / m["loop"]["pie"]), ""]
    return "\n".join(lines)


def bench_section(doc):
    """make bench's PIE part: the section written into `doc` when QEMU_XTENSA_S3 names an
    emulator, else one line saying why it is left out."""
    from . import s3
    from .counts import write_section
    from .machine import Emulator

    if s3.missing_reason():
        return "PIE section left as it is: " + s3.missing_reason()
    with Emulator(s3=True) as emu:
        text = section(emu)
    write_section(doc, text, HEADING)
    return text


def pie_command(args):
    """python -m tinyattn_host emulate-pie [--doc PAGE]: print the section (and write it
    into PAGE); without QEMU_XTENSA_S3, one line saying so."""
    from . import s3
    from .counts import write_section
    from .machine import Emulator
    from .qemu import EmulatorError

    if s3.missing_reason():
        raise EmulatorError(s3.missing_reason())
    with Emulator(s3=True) as emu:
        text = section(emu)
    print(text)
    if args.doc:
        write_section(args.doc, text, HEADING)
        print("wrote %s" % args.doc, file=sys.stderr)
