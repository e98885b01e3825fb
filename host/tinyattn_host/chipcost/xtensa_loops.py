"""The innermost loops of Xtensa machine code, and what an iteration costs on the ESP32-S3.

Machine code is disassembled with binutils' xtensa objdump (Debian's binutils-xtensa-lx106: it
decodes the base ISA these loops use; the windowed-ABI calls it does not know are decoded
here). Every innermost loop (a backward branch whose range holds no other) is counted; a MAC is
one multiply in the loop unless told.

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

import re
import shutil
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from .mpy_native import ChipCostError

OBJDUMP = "xtensa-lx106-elf-objdump"
INSTALL_HINT = "apt-get install binutils-xtensa-lx106 (it provides %s)" % OBJDUMP
LOAD_USE_CYCLES = 1
MUL_USE_CYCLES = 1
TAKEN_BRANCH_CYCLES = 2

LOADS = {"l8ui", "l16ui", "l16si", "l32i", "l32i.n", "l32r", "l32ai", "l32e", "lsi", "lsiu",
         "lsx", "lsxp"}
STORES = {"s8i", "s16i", "s32i", "s32i.n", "s32ri", "s32c1i", "s32e", "ssi", "ssiu", "ssx",
          "ssxp"}
MULTIPLIES = {"mull", "mul16s", "mul16u", "mulsh", "muluh", "mul.s", "madd.s", "msub.s"}
CALLS = {"call0", "call4", "call8", "call12", "callx0", "callx4", "callx8", "callx12"}
NO_DESTINATION = STORES | CALLS | {"j", "jx", "ret", "ret.n", "retw", "retw.n", "ssr", "ssl",
                                   "ssa8l", "ssa8b", "ssai", "wsr", "wur", "nop", "nop.n",
                                   "memw", "isync", "entry"}


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
