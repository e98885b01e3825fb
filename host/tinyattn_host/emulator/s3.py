"""The ESP32-S3 machine of Espressif's QEMU fork (`-M esp32s3 -cpu esp32s3`), for the PIE
kernel: the user's own build, named by QEMU_XTENSA_S3 (nothing here builds it).

Debian's QEMU has no S3 core, and on `-M sim -cpu esp32s3` the PIE state is never allocated
(the first PIE instruction crashes QEMU), so the S3 machine is used: its SRAM at 0x3FC80000
(data) and 0x40370000 (code), no ROM image. It boots a bare ELF given with `-kernel`; the
one made here is `j .` at the trampoline's address, and the machine is halted (`-S`) before
it runs anyway. A call then goes exactly as on the dc233c (xtensa_cpu.py: the trampoline's
`callx8 a15`, a breakpoint on every vector and on the return and mp_fun_table stub, ICOUNT
counting the callee's instructions), but registers go one by one (`p`/`P`: the S3's `g`
packet holds its 128-bit PIE registers), and every stub is a breakpoint answered in Python
(funtable.py), the division ones too: the viper glue (address_distance...) runs, and the
counts that matter are the asm kernels', which call none.
"""

import os
import struct
import tempfile

from .qemu import EmulatorError, GdbRemote
from .layout import STUB_SPACING, Region
from .xtensa_cpu import (CALLX8_A15, PS_RUN, STUB_COUNT, VECTORS, CallResult, EmulatorFault,
                         XtensaCpu, describe_stop, return_address, stub_index)

QEMU_S3 = os.environ.get("QEMU_XTENSA_S3")
ARGS = ["-M", "esp32s3", "-cpu", "esp32s3", "-nodefaults", "-display", "none",
        "-monitor", "none", "-serial", "none", "-semihosting", "-S"]
# the gdb register numbers of Espressif's esp32s3 core (target/xtensa/core-esp32s3); its
# stub answers the first 212 only: a0..a15 are reached as the physical ar registers
REG = {"pc": 0, "ar0": 1, "lcount": 67, "windowbase": 69, "windowstart": 70, "ps": 73,
       "epc1": 139, "cpenable": 160, "vecbase": 165, "exccause": 166, "debugcause": 167,
       "icount": 170, "icountlevel": 171}
AREGS = 64
IRAM, DRAM = 0x40370000, 0x3FC80000
VECBASE = IRAM  # 1 KB of vectors, each a breakpoint
TRAMPOLINE = IRAM + 0x400
RETURN = TRAMPOLINE + len(CALLX8_A15)
STUBS = IRAM + 0x800
FUN_TABLE = DRAM  # asm functions never read it
STACK_TOP = DRAM + 0x16FF00
EM_XTENSA = 94


def missing_reason():
    """One line naming what is missing to run the S3 emulator, or None."""
    if not QEMU_S3:
        return ("QEMU_XTENSA_S3 is not set: the PIE tests need Espressif's QEMU "
                "(qemu-system-xtensa with -M esp32s3), docs/performance.md")
    if not os.access(QEMU_S3, os.X_OK):
        return "QEMU_XTENSA_S3=%s is not an executable" % QEMU_S3
    return None


def regions():
    """The S3 emulator's allocators (layout.regions' names): code in IRAM, data in DRAM."""
    return {"runtime": Region("runtime", DRAM + 0x100, DRAM + 0x10000),
            "code": Region("code", STUBS + STUB_SPACING * STUB_COUNT, IRAM + 0x80000),
            "objects": Region("objects", DRAM + 0x10000, DRAM + 0x20000),
            "buffers": Region("buffers", DRAM + 0x20000, DRAM + 0x160000)}


def bare_elf(address, code):
    """An ELF32 executable for Xtensa: `code` loaded at and entered from `address`."""
    header = struct.pack("<4sBBBB8xHHIIIIIHHHHHH", b"\x7fELF", 1, 1, 1, 0, 2, EM_XTENSA, 1,
                         address, 52, 0, 0, 52, 32, 1, 0, 0, 0)
    segment = struct.pack("<IIIIIIII", 1, 84, address, address, len(code), len(code), 5, 4)
    return header + segment + code


class S3Cpu(XtensaCpu):
    """The emulated S3 core, set up for calls (XtensaCpu's interface and memory access)."""

    def __init__(self, native_stubs=None):  # noqa: super's set-up is the dc233c's
        reason = missing_reason()
        if reason:
            raise EmulatorError(reason)
        self._folder = tempfile.TemporaryDirectory(prefix="tinyattn-s3-")
        elf = os.path.join(self._folder.name, "idle.elf")
        with open(elf, "wb") as f:
            f.write(bare_elf(TRAMPOLINE, bytes.fromhex("06ffff")))  # j .
        self.gdb = GdbRemote(QEMU_S3, ARGS + ["-kernel", elf])
        try:
            self.gdb.write(TRAMPOLINE, CALLX8_A15)
            for address in [RETURN] + [VECBASE + v for v in VECTORS] + [
                    STUBS + STUB_SPACING * i for i in range(STUB_COUNT)]:
                self.gdb.add_breakpoint(address)
        except BaseException:
            self.close()
            raise

    def close(self):
        self.gdb.close()
        self._folder.cleanup()

    def _index(self, name):
        """The gdb number of a register by name, or of a0..a15 (of the current window) by
        its number."""
        if not isinstance(name, int):
            return REG[name]
        return REG["ar0"] + (4 * self.get("windowbase") + name) % AREGS

    def get(self, name):
        """A register by name, or a0..a15 by its number."""
        index = self._index(name)
        reply = self.gdb.command("p%x" % index)
        if len(reply) < 8 or reply.startswith("E"):
            raise EmulatorError("gdbstub answered %r to reading %s" % (reply, name))
        return int.from_bytes(bytes.fromhex(reply[:8]), "little")

    def set(self, name, value):
        index = self._index(name)
        self.gdb.checked("P%x=%s" % (index, (value & 0xFFFFFFFF).to_bytes(4, "little").hex()))

    def call(self, entry, args, on_stub, limit=1 << 30):
        """Run the function at `entry` with up to 4 word arguments; on_stub(index, args)
        returns the value of mp_fun_table entry `index` called with args (a10..a15)."""
        self.set("windowbase", 0)
        self.set("windowstart", 1)
        for name, value in (("pc", TRAMPOLINE), ("ps", PS_RUN), ("vecbase", VECBASE),
                            ("lcount", 0), ("icount", -limit), ("icountlevel", 1)):
            self.set(name, value)
        values = {1: STACK_TOP, 15: entry}
        values.update({10 + i: v for i, v in enumerate(args)})
        for i, v in values.items():
            self.set(i, v)
        stubs = 0
        while True:
            self.gdb.cont()
            pc = self.get("pc")
            if pc == RETURN:
                done = (self.get("icount") + limit) & 0xFFFFFFFF
                return CallResult(self.get(10), done - 1, stubs)
            index = stub_index(pc, STUBS)
            if index is None:
                break
            stubs += 1
            self.set(10, on_stub(index, [self.get(i) for i in range(10, 16)]))
            self.set("pc", return_address(self.get(8), pc))
        regs = {n: self.get(n) for n in ("pc", "epc1", "exccause", "debugcause")}
        raise EmulatorFault(describe_stop(regs, entry, limit, VECBASE))
