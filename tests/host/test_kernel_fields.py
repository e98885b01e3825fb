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


def test_the_shared_constants_are_what_they_say():
    """int8/constants.py, which the kernels and the host reference share: the exp tables
    from their formulas, EXP_LIMIT the first index past the table, and kernels_attend's
    const() copy of it equal."""
    import math

    from tinyattn_host.device_modules import device_module

    c = device_module("int8/constants")
    assert list(c.EXP_HI) == [round(32768 * math.exp(-k / 8)) for k in range(89)]
    assert round(32768 * math.exp(-89 / 8)) == 0
    assert list(c.EXP_LO) == [round(32768 * math.exp(-j / 256)) for j in range(32)]
    assert c.EXP_LIMIT == 32 * len(c.EXP_HI) and c.EXP_STEPS == 256 and c.PROB_ONE == 1 << 15
    kernel = (PACKAGE / "kernels_attend.py").read_text()
    assert re.search(r"^EXP_LIMIT = const\((\d+)\)", kernel, re.M).group(1) == str(c.EXP_LIMIT)
