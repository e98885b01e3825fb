"""What the emulator tests need: qemu-system-xtensa (Debian's qemu-system-misc) and
binutils-xtensa-lx106's objdump (it finds instructions in the code); MISSING names what is
not installed, or is None."""

import shutil

from tinyattn_host.emulator.qemu import missing_reason
from tinyattn_host.chipcost.xtensa_loops import INSTALL_HINT, OBJDUMP

MISSING = missing_reason() or (None if shutil.which(OBJDUMP) else
                               "no %s: %s" % (OBJDUMP, INSTALL_HINT))
