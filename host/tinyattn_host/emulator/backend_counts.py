"""The int8 backends side by side on the emulated chip (issue 23): executed instructions per
MAC of each linear kernel's inner loop, and of the whole int8 Attention(64, 4) S = 64 forward
with each backend (tinyattn.int8.backend chosen in the emulator, its self-test run there),
the outputs bit for bit equal. For `make bench` (docs/performance.md).

The inner loop alone, exactly: with int32 outputs, rows r, depths d1 < d2, columns c1 < c2,
(I(d2, c2) - I(d1, c2)) - (I(d2, c1) - I(d1, c1)) is r (c2 - c1) (d2 - d1) MACs' worth of the
inner loop, everything else (the row's widening, each column's set-up) cancelling.
"""

import array
import random
import tempfile

from .device_glue import device_package
from .kernel_runs import attention_layer, attention_runs, loop_alone_run

HEADING = "## The int8 backends on the emulated chip: viper and MAC16"
ROWS, DEPTHS, COLS = 4, (64, 72), (16, 32)


def choose_backend(ta, name, folder):
    """Make `name` ("viper", "mac16" or "pie") the backend of the device package `ta`."""
    from tinyattn.int8 import backend, backend_choice as choice

    backend.reset()
    if name == "viper":
        backend._chosen = ("viper", "as asked", None)
    else:  # the real choice, with the emulated chip's facts: xtensawin, inline assembler
        fast = {"mac16": choice.Mac16, "pie": choice.Pie}[name]
        backend._chosen = choice.choose(fast, xtensawin=lambda: True, folder=folder)
    return backend._chosen[0]


def fast_loop_per_mac(emu, rng, name="mac16", depths=DEPTHS):
    """Instructions per MAC of the inner loop of fast kernel `name` (the double difference;
    depths a whole number of the kernel's passes apart)."""
    from tinyattn.int8 import backend_choice as choice, kernels as K

    kernel = {"mac16": choice.Mac16, "pie": choice.Pie}[name]()
    count = {}
    for d in depths:
        for c in COLS:
            w = bytearray(rng.randrange(256) for _ in range(c * d))
            x = array.array("b", bytes(rng.randrange(256) for _ in range(ROWS * d)))
            h = K.linear_header(c, d)
            K.bind_linear(h, w, ROWS, x, array.array("i", bytes(4 * ROWS * c)))
            kernel.linear(h, kernel.operands(w, c, d))
            count[d, c] = emu.calls[-1].instructions
    (d1, d2), (c1, c2) = depths, COLS
    extra = (count[d2, c2] - count[d1, c2]) - (count[d2, c1] - count[d1, c1])
    return extra / (ROWS * (c2 - c1) * (d2 - d1))


def forward(emu, ta, name, folder, seed=22):
    """(backend chosen, per-call Runs, output bytes) of attention_layer's forward."""
    chosen = choose_backend(ta, name, folder)
    layer, _ = attention_layer(random.Random(seed))  # planned with the chosen kernels
    runs = attention_runs(emu, ta, None, layer)
    return chosen, runs, bytes(layer.out)


def measure(emu, seed=22, fast="mac16", depths=DEPTHS):
    """{"loop": {backend: instr/MAC}, "forward": {backend: (runs, out)}} of viper and the
    fast backend `fast` ("mac16", or "pie" on the S3 with depths whole passes apart)."""
    rng = random.Random(seed)
    with device_package(emu) as ta, tempfile.TemporaryDirectory() as tmp:
        from tinyattn.int8 import kernels

        ta.kernels = kernels
        result = {"loop": {"viper": loop_alone_run(emu, ta, rng).per_unit,
                           fast: fast_loop_per_mac(emu, rng, fast, depths)}, "forward": {}}
        for name in ("viper", fast):
            chosen, runs, out = forward(emu, ta, name, tmp + "/", seed)
            if chosen != name:
                raise AssertionError("backend %s was asked for, %s chosen" % (name, chosen))
            result["forward"][name] = (runs, out)
        choose_backend(ta, "viper", tmp + "/")
    return result


TABLE = ["| backend | inner loop instr/MAC (measured) | Attention(64, 4) S = 64 forward: "
         "kernel instructions | of which linear | attention core | forward instr/MAC |",
         "|---|---:|---:|---:|---:|---:|"]


def table(m, fast, loop_format="%.2f"):
    """The table's lines of measure()'s result, viper's row and `fast`'s; raises when the
    two forwards' bytes differ."""
    if m["forward"]["viper"][1] != m["forward"][fast][1]:
        raise AssertionError("the %s forward differs from the viper one" % fast)
    macs = sum(r.units for r in m["forward"]["viper"][0])
    lines = list(TABLE)
    for name in ("viper", fast):
        runs = m["forward"][name][0]
        total, linear, core = split(runs)
        lines.append(("| %s | " + loop_format + " | %d | %d | %d | %.2f |") % (
            name, m["loop"][name], total, linear, core, total / macs))
    return lines


def split(runs):
    """(the whole forward, its four projections, its attention core): the instructions of a
    forward's kernel calls (the core is the fourth call)."""
    total, core = sum(r.instructions for r in runs), runs[3].instructions
    return total, total - core, core


def section(emu):
    m = measure(emu)
    vr, mr = m["forward"]["viper"][0], m["forward"]["mac16"][0]
    lines = [HEADING, "",
             "Written by `make bench` (tinyattn_host.emulator.backend_counts), exact counts "
             "(ICOUNT) in Debian's qemu-system-xtensa, dc233c core, which has MAC16 and LOOP "
             "as the ESP32-S3 has. MAC16 is `device/tinyattn/int8/asm_mac16.py` (the "
             "projections) and `asm_attend.py` (the attention core: scores, softmax, P V), "
             "chosen by `tinyattn.int8.backend` after their self-test against viper (run in "
             "the emulator). Both forwards give the same bytes.", ""] + table(m, "mac16")
    (vt, vl, vc), (mt, ml, mc) = split(vr), split(mr)
    lines += ["", "With MAC16 the four projections run %.1fx fewer instructions, the attention "
              "core %.1fx fewer (%.2f instructions a MAC, softmax included), the whole "
              "forward %.1fx fewer. Calls with a padding (keep) mask or a trace keep "
              "the viper attention core." % (vl / ml, vc / mc, mc / vr[3].units, vt / mt),
              "", "Cycle estimate (a model, not a measurement): MAC16's inner loop is four "
              "MULA.DD.*.LDINC a pass of 4 MACs, each loaded register used two instructions "
              "later (no load-use stall at a 2-cycle load latency) and LOOPGTZ has no branch: "
              "1 cycle an instruction gives ~1 cycle/MAC inside, and ~%d cycles for the four "
              "projections (executed instructions at 1 cycle each, stalls outside the loop not "
              "counted: a lower bound), ~%.1f ms at 240 MHz, against viper's ~17.9 cycles/MAC "
              "(chipcost's estimate); the same model gives the MAC16 attention core ~%d cycles "
              "(~%.1f ms). PIE (EE.VMULAS.S8.ACCX) needs an emulator with an ESP32-S3 core: "
              "see the section on the PIE backend." % (ml, ml / 240e3, mc, mc / 240e3), ""]
    return "\n".join(lines)


def bench_section(doc):
    """For `make bench`: the section, also written into `doc`; or one line saying why not."""
    from ..chipcost.chipcost import ChipCostError
    from .counts import write_section
    from .machine import Emulator
    from .qemu import EmulatorError, missing_reason

    if missing_reason():
        return "backends: not run: %s" % missing_reason()
    try:
        with Emulator() as emu:
            text = section(emu)
    except (EmulatorError, ChipCostError) as err:
        return "backends: not run: %s" % err
    write_section(doc, text, HEADING)
    return text
