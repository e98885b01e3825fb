"""Executed instructions per MAC of every int8 kernel on the emulated chip, beside
tinyattn_host.chipcost's static estimate, as markdown (for `make emulate` and `make bench`).

Measured (exact, xtensa_cpu's ICOUNT): the instructions the kernel's own xtensawin code
executes in one call (kernel_runs.py's shapes and seeded data), divided by its MACs (or
items). Estimated (chipcost, from the disassembly; not measured): the instructions of the
8-way inner loop per MAC and its cycles per MAC under chipcost's pipeline model.
"""

import re
from pathlib import Path

from ..chipcost import chipcost
from ..locations import DEVICE_DIR
from .kernel_runs import representative_runs
from .machine import Emulator
from .qemu import EmulatorError, missing_reason

SOURCES = ("kernels.py", "kernels_attend.py", "kernels_norm.py",  # in device/tinyattn/int8
           "kernels_pool.py")
HEADING = "## The int8 kernels on the emulated chip (xtensawin code in qemu-system-xtensa)"
CANNOT_TELL = (  # docs/chip.md says the same at more length
    "What the emulator does not tell: cycles (QEMU executes instructions, it models no "
    "pipeline, no load-use stall, no branch penalty: the cycle figures are chipcost's "
    "estimate), the ESP32-S3's own core (an LX7; the emulated dc233c is an LX4 that has every"
    " instruction this code uses: base ISA, density, windowed registers, MUL32; and LOOP, "
    "MAC16 and DIV32 as the S3 has, but not its PIE vector instructions), memory wait states "
    "(PSRAM latency and the flash cache: every load here takes the same time), interrupts, "
    "and the C runtime the kernels call (mp_fun_table's argument conversion, emulated in "
    "Python and not counted; the int division stubs' instructions are subtracted). Unaligned "
    "16- and 32-bit loads and stores fault on the dc233c (a fault stops the run and names "
    "itself); the S3 does them in hardware, slower: none happens in these kernels.")


def static_estimates():
    """{function: (instructions per MAC, cycles per MAC)} of each function's 8-way loop."""
    best = {}
    for name in SOURCES:
        for lp in chipcost.kernel_loops(DEVICE_DIR / "tinyattn" / "int8" / name):
            if lp.macs and (lp.function not in best or lp.macs > best[lp.function][0]):
                best[lp.function] = (lp.macs, lp.instructions_per_mac, lp.cycles_per_mac)
    return {f: v[1:] for f, v in best.items()}


def markdown_table(runs, estimates):
    rows = ["| kernel | call | MACs / items | executed instructions | per MAC (item) | "
            "static inner loop instr/MAC (chipcost) | cycles/MAC, estimated (chipcost) |",
            "|---|---|---:|---:|---:|---:|---:|"]
    for r in runs:
        instr, cycles = estimates.get(r.kernel, (None, None)) if r.unit == "MAC" else (None,
                                                                                        None)
        rows.append("| %s | %s | %d %ss | %d | %.2f | %s | %s |" % (
            r.kernel, r.call, r.units, r.unit, r.instructions, r.per_unit,
            "-" if instr is None else "%g" % instr, "-" if cycles is None else "~%g" % cycles))
    return "\n".join(rows)


def section(emu):
    """The markdown section: how it is measured, the table, what it cannot tell."""
    attention, others = representative_runs(emu)
    total = sum(r.instructions for r in attention)
    return "\n".join([
        HEADING, "",
        "Written by `make emulate` and `make bench` (`python -m tinyattn_host "
        "emulate --doc`). The machine code is what mpy-cross emits for `-march=xtensawin` (what "
        "`make deploy` ships to an ESP32-S3), run in Debian's qemu-system-xtensa on its "
        "dc233c core; executed instructions are counted exactly by the core's ICOUNT "
        "register (tinyattn_host.emulator.xtensa_cpu). Shapes: Attention(64, 4) on one "
        "sequence of S = 64 (tinyattn_host.emulator.kernel_runs), seeded random int8 data.",
        "", markdown_table(attention + others, static_estimates()), "",
        "The int8 Attention(64, 4) forward on S = 64 (its five kernel calls, the first five "
        "rows): %d instructions of kernel code, %.2f per MAC of its %d." % (
            total, total / sum(r.units for r in attention), sum(r.units for r in attention)),
        "", CANNOT_TELL, ""])


def write_section(doc, text, heading=HEADING):
    """Put the section into the page `doc`: in place of an older one, else at the end;
    the rest kept as it is."""
    doc = Path(doc)
    old = doc.read_text() if doc.exists() else ""
    parts = re.split(r"(?m)^(?=## )", old)
    at = [i for i, p in enumerate(parts) if p.startswith(heading)]
    if not at:
        doc.write_text(old.rstrip("\n") + "\n\n" + text)
        return
    kept = [p for i, p in enumerate(parts) if i not in at[1:]]
    kept[at[0]] = text.rstrip("\n") + "\n\n" if at[0] < len(kept) - 1 else text
    doc.write_text("".join(kept))


def run_section(doc=None):
    """Start an emulator, make the section (and write it into `doc`); raises EmulatorError
    (or ChipCostError) with one line when it cannot."""
    missing = missing_reason()
    if missing:
        raise EmulatorError(missing)
    with Emulator() as emu:
        text = section(emu)
    if doc:
        write_section(doc, text)
    return text


def bench_section(doc):
    """For `make bench`: the section, also written into `doc`; or one line saying why not."""
    try:
        return run_section(doc)
    except (EmulatorError, chipcost.ChipCostError) as err:
        return "emulator: not run: %s" % err
