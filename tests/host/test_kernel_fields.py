"""What the int8 kernel modules restate stays equal: the header fields (viper inlines only its
own module's const()) with kernels.py, which defines the header; the requantize step of every
viper kernel with kernels.py's linear (a viper function calls another only as a Python call);
asm_pie's tail with asm_mac16's (the inline assembler has no macro)."""

import re

import pytest

from tinyattn_host.virtual.unixport import DEVICE_DIR

PACKAGE = DEVICE_DIR / "tinyattn" / "int8"
SHARED = ("_M", "_S", "_P", "_CAP", "_LO", "_HI", "_EXT", "_ROWS", "_SRC")


def fields(name):
    text = (PACKAGE / name).read_text()
    return {k: int(v) for k, v in re.findall(r"^(_[A-Z_]+) = const\((\d+)\)", text, re.M)}


@pytest.mark.parametrize("module", ["kernels_attend.py", "kernels_norm.py", "kernels_pool.py"])
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


def asm_tail(name):
    """The lines of an asm linear kernel from its bias on (the line before `+ bias`)
    to label(done)."""
    lines = (PACKAGE / name).read_text().splitlines()
    start = lines.index("    add(a13, a13, a14)  # + bias") - 1
    end = lines.index("    label(done)")
    return lines[start:end + 1]


def test_the_asm_linear_kernels_share_their_tail_to_the_letter():
    """asm_pie's bias, requantize, store and next-row code is asm_mac16's (the inline
    assembler has no macro or include): a fix in one is made in the other."""
    mac16, pie = asm_tail("asm_mac16.py"), asm_tail("asm_pie.py")
    assert len(mac16) > 50 and mac16[0].strip() == "l32i(a14, a12, 0)", mac16[:2]
    assert mac16 == pie


REQUANTIZE = """if v > cap:
    v = cap
elif v < 0 - cap:
    v = 0 - cap
y = ((v >> p) * m + half) >> s
if y > {hi}:
    y = {hi}
elif y < {lo}:
    y = {lo}"""
"""The requantize step (reference/int8.py's requantize): the int32 clamped to +-cap, shifted,
multiplied, rounded, saturated to the output's range (a header's hi and lo, or int8's)."""


def requantize_copies():
    """[(file, line, the step's lines dedented)] of every viper kernel's requantize: the
    lines from each `if v > cap:` and each line holding the multiply-and-round."""
    found, rounds = [], 0
    for path in sorted(PACKAGE.glob("kernels*.py")):
        lines = path.read_text().splitlines()
        rounds += sum("* m + half) >> s" in line for line in lines)
        for i, line in enumerate(lines):
            if line.strip() == "if v > cap:":
                indent = len(line) - len(line.lstrip())
                found.append((path.name, i + 1, "\n".join(x[indent:] for x in lines[i:i + 9])))
    return found, rounds


def test_every_viper_requantize_is_the_one_step():
    found, rounds = requantize_copies()
    assert len(found) >= 7 and rounds == len(found), (len(found), rounds)  # none other
    steps = (REQUANTIZE.format(hi="hi", lo="lo"), REQUANTIZE.format(hi=127, lo=-128))
    assert steps[0] in [text for name, _, text in found if name == "kernels.py"]
    for name, line, text in found:
        assert text in steps, "%s:%d differs from kernels.py's requantize:\n%s" % (name, line,
                                                                                 text)
