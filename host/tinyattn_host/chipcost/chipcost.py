"""Chip cost of the viper kernels: what their inner loops cost on the ESP32-S3, per MAC.

    .venv/bin/python -m tinyattn_host chipcost device/tinyattn/int8/kernels.py [--json]
                                [--function NAME] [--show-asm] [--macs NAME=N]

The file's native and viper functions (mpy_native) have their innermost loops counted and
costed (xtensa_loops, which states the cycle model); here they are reported, per MAC, as a
markdown table or JSON.
"""

import json

from ..errors import UsageError
from .mpy_native import ChipCostError, compile_xtensawin, native_functions
from .xtensa_loops import disassemble, innermost_loops, loop_cost

CLOCK_MHZ = 240

ULAB_FLOAT_DOT = dict(instructions=24, loads=6, stores=0, calls=2, taken_branches=5,
                      cycles_per_mac=36, cycles_per_mac_range=(30, 45))
"""Estimate, same model, for ulab's float `np.dot` inner loop on the ESP32-S3 (not measured).

ulab (code/numpy/transform.c, transform_dot) does per MAC
`dot += func1(array1) * func2(array2)`, each element fetched through a function pointer
(ndarray_get_float_function: for float32 `return *(float *)data`), then steps both pointers by
strides it re-reads from the arrays, because a call may have changed memory. With esp-idf's
windowed ABI and the S3's FPU that is: 2 x (mov.n arg; callx8; callee entry, l32i.n, retw.n;
wfr) = 12, madd.s = 1, and the bookkeeping the same C loop compiles to with gcc-xtensa-lx106
-O2 (l8ui ndim, movi, sub, addx4, 3 x l32i stride/shape, 2 x add, addi, bltu) = 11: 24
instructions, 6 loads, 5 taken branches (2 calls, 2 returns, the loop), 1 or 2 stalls (wfr
then madd.s, a stride used as soon as loaded): 24 + 10 + 2 = ~36 cycles/MAC; 30 to 45 with
what is not modelled.
The lx106 build (no FPU, call0 ABI) shows the loop's shape and the reloads (27 instructions,
2 of them the pointer calls and 2 soft-float calls, __mulsf3 and __addsf3, with their argument
moves); it does not show FPU latencies, the windowed entry/retw, or window spills.
"""


def kernel_loops(source_path, macs=None):
    """A LoopCost per innermost loop of every native/viper function in a MicroPython file.

    macs: {function name: MACs per iteration} where the multiply count is not the MAC count.
    """
    macs = macs or {}
    loops = []
    for name, code in native_functions(compile_xtensawin(source_path)).items():
        instructions = disassemble(code)
        for first, last in innermost_loops(instructions):
            loops.append(loop_cost(name, instructions[first:last + 1], macs.get(name)))
    return loops


def _fmt(v):
    return "-" if v is None else "%g" % v


def markdown_table(loops):
    """The loops as a markdown table, per iteration and per MAC."""
    rows = ["| function | loop | instr | loads (stack) | stores (stack) | load-use stalls | "
            "mul | calls | "
            "MACs | instr/MAC | loads/MAC | stores/MAC | stalls/MAC | cycles/MAC | "
            "MMAC/s @%d MHz |" % CLOCK_MHZ,
            "|---|---|" + "---:|" * 13]
    for lp in loops:
        cycles, rate = "-", "-"
        if lp.macs:  # a loop that calls out costs at least this much
            cycles = (">=" if lp.calls else "") + _fmt(lp.cycles_per_mac)
            rate = ("<=" if lp.calls else "") + "%.1f" % (CLOCK_MHZ / lp.cycles_per_mac)
        rows.append("| %s | 0x%x-0x%x | %d | %d (%d) | %d (%d) | %d | %d | %s | %d | %s | %s | "
                    "%s | %s | %s | %s |" % (
                        lp.function, lp.start, lp.end, lp.instructions, lp.loads,
                        lp.stack_loads, lp.stores, lp.stack_stores,
                        lp.stalls, lp.multiplies, "%d (calls!)" % lp.calls if lp.calls else "0",
                        lp.macs, _fmt(lp.instructions_per_mac), _fmt(lp.loads_per_mac),
                        _fmt(lp.stores_per_mac), _fmt(lp.stalls_per_mac), cycles, rate))
    return "\n".join(rows)


def _readable_source(path):
    """ChipCostError unless `path` is a file of UTF-8 text (MicroPython source)."""
    try:
        with open(path, "rb") as f:
            f.read().decode("utf-8")
    except OSError as err:
        raise ChipCostError("no such source file: %s (%s)" % (path, err.strerror)) from None
    except UnicodeDecodeError as err:
        raise ChipCostError("%s is not UTF-8 text (byte %d): not a MicroPython source file"
                            % (path, err.start)) from None


def chipcost_command(args):
    """The chipcost command: the table (or JSON, or the loops' bodies) for one source file."""
    try:
        macs = {k: int(v) for k, _, v in (m.partition("=") for m in args.macs)}
    except ValueError:
        raise UsageError("--macs takes NAME=N with N an integer, got %s" % args.macs) from None
    _readable_source(args.source)
    loops = kernel_loops(args.source, macs)
    if not loops:
        raise ChipCostError("%s has no viper or native function with a loop" % args.source)
    if args.function:
        missing = set(args.function) - {lp.function for lp in loops}
        if missing:
            raise ChipCostError("no loop in function(s) %s" % ", ".join(sorted(missing)))
        loops = [lp for lp in loops if lp.function in args.function]
    if args.json:
        print(json.dumps([lp.as_dict() for lp in loops], indent=1))
        return 0
    print(markdown_table(loops))
    print("\nulab float np.dot, estimated the same way: ~%(instructions)d instructions, "
          "%(calls)d calls, ~%(cycles_per_mac)d cycles/MAC (chipcost.ULAB_FLOAT_DOT)"
          % ULAB_FLOAT_DOT)
    if args.show_asm:
        for lp in loops:
            print("\n%s, loop 0x%x-0x%x:\n%s" % (lp.function, lp.start, lp.end, "\n".join(lp.asm)))
    return 0
