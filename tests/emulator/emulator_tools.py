"""What the emulator tests need: qemu-system-xtensa (Debian's qemu-system-misc) and
binutils-xtensa-lx106's objdump (it finds instructions in the code); MISSING names what is
not installed, or is None."""

import shutil

from tinyattn_host.emulator.qemu import missing_reason
from tinyattn_host.chipcost.xtensa_loops import INSTALL_HINT, OBJDUMP

MISSING = missing_reason() or (None if shutil.which(OBJDUMP) else
                               "no %s: %s" % (OBJDUMP, INSTALL_HINT))

LOOPGTZ = 0xA076  # the fixed bits of LOOPGTZ's word (op0 6, n 3, m 1, r 10)


def loop_body_starts(code):
    """Offsets of the loop bodies of the LOOPGTZ words in machine code `code`."""
    return [i + 3 for i in range(len(code) - 2)
            if int.from_bytes(code[i:i + 3], "little") & 0xF0FF == LOOPGTZ]
