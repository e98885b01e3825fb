"""chipcost: the .mpy parser, the loop counts, and the int8 matmul's budget on the ESP32-S3."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tinyattn_host.chipcost import chipcost, mpy_native, xtensa_loops

KERNELS = Path(__file__).resolve().parents[2] / "device" / "tinyattn" / "int8" / "kernels.py"
ATTENTION_KERNELS = KERNELS.with_name("kernels_attend.py")
MATMUL_KERNEL = "linear"
ATTENTION_CORE = "_attend"  # its scores and P V loops are dot products too
"""The int8 matmul kernel whose inner loop has a budget (issue 10)."""
MATMUL_BUDGET = 16
"""Instructions per MAC in that loop, at most."""

needs_objdump = pytest.mark.skipif(
    shutil.which(xtensa_loops.OBJDUMP) is None,
    reason="needs %s: %s" % (xtensa_loops.OBJDUMP, xtensa_loops.INSTALL_HINT))

DOT8 = """\
import micropython
@micropython.viper
def plain(a: ptr8, n: int) -> int:
    acc = 0
    for k in range(n):
        acc += a[k]
    return acc
@micropython.viper
def dot8(a: ptr8, b: ptr8, n: int) -> int:
    acc = 0
    for k in range(n):
        acc += a[k] * b[k]
    return acc
"""

# dot8's inner loop as objdump prints it (mpy-cross 1.29, -march=xtensawin), counted by hand:
#  6b l32i  a10,a1,8   L*   6e s32i a10,a1,8  S    71 s32i a10,a1,28  S   74 l32i a10,a1,32 L*
#  77 s32i  a10,a1,12  S    7a l32i a10,a1,28 L*   7d mov.n   80/81 add.n  83 l8ui a10,a10,0 L*
#  86 s32i  a10,a1,16  S    89 l32i a10,a1,28 L*   8c mov.n  8e mov.n  90 add.n  92 l8ui L*
#  95 mov.n 97 l32i a11,a1,16 L*  9a mull a11,a11,a12 M*  9d mov.n  9f l32i a11,a1,12 L*
#  a2 add.n a4 mov.n  a6 s32i S  a9 movi.n  ab l32i a11,a1,8 L*  ae add.n  b0 s32i S
#  b3 l32i L  b6 l32i L  b9 s32i S  bc s32i S  bf mov.n  c1 mov.n  c3 movi.n
#  c5 blt (forward, taken while the loop goes on)  c8 movi.n  ca bnez -> 6b
# (L load, S store, * result read by the next instruction; all but the l8ui's address a1)
DOT8_LOOP = dict(instructions=38, loads=11, stores=8, stack_loads=9, stack_stores=8, stalls=9,
                 multiplies=1, mul_stalls=1, taken_branches=2, calls=0, macs=1)


@pytest.fixture(scope="module")
def dot8(tmp_path_factory):
    source = tmp_path_factory.mktemp("chipcost") / "dot8.py"
    source.write_text(DOT8)
    return source


def test_functions_are_found_by_name(dot8):
    """Each viper function under its own name: dot8, the one that also loads b and
    multiplies, is the longer (names swapped by a wrong child index would fail)."""
    found = mpy_native.native_functions(mpy_native.compile_xtensawin(dot8))
    assert sorted(found) == ["dot8", "plain"]
    assert len(found["dot8"]) > len(found["plain"])


def test_code_length_from_the_header_ends_at_the_epilogue(dot8):
    """The length field is right: each function's bytes end with `l32i.n a0, a1, 0; retw.n`
    (asm_xtensa_exit_win), and the parse ends at the end of the file."""
    data = mpy_native.compile_xtensawin(dot8)
    for code in mpy_native.native_functions(data).values():
        assert code.endswith(bytes.fromhex("08011df0"))
    with pytest.raises(mpy_native.ChipCostError, match="left after"):
        mpy_native.read_mpy(data + b"\0")


def test_every_device_file_parses():
    """Bytecode-only modules too: the opcode walk ends on the last byte of every function."""
    for source in sorted(KERNELS.parent.glob("*.py")):
        data = mpy_native.compile_xtensawin(source)
        _, module = mpy_native.read_mpy(data)
        stack = [module]
        while stack:
            rc = stack.pop()
            if rc.kind == 0:
                list(mpy_native._opcodes(rc.data))
            stack.extend(rc.children)


def test_bad_input_is_named(tmp_path):
    with pytest.raises(mpy_native.ChipCostError, match="no such source file"):
        mpy_native.compile_xtensawin(tmp_path / "missing.py")
    bad = tmp_path / "bad.py"
    bad.write_text("def f(:\n")
    with pytest.raises(mpy_native.ChipCostError, match="mpy-cross failed"):
        mpy_native.compile_xtensawin(bad)
    with pytest.raises(mpy_native.ChipCostError, match="not a .mpy"):
        mpy_native.read_mpy(b"PK\3\4")


def test_a_missing_objdump_says_what_to_install(monkeypatch):
    monkeypatch.setattr(xtensa_loops, "OBJDUMP", "no-such-objdump")
    with pytest.raises(mpy_native.ChipCostError, match="apt-get install binutils-xtensa-lx106"):
        xtensa_loops.disassemble(b"\0\0\0")


def test_windowed_calls_are_decoded():
    """Bytes the lx106 objdump shows as `excw` (ISA: CALLX8 a8 = 0x0008e0, RETW.N = 0xf01d)."""
    assert xtensa_loops._windowed("e00800") == "callx8 a8"
    assert xtensa_loops._windowed("1df0") == "retw.n"
    assert xtensa_loops._windowed("36a100") == "entry a1, 80"
    assert xtensa_loops._windowed("a2610a") is None


@needs_objdump
def test_hand_counted_loop(dot8):
    loops = {lp.function: lp for lp in chipcost.kernel_loops(dot8)}
    loop = loops["dot8"]
    assert {k: getattr(loop, k) for k in DOT8_LOOP} == DOT8_LOOP
    assert (loop.start, loop.end) == (0x6B, 0xCA)
    assert loop.asm[0].split()[:2] == ["6b:", "l32i"] and "bnez" in loop.asm[-1]
    # the model: 38 instructions + 9 load-use + 1 mull-use + 2 taken branches x 2
    assert loop.cycles_per_mac == 38 + 9 + 1 + 2 * xtensa_loops.TAKEN_BRANCH_CYCLES
    assert loops["plain"].multiplies == 0 and loops["plain"].instructions_per_mac is None
    given = chipcost.kernel_loops(dot8, macs={"dot8": 2})
    assert [lp.instructions_per_mac for lp in given if lp.function == "dot8"] == [19]


@needs_objdump
def test_only_innermost_loops_and_calls_are_flagged(tmp_path):
    source = tmp_path / "nested.py"
    source.write_text("import micropython\n"
                      "def h(x):\n    return x\n"
                      "@micropython.viper\n"
                      "def f(n: int) -> int:\n    s = 0\n"
                      "    for i in range(n):\n        for k in range(n):\n"
                      "            s += int(h(k)) * i\n    return s\n")
    (loop,) = chipcost.kernel_loops(source)
    assert loop.function == "f" and loop.calls >= 1 and loop.multiplies == 1
    row = chipcost.markdown_table([loop]).splitlines()[-1]
    assert "calls!" in row and "| >=" in row


def matmul_loops():
    """The matmul kernel's innermost loops, the one with the most multiplies (its MAC loop,
    an unrolled body rather than a remainder loop) first."""
    loops = [lp for lp in chipcost.kernel_loops(KERNELS) if lp.function == MATMUL_KERNEL]
    assert loops, "no loop in %s: set MATMUL_KERNEL to the int8 matmul's name" % MATMUL_KERNEL
    return sorted(loops, key=lambda lp: -lp.multiplies)


@needs_objdump
def test_matmul_kernel_loops_do_not_call_out():
    loops = matmul_loops()
    assert loops[0].multiplies >= 1, "no multiplying loop in %s" % MATMUL_KERNEL
    assert all(lp.calls == 0 for lp in loops), chipcost.markdown_table(loops)
    assert loops[0].loads >= loops[0].macs  # each MAC reads at least one operand


@needs_objdump
def test_matmul_inner_loop_budget():
    """Issue 10: at most 16 xtensawin instructions per MAC in the int8 matmul's MAC loop,
    and in the attention core's unrolled dot products (scores and P V)."""
    loop = matmul_loops()[0]
    assert loop.instructions_per_mac <= MATMUL_BUDGET, chipcost.markdown_table([loop])
    core = [lp for lp in chipcost.kernel_loops(ATTENTION_KERNELS)
            if lp.function == ATTENTION_CORE]
    unrolled = [lp for lp in core if lp.multiplies == loop.multiplies]
    assert len(unrolled) == 2, chipcost.markdown_table(core)
    assert all(lp.instructions_per_mac <= MATMUL_BUDGET for lp in unrolled), \
        chipcost.markdown_table(unrolled)


@needs_objdump
def test_command_line_json():
    out = subprocess.run([sys.executable, "-m", "tinyattn_host", "chipcost", str(KERNELS),
                          "--json", "--function", MATMUL_KERNEL],
                         check=True, capture_output=True, text=True).stdout
    loops = json.loads(out)
    assert {loop["function"] for loop in loops} == {MATMUL_KERNEL}
    loop = max(loops, key=lambda lp: lp["multiplies"])
    assert loop["instructions_per_mac"] == matmul_loops()[0].instructions_per_mac
    bad = subprocess.run([sys.executable, "-m", "tinyattn_host", "chipcost", str(KERNELS),
                          "--function", "nope"], capture_output=True, text=True)
    assert bad.returncode != 0 and "no loop in function(s) nope" in bad.stderr


def test_a_stream_steps_macs_are_its_dots_counted_by_hand():
    """The vowels model (Dense 12x24, encoder E 24 F 48, Dense 24x9), 29 keys cached: 288 +
    4*24*24 + 2*24*29 + 2*24*48 + 216 multiply-adds (tinyattn.nn.stream's np.dot calls)."""
    from tinyattn_host.chipcost.stream_estimate import step_macs
    from tinyattn_host.vowels import causal_config

    assert step_macs(causal_config(), 29) == 288 + 2304 + 1392 + 2304 + 216


def test_a_stream_steps_macs_follow_the_weights_of_a_grouped_query_encoder():
    """E 8, 4 heads sharing 2 key/value heads (Wk, Wv 4 x 8), F 16, 5 keys cached: the four
    projections 64 + 32 + 32 + 64, the feed-forward 2 * 8 * 16, the scores and P V 2 * 8 * 5;
    a LayerNorm and a PositionalEmbedding (no np.dot in a step) add none."""
    from tinyattn_host.chipcost.stream_estimate import step_macs

    config = [["PositionalEmbedding", 6, 8], ["LayerNorm", 8],
              ["TransformerEncoderLayer", 8, 4, 16, 0.0, "relu", False, 1e-5, 6, True, 2]]
    assert step_macs(config, 5) == 64 + 32 + 32 + 64 + 256 + 80
