"""The emulator's tests: the xtensawin machine code in qemu-system-xtensa (Debian's
qemu-system-misc; binutils-xtensa-lx106's objdump finds instructions in it). Without them
every test here is skipped with one line that names what is missing."""

import shutil
import sys
from pathlib import Path

import pytest

from tinyattn_host.emulator.qemu import missing_reason
from tinyattn_host.xtensa_loops import INSTALL_HINT, OBJDUMP

HERE = Path(__file__).resolve().parent
for folder in ("board", "device"):  # the board cases and the configurations that feed them
    sys.path.insert(0, str(HERE.parent / folder))

MISSING = missing_reason() or (None if shutil.which(OBJDUMP) else
                               "no %s: %s" % (OBJDUMP, INSTALL_HINT))


def pytest_collection_modifyitems(config, items):
    if MISSING:
        skip = pytest.mark.skip(reason=MISSING)
        for item in items:
            if Path(str(item.fspath)).parent == HERE:
                item.add_marker(skip)


@pytest.fixture(scope="session")
def emulator():
    """One QEMU for the session (per xdist worker)."""
    from tinyattn_host.emulator.machine import Emulator

    with Emulator() as emu:
        yield emu
