"""The emulator's tests: the xtensawin machine code in qemu-system-xtensa (Debian's
qemu-system-misc; binutils-xtensa-lx106's objdump finds instructions in it). Without them
every test here is skipped with one line that names what is missing."""

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
for folder in ("board", "device"):  # the board cases and the configurations that feed them
    sys.path.insert(0, str(HERE.parent / folder))

sys.path.insert(0, str(HERE))
from emulator_tools import MISSING  # noqa: E402


if MISSING:  # the one test left, test_emulator.py, skips naming it: one line, not many
    collect_ignore_glob = ["test_emulator_*.py"]


@pytest.fixture(scope="session")
def emulator():
    """One QEMU for the session (per xdist worker)."""
    from tinyattn_host.emulator.machine import Emulator

    with Emulator() as emu:
        yield emu


@pytest.fixture(scope="module")
def linear_cases(tmp_path_factory):
    """The board's case_kernels fixtures (its linear configurations and worst cases)."""
    from emulated_cases import write_case
    from test_kernels import make_fixtures

    return write_case(tmp_path_factory.mktemp("case_kernels"), "case_kernels", make_fixtures())
