"""The header fields every int8 kernel module restates (viper inlines only its own module's
const()) agree with kernels.py, which defines the header."""

import re

import pytest

from tinyattn_host.virtual.unixport import DEVICE_DIR

PACKAGE = DEVICE_DIR / "tinyattn" / "int8"
SHARED = ("_M", "_S", "_P", "_CAP", "_LO", "_HI", "_EXT", "_ROWS", "_SRC")


def fields(name):
    text = (PACKAGE / name).read_text()
    return {k: int(v) for k, v in re.findall(r"^(_[A-Z_]+) = const\((\d+)\)", text, re.M)}


@pytest.mark.parametrize("module", ["kernels_attend.py", "kernels_norm.py"])
def test_the_shared_header_fields_agree_with_kernels_py(module):
    own, theirs = fields("kernels.py"), fields(module)
    shared = [name for name in SHARED if name in theirs]
    assert len(shared) >= 6, shared  # the module does restate the header's start
    assert {n: theirs[n] for n in shared} == {n: own[n] for n in shared}
    first_own = min(v for n, v in theirs.items() if n not in SHARED)
    assert first_own == max(own[n] for n in SHARED) + 1  # its own fields follow them
