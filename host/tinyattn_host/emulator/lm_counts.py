"""The int8 language model's token on the emulated chip (issue 36): executed instructions per
token, per kernel, at a few positions, with each backend, and a chip estimate from them.

The model is llama2.c's stories260K shape (bench/plan.py's decoder_config, the one `make
bench` times on the unix ports; seeded weights, digits.init_params), quantized by the host on
its first CAPACITY token ids, loaded by the device's own glue (device_glue.py) and stepped by
tinyattn.lm.generate.step, every kernel call the chip's machine code. Each position's int32
logits are checked bit for bit against the integer reference (reference/int8_decoder.py).

Backends: viper and MAC16 on Debian's qemu-system-xtensa (dc233c), PIE on Espressif's
ESP32-S3 (QEMU_XTENSA_S3). Estimate (chipcost's cycle model, not a measurement): a viper
kernel's instructions at the cycles per instruction of its costliest innermost loop
(chipcost.kernel_loops: load-use and multiply-use stalls, taken branches), an assembler
kernel's at 1 (backend_counts and pie_counts: no stall in their loops; a lower bound).
"""

import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from ..chipcost import chipcost
from ..chipcost.xtensa_loops import TAKEN_BRANCH_CYCLES
from ..device_modules import device_module
from ..locations import DEVICE_DIR
from .backend_counts import choose_backend
from .device_glue import device_package

HEADING = "## The int8 language model on the emulated chip: a token's instructions"
CAPACITY, POSITIONS, WHOLE = 32, (0, 7, 31), 512  # WHOLE: the model's whole context
SEED = 36
VIPER_SOURCES = ("kernels.py", "kernels_attend.py", "kernels_norm.py", "kernels_decoder.py")
ASM_CYCLES_PER_INSTRUCTION = 1  # backend_counts' and pie_counts' model of their loops
ESP32_LLM = 19.1  # tokens/s of stories260K as esp32-llm reports it (README), not measured here
RUNS = {  # backend: what the int8 language model's token calls on that chip
    "viper": "every kernel viper's (a firmware without the inline assembler, every port)",
    "mac16": "`linear` and the attention core (`attend`) are asm_mac16's and asm_attend's (an "
             "ESP32 or S3 firmware with the inline assembler), every other kernel viper's",
    "pie": "`linear` and the attention core (`attend`) are asm_pie's and asm_pie_attend's (an "
           "ESP32-S3 with the inline assembler), every other kernel viper's",
}
ATTENTION = ("_attend", "attend")  # the attention core: viper's, the asm cores'


@dataclass
class Token:
    """What one step of the model executed: {kernel: instructions} over its calls."""
    backend: str
    position: int
    capacity: int
    calls: int = 0
    kernels: dict = field(default_factory=dict)
    asm: set = field(default_factory=set)  # the kernels whose code is asm_xtensa
    logits: list = field(default_factory=list)  # the int32 logits it gave

    @property
    def instructions(self):
        return sum(self.kernels.values())


def stories_model(capacity=CAPACITY, seed=SEED):
    """(config, float params, token ids): the stories260K shape, seeded weights, `capacity`
    ids as bench/decoder.py makes them."""
    from ..digits import init_params

    config = device_module("bench/plan").decoder_config()
    ids = [(7 * i + 3) % config[0][1] for i in range(capacity)]
    return config, init_params(config, seed), ids


def quantized_file(folder, config, params, ids):
    """The host's int8 file of the model (as a board's quantize(model, ids).save() writes)."""
    from ..quantize import model_bytes
    from ..quantize.lm import quantize_lm

    path = Path(folder) / "lm_int8.bin"
    path.write_bytes(model_bytes(*quantize_lm(config, params, ids)))
    return path


def reference_logits(path, ids, count):
    """The integer reference's int32 logits of positions 0 .. count - 1."""
    from .. import modelfile
    from ..reference.int8_lm import Int8LM

    _, meta, arrays = modelfile.read_model(path)
    ref = Int8LM(meta["layers"], arrays)
    return [ref.step(ids[p], p).tolist() for p in range(count)]


def load_model(ta, path, backend):
    """The model's layers, loaded with `backend` chosen ("viper", "mac16" or "pie")."""
    with tempfile.TemporaryDirectory() as tmp:
        chosen = choose_backend(ta, backend, tmp + "/")
    if chosen != backend:
        raise AssertionError("backend %s was asked for, %s chosen" % (backend, chosen))
    from tinyattn.int8 import load

    return load(str(path)).layers


def operand_buffers(layers):
    """The operand buffers of the model's linear kernels (the weights of the viper ones)."""
    dense = [layer.dense for layer in layers if getattr(layer, "dense", None)]
    for layer in layers:
        dense += [p for p in getattr(layer, "parts", {}).values() if hasattr(p, "_kernel")]
    return [d._kernel[1] for d in dense if d._kernel]


def run_tokens(emu, layers, backend, ids, capacity, positions, expected):
    """[Token] of `positions` in a new cache of `capacity` (steps 0 .. the last asked, each
    step's logits checked against `expected`)."""
    from tinyattn.lm.generate import step

    caches = [layer.new_cache(capacity) if hasattr(layer, "step") else None
              for layer in layers]
    tokens = []
    emu.buffers.watch_writes()
    for pos in range(max(positions) + 1):
        before = len(emu.calls)
        step(layers, caches, ids[pos], pos)
        if pos == 0:  # bound and mirrored: the weights and the fast kernels' scratch are
            emu.buffers.freeze_unwritten()  # no longer read back (buffers.py)
            emu.buffers.freeze(operand_buffers(layers))
        if list(layers[-1].dense.out) != expected[pos]:
            raise AssertionError("%s: the logits at position %d differ from the integer "
                                 "reference's" % (backend, pos))
        if pos in positions:
            token = Token(backend, pos, capacity, len(emu.calls) - before,
                          logits=list(layers[-1].dense.out))
            for c in emu.calls[before:]:
                token.kernels[c.name] = token.kernels.get(c.name, 0) + c.instructions
                if c.asm:
                    token.asm.add(c.name)
            tokens.append(token)
    return tokens


def measure(emu, backends, path, ids, capacity=CAPACITY, positions=POSITIONS, whole=WHOLE):
    """{backend: [Token]}: `positions` of a cache of `capacity`, and position 0 of a cache of
    `whole` (None: not), for each backend on the emulator `emu`."""
    expected = reference_logits(path, ids, max(positions) + 1)
    result = {}
    with device_package(emu) as ta:
        for backend in backends:
            layers = load_model(ta, path, backend)
            result[backend] = run_tokens(emu, layers, backend, ids, capacity, positions,
                                         expected)
            if whole:
                result[backend] += run_tokens(emu, layers, backend, ids, whole, (0,),
                                              expected)
        choose_backend(ta, "viper", "")
    return result


def cycles_per_instruction():
    """{viper kernel: cycles per instruction of its costliest innermost loop (chipcost)}."""
    rate = {}
    for name in VIPER_SOURCES:
        for lp in chipcost.kernel_loops(DEVICE_DIR / "tinyattn" / "int8" / name):
            rate[lp.function] = max(rate.get(lp.function, 0), lp.cycles / lp.instructions)
    return rate


def estimate_cycles(token, rates):
    """The token's cycles on the chip, estimated: each kernel's instructions at its rate
    (the asm_xtensa ones, MAC16's and PIE's linear, at ASM_CYCLES_PER_INSTRUCTION; a viper
    function without a loop at the highest rate)."""
    total = 0.0
    for name, instructions in token.kernels.items():
        rate = rates.get(name, max(rates.values()))  # no loop (address_distance): the most
        total += instructions * (ASM_CYCLES_PER_INSTRUCTION if name in token.asm else rate)
    return total


def kernel_order(tokens):
    """The kernels seen, the costliest first."""
    seen = {}
    for t in tokens:
        for name, n in t.kernels.items():
            seen[name] = max(seen.get(name, 0), n)
    return sorted(seen, key=lambda name: -seen[name])


def table(result, rates):
    """The table's lines: a row per backend and token, a column per kernel, the total and the
    estimate."""
    tokens = [t for ts in result.values() for t in ts]
    names = kernel_order(tokens)
    lines = ["| backend | token (position / cache) | kernel calls | " + " | ".join(
        "`%s`" % n for n in names) + " | all instructions | estimated cycles | estimated "
        "tokens/s at %d MHz |" % chipcost.CLOCK_MHZ, "|---|---|" + "---:|" * (len(names) + 4)]
    for t in tokens:
        cycles = estimate_cycles(t, rates)
        lines.append("| %s | %d / %d | %d | %s | %d | ~%d | ~%.0f |" % (
            t.backend, t.position, t.capacity, t.calls,
            " | ".join(str(t.kernels.get(n, 0)) for n in names), t.instructions, cycles,
            chipcost.CLOCK_MHZ * 1e6 / cycles))
    return lines


def attention(token):
    """The instructions of the token's attention core."""
    return sum(token.kernels.get(name, 0) for name in ATTENTION)


def attention_share(result):
    """A sentence: the attention core's share of the last token of each cache, per backend."""
    parts = []
    for backend, tokens in result.items():
        last = {}
        for t in tokens:
            if t.position >= last.get(t.capacity, t).position:
                last[t.capacity] = t
        parts.append("%s %s" % (backend, ", ".join(
            "%.0f%% at %d / %d" % (100.0 * attention(t) / t.instructions, t.position,
                                   t.capacity) for t in last.values())))
    return " The attention core's share of a token's instructions: %s." % "; ".join(parts)


def section(result, missing=None):
    """The markdown section of measure()'s results (`missing`: {backend: why not run})."""
    rates = cycles_per_instruction()
    seen = kernel_order([t for ts in result.values() for t in ts])
    lines = [HEADING, "",
             "Written by `make emulate` and `make bench` (`python -m tinyattn_host emulate "
             "--doc`; tinyattn_host.emulator.lm_counts). llama2.c's stories260K shape (dim "
             "64, 5 blocks, 8 query and 4 key/value heads, hidden 172, vocabulary 512; the "
             "decoder `make bench` times, seeded weights) quantized by the host, stepped by the "
             "device's own glue (`tinyattn.lm.generate.step` on `tinyattn.int8.load`'s model) "
             "with every kernel call the chip's machine code: viper and MAC16 in Debian's "
             "qemu-system-xtensa (dc233c), PIE on Espressif's ESP32-S3 (QEMU_XTENSA_S3). "
             "Every position's int32 logits are the integer reference's bit for bit. Exact "
             "counts (ICOUNT) of the instructions each kernel's code executes, summed over a "
             "token's calls; a token at position p of a cache of C positions (generate's "
             "cache holds the prompt and the steps).", ""]
    lines += ["What each backend's token runs: " + "; ".join(
        "%s: %s" % (b, RUNS[b]) for b in RUNS) + ". The decoder block's attention is causal "
        "over its cache (the keys of positions 0..p, no keep mask), the call the fast cores "
        "take (`kernels_attend.fast_call`; viper's core is `_attend`). "
        "`address_distance` (and PIE's `address`, its operands' alignment) is the first "
        "step's binding of the layers to their buffers (once per model and cache).", ""]
    lines += table(result, rates)
    for backend, why in (missing or {}).items():
        lines += ["", "%s: not run: %s" % (backend, why)]
    lines += ["", "A token's projections (`linear`: the 7 of each of the 5 blocks and the "
              "classifier) and the other kernels cost the same at every position (but for "
              "a few instructions of data-dependent clamps and RMSNorm's square root); viper's "
              "attention core reads the keys of positions 0..p only, so its part grows with "
              "the position and not with the cache's size C; the asm cores score every "
              "position of the cache (the later ones masked), so theirs grows with C too." +
              attention_share(result), "",
              "**Estimate, not a measurement** (the tokens/s columns): chipcost's cycle model "
              "(tinyattn_host.chipcost.xtensa_loops: one cycle an instruction, a stall for a "
              "load or multiply used by the next instruction, %d more for a taken branch) "
              "applied to each viper kernel's executed instructions at the cycles per "
              "instruction of its costliest innermost loop (%s; a function without a loop at "
              "the highest), and the asm_xtensa ones (MAC16's and PIE's `linear` and "
              "`attend`, PIE's `address`) at %d cycle an instruction (their loops have no stall: the sections "
              "on the backends; a lower bound), at %d MHz on one core. Not in it: the "
              "MicroPython code around the kernel calls (the step's Python, the rotary "
              "angles, the logits' float copy and the pick of the next token), PSRAM wait "
              "states and cache misses, interrupts. A board's own tokens/s is still to be "
              "measured." % (
                  TAKEN_BRANCH_CYCLES, ", ".join("`%s` %.2f" % kv for kv in sorted(rates.items())
                                                 if kv[0] in seen),
                  ASM_CYCLES_PER_INSTRUCTION, chipcost.CLOCK_MHZ), "",
              "For comparison (as esp32-llm reports it, not measured here): esp32-llm runs "
              "stories260K at %.1f tokens/s on the ESP32-S3, in C on both cores with esp-dsp's "
              "float dot products." % ESP32_LLM, ""]
    return "\n".join(lines)


def run_section(doc=None, model=None, capacity=CAPACITY, positions=POSITIONS, whole=WHOLE):
    """Measure on Debian's QEMU (viper, MAC16) and, where QEMU_XTENSA_S3 names one, the S3
    (PIE); (the section, measure()'s results) and the section written into `doc`. model:
    (config, params, ids), stories_model() when None. EmulatorError when QEMU is missing."""
    from . import s3
    from .counts import write_section
    from .machine import Emulator
    from .qemu import EmulatorError, missing_reason

    if missing_reason():
        raise EmulatorError(missing_reason())
    config, params, ids = model or stories_model(capacity)
    result, missing = {}, {}
    with tempfile.TemporaryDirectory() as tmp:
        path = quantized_file(tmp, config, params, ids)
        with Emulator() as emu:
            result.update(measure(emu, ("viper", "mac16"), path, ids, capacity, positions,
                                  whole))
        if s3.missing_reason():
            missing["pie"] = s3.missing_reason()
        else:
            with Emulator(s3=True) as emu:
                result.update(measure(emu, ("pie",), path, ids, capacity, positions, whole))
    text = section(result, missing)
    if doc:
        write_section(doc, text, HEADING)
    return text, result


def bench_section(doc):
    """For `make bench` and `make emulate`: the section, also written into `doc`; or one line
    saying why not."""
    from .qemu import EmulatorError

    try:
        return run_section(doc)[0]
    except (EmulatorError, chipcost.ChipCostError) as err:
        return "language model on the emulator: not run: %s" % err
