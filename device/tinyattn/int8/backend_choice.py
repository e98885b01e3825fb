"""The choice of backend.py's kernels, made once (backend.py imports this on first use and lets
it go after when viper is chosen: nothing of it is held then; a fast kernel's class stays with
the kernel). On an ESP32-S3 the PIE linear (asm_pie) and attention core (asm_pie_attend,
heads of D <= 16; MAC16's for larger ones), else or if it fails the MAC16 ones (asm_mac16's
linear, asm_attend's attention core), on xtensawin firmware built with
MICROPY_EMIT_INLINE_XTENSA=1, when they pass their self-test; else the viper ones
(kernels.linear, kernels_attend.attend, every port):

- forced viper: backend.FORCE_VIPER set, or a file named VIPER_FILE in the current folder;
- a MARKER file left behind: the last self-test never finished (an illegal instruction
  resets an ESP32), so the fast kernel is skipped until the file is removed;
- no inline assembler in this firmware: exec of a two-line asm_xtensa function raises
  SyntaxError (the asm module is then never imported: on such a firmware its code would run
  as bytecode);
- not xtensawin (sys.implementation._mpy);
- else, fastest first (PIE only where os.uname().machine names an ESP32S3), MARKER is
  written, the kernels are checked against the viper ones on seeded inputs, MARKER is
  removed; a mismatch prints one line and tries the next, down to viper.
"""

import os
import sys

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from .fixedpoint import fixed_point
from . import kernels

VIPER_FILE = "tinyattn_viper"
MARKER = "tinyattn_selftest"
ASM_PROBE = "import micropython\n@micropython.asm_xtensa\ndef f(a2):\n    addi(a2, a2, 1)\n"


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def has_inline_asm():
    """Whether this firmware's compiler has the Xtensa inline assembler."""
    try:
        exec(ASM_PROBE, {})
        return True
    except SyntaxError:
        return False


def is_xtensawin():
    return (getattr(sys.implementation, "_mpy", 0) >> 10) & 15 == 10


class Mac16:
    """The MAC16 kernels and the linear's operand layout (imported only when chosen)."""

    name = "mac16"

    def __init__(self):
        from . import asm_attend, asm_mac16, mac16_layout

        self.linear, self.layout = asm_mac16.linear, mac16_layout
        self.attend = asm_attend.attend

    def operands(self, w, cols, depth):
        return self.layout.operands(w, cols, depth)


def is_s3():
    """Whether this chip is an ESP32-S3 (it has the PIE unit; the ESP32 has not)."""
    try:
        return "ESP32S3" in os.uname().machine.upper()
    except AttributeError:
        return False


class Pie(Mac16):
    """The PIE linear and its 16-byte-aligned layout, the PIE attention core for heads of
    D <= 16 and MAC16's for larger ones (imported only when chosen)."""

    name = "pie"

    def __init__(self):
        from . import asm_pie, asm_pie_attend, attend_layout, pie_layout

        super().__init__()
        self.linear, self.layout, self.address = asm_pie.linear, pie_layout, asm_pie.address
        self.pie_attend, self.pie_work = asm_pie_attend.attend, attend_layout.pie_work

    def operands(self, w, cols, depth):
        return self.layout.operands(w, cols, depth, self.address)

    def attend_core(self, head_dim):
        """(attention core, its work buffer's maker) for heads of head_dim."""
        if head_dim <= 16:
            return self.pie_attend, self.pie_work
        return self.attend, None


def fast_kernels(s3=is_s3):
    """The fast kernels this chip may run, fastest first."""
    return (Pie, Mac16) if s3() else (Mac16,)


def _cases():
    """Seeded linear configurations: (rows, cols, depth, requantized, offset-binary source);
    a requantized one maps 3 standard deviations of its dot products to 127."""
    return ((3, 5, 7, True, False), (2, 9, 64, False, False), (4, 3, 13, True, True),
            (1, 2, 1, True, False), (2, 17, 40, True, False))


def self_test(fast, seed=12345):
    """None if `fast` equals kernels.linear on every seeded case, else what differed."""
    import array

    x = seed
    for rows, cols, depth, requantized, offset_binary in _cases():
        mult = fixed_point(127 / (3 * 74 * 74 * depth ** 0.5), 128) if requantized else None
        data = bytearray(rows * depth + cols * depth)
        for i in range(len(data)):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            data[i] = (x >> 16) & 255
        src, w = data[:rows * depth], data[rows * depth:]
        if not offset_binary:
            src = array.array("b", src)
        bias = array.array("i", [(37 * j - 200) * 50 for j in range(cols)])
        outs = []
        for run, weights in ((kernels.linear, w), (fast.linear, fast.operands(w, cols, depth))):
            h = kernels.linear_header(cols, depth, bias, mult)
            size = 4 if mult is None else 1
            dst = array.array("i" if mult is None else "b", bytes(rows * cols * size))
            kernels.bind_linear(h, w, rows, src, dst, offset_binary=offset_binary)
            run(h, weights)
            outs.append(bytes(dst))
        if outs[0] != outs[1]:
            return "linear (%d, %d, %d) differs from viper" % (rows, cols, depth)
    attend = getattr(fast, "attend", None)
    if attend is None:
        return None
    from . import fast_attend  # (where a fast core exists only)

    failed = fast_attend.self_test(attend)
    if failed is None and hasattr(fast, "attend_core"):  # every case's D is 16 at most
        failed = fast_attend.self_test(*fast.attend_core(16))
    return failed


def choose(fast=None, has_asm=has_inline_asm, xtensawin=is_xtensawin, folder="", forced=False):
    """(name, why, fast kernel or None); the parameters are the facts, for the tests (fast:
    a kernel class or a tuple of them, fastest first; None: fast_kernels(); forced:
    backend.FORCE_VIPER)."""
    if forced or _exists(folder + VIPER_FILE):
        return "viper", "forced (FORCE_VIPER or a file %s)" % VIPER_FILE, None
    marker = folder + MARKER
    if _exists(marker):
        return "viper", ("the last self-test of the fast kernel never finished (a crash?): "
                         "remove %s to try it again" % marker), None
    if not has_asm():
        return "viper", ("no inline assembler in this firmware "
                         "(build it with MICROPY_EMIT_INLINE_XTENSA=1)"), None
    if not xtensawin():
        return "viper", "not an xtensawin port: the fast kernels are its machine code", None
    kinds = fast_kernels() if fast is None else fast if isinstance(fast, tuple) else (fast,)
    failures = []
    for kind in kinds:
        with open(marker, "w") as f:
            f.write("self-test of the fast kernel running\n")
        kernel = kind()
        failed = self_test(kernel)
        os.remove(marker)
        if not failed:
            return kernel.name, "inline assembler, xtensawin, self-test passed", kernel
        print("tinyattn: %s self-test failed, using %s: %s"
              % (kernel.name, "the next" if kind is not kinds[-1] else "viper", failed))
        failures.append("%s self-test failed: %s" % (kernel.name, failed))
    return "viper", "; ".join(failures), None
