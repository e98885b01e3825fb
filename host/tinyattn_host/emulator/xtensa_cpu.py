"""One call of Xtensa machine code on the emulated dc233c, counted instruction by instruction.

A call goes through a trampoline, `callx8 a15`, as a C caller of MicroPython's would: the
arguments in a10..a13 become the callee's a2..a5, a return address with the window increment
in a8, and the callee's `entry` rotates the window. The callee's `retw` lands on a breakpoint
after the trampoline. Its calls into mp_fun_table land on breakpoints at the table's stub
addresses: the caller's window then holds the arguments (a10...) and the return address (a8);
Python computes the entry's result, puts it in a10 and resumes at the return address, as if
the callee had run (`on_stub`). Every exception vector holds a breakpoint too, so a fault
(an unaligned load, an illegal instruction...) stops the run and names itself.

Counting: the core's debug option has ICOUNT, a register that QEMU increments in the code it
translates for every guest instruction that completes while ICOUNTLEVEL > the current
interrupt level (here 1 > 0: the callee's own instructions, not exception handlers). It is set
to -limit before a call and read after, so the difference is the exact number of instructions
executed, and a run that reaches the limit takes a debug exception (stopped at its vector).
A breakpoint stops before its instruction, so the stubs add nothing; the trampoline's callx8
is subtracted, and so are the instructions of the stubs that run as code (native_stubs.py:
branch-free, a fixed count a call, each call counted in its counter word).
"""

from dataclasses import dataclass

from . import layout
from .native_stubs import COUNTERS
from .qemu import EmulatorError, GdbRemote
from .xtensa_encode import CALLX8_A15

PC, LCOUNT, WINDOWBASE, WINDOWSTART, PS = 0, 35, 38, 39, 42
EPC1, VECBASE, EXCCAUSE, DEBUGCAUSE, ICOUNT, ICOUNTLEVEL, EXCVADDR = 66, 92, 93, 94, 97, 98, 99
A0 = 105  # a0..a15 of the current window (the gdb register map of QEMU's dc233c)
PS_RUN = (1 << 18) | (1 << 5)  # WOE: windowed calls; UM: user vector; INTLEVEL 0, EXCM 0
RETURN = layout.TRAMPOLINE + len(CALLX8_A15)
STUB_COUNT = 64
DEFAULT_LIMIT = 1 << 30
VECTORS = {0x000: "window overflow 4", 0x040: "window underflow 4", 0x080: "window overflow 8",
           0x0C0: "window underflow 8", 0x100: "window overflow 12",
           0x140: "window underflow 12", 0x180: "level-2 interrupt", 0x1C0: "level-3 interrupt",
           0x200: "level-4 interrupt", 0x240: "level-5 interrupt", 0x280: "debug exception",
           0x2C0: "NMI", 0x300: "kernel exception", 0x340: "user exception",
           0x3C0: "double exception"}
CAUSES = {0: "illegal instruction", 3: "load/store error", 6: "integer divide by zero",
          9: "unaligned load or store (the ESP32-S3 would do it in hardware)",
          20: "instruction fetch prohibited", 28: "load prohibited", 29: "store prohibited"}


def _stub_address(index):
    return layout.STUBS + layout.STUB_SPACING * index


def stub_index(pc, stubs=layout.STUBS):
    """The mp_fun_table entry whose stub is at `pc` (stubs: entry 0's address), or None."""
    index, rest = divmod(pc - stubs, layout.STUB_SPACING)
    return index if 0 <= index < STUB_COUNT and not rest else None


def return_address(a8, pc):
    """Where a stub reached by call8 at `pc` returns: a8 less its window increment."""
    return (a8 & 0x3FFFFFFF) | (pc & 0xC0000000)


def describe_stop(regs, entry, limit, vecbase):
    """One line for a stop that is no return nor stub: regs holds pc, epc1, exccause and
    debugcause."""
    vector = VECTORS.get(regs["pc"] - vecbase)
    if vector == "debug exception" and regs["debugcause"] & 1:
        return "ran %d instructions without returning (the limit)" % limit
    if vector in ("kernel exception", "user exception", "double exception"):
        cause = regs["exccause"]
        return "%s at code offset 0x%x (address 0x%x): EXCCAUSE %d, %s" % (
            vector, regs["epc1"] - entry, regs["epc1"], cause,
            CAUSES.get(cause, "see the Xtensa ISA"))
    if vector:
        return "%s at code offset 0x%x: not provided by the emulator" % (
            vector, regs["epc1"] - entry)
    return "stopped at 0x%x, which is no breakpoint of the emulator's" % regs["pc"]


class EmulatorFault(EmulatorError):
    """The code under test faulted or ran away; the message says where."""


@dataclass
class CallResult:
    value: int  # the callee's a2 at its return
    instructions: int  # executed by the callee (stubs excluded, see the module docstring)
    stub_calls: int


class XtensaCpu:
    """The emulated core, set up for calls: vectors, trampoline, stubs, counters."""

    def __init__(self, native_stubs):
        """native_stubs: {mp_fun_table index: NativeStub} that run as code."""
        self.gdb = GdbRemote()
        self._native = native_stubs
        self._counts = [0] * len(native_stubs)
        try:
            self._template = self.gdb.registers()
            self.gdb.write(layout.TRAMPOLINE, CALLX8_A15)
            self.gdb.write(COUNTERS, bytes(4 * len(native_stubs)))
            for index, stub in native_stubs.items():
                self.gdb.write(_stub_address(index), stub.code)
            for address in [RETURN] + [layout.VECBASE + v for v in VECTORS] + [
                    _stub_address(i) for i in range(STUB_COUNT) if i not in native_stubs]:
                self.gdb.add_breakpoint(address)
        except BaseException:
            self.gdb.close()
            raise

    def read(self, address, size):
        return self.gdb.read(address, size)

    def write(self, address, data):
        self.gdb.write(address, data)

    def close(self):
        self.gdb.close()

    def call(self, entry, args, on_stub, limit=DEFAULT_LIMIT):
        """Run the function at `entry` with up to 4 word arguments; on_stub(index, args)
        returns the value of mp_fun_table entry `index` called with args (a10..a15)."""
        regs = list(self._template)
        regs[PC], regs[PS], regs[WINDOWBASE], regs[WINDOWSTART] = layout.TRAMPOLINE, PS_RUN, 0, 1
        regs[VECBASE], regs[LCOUNT] = layout.VECBASE, 0
        regs[ICOUNT], regs[ICOUNTLEVEL] = -limit & 0xFFFFFFFF, 1
        regs[A0 + 1] = layout.STACK_TOP
        for i, v in enumerate(args):
            regs[A0 + 10 + i] = v
        regs[A0 + 15] = entry
        self.gdb.set_registers(regs)
        stubs = 0
        while True:
            self.gdb.cont()
            regs = self.gdb.registers()
            pc = regs[PC]
            if pc == RETURN:
                done = (regs[ICOUNT] + limit) & 0xFFFFFFFF
                native, in_stubs = self._native_calls()
                return CallResult(regs[A0 + 10], done - 1 - in_stubs, stubs + native)
            index = stub_index(pc)
            if index is not None:
                stubs += 1
                regs[A0 + 10] = on_stub(index, regs[A0 + 10:A0 + 16]) & 0xFFFFFFFF
                regs[PC] = return_address(regs[A0 + 8], pc)
                self.gdb.set_registers(regs)
                continue
            raise EmulatorFault(describe_stop(
                {"pc": pc, "epc1": regs[EPC1], "exccause": regs[EXCCAUSE],
                 "debugcause": regs[DEBUGCAUSE]}, entry, limit, layout.VECBASE))

    def _native_calls(self):
        """(calls, instructions) of the native stubs since the last call (their counters)."""
        if not self._native:
            return 0, 0
        data = self.gdb.read(COUNTERS, 4 * len(self._counts))
        calls = instructions = 0
        for stub in self._native.values():
            now = int.from_bytes(data[4 * stub.slot:4 * stub.slot + 4], "little")
            n = (now - self._counts[stub.slot]) & 0xFFFFFFFF
            self._counts[stub.slot] = now
            calls += n
            instructions += n * stub.instructions
        return calls, instructions

