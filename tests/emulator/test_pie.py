"""The PIE linear kernel (device/tinyattn/int8/asm_pie.py: EE.VMULAS.S8.ACCX.LD.IP on
16-byte-aligned int8 weights, pie_layout) on Espressif's emulated ESP32-S3 (QEMU_XTENSA_S3,
the user's own build; tinyattn_host.emulator.s3): the board cases' 40 linear configurations
and worst-case inputs with kernels.linear replaced by it, extreme int8 values at depths that
are no multiple of 16 or 32, bit for bit against the integer reference; its inner loop's cost.
Without QEMU_XTENSA_S3 the module skips with one line."""

import array

import numpy as np
import pytest

from tinyattn_host.emulator import s3

if s3.missing_reason():
    pytest.skip(s3.missing_reason(), allow_module_level=True)

from emulated_cases import LINEAR_CASES, fast_linear_case  # noqa: E402
from emulator_tools import loop_body_starts  # noqa: E402
from tinyattn_host.emulator.device_glue import DEVICE_DIR, device_package  # noqa: E402
from tinyattn_host.reference import int8 as ref  # noqa: E402

ASM = DEVICE_DIR / "tinyattn" / "int8" / "asm_pie.py"


@pytest.fixture(scope="module")
def emulator_s3():
    from tinyattn_host.emulator.machine import Emulator

    with Emulator(s3=True) as emu:
        yield emu


def test_the_s3_is_the_machine_the_harness_assumes():
    """Espressif's esp32s3 core, halted at its reset vector, its gdb register numbers as in
    s3.REG (a packet for a0..a15, past the stub's 212 registers, is refused)."""
    cpu = s3.S3Cpu()
    try:
        assert cpu.get("pc") == 0x40000400  # XCHAL_RESET_VECTOR_PADDR of the esp32s3 core
        assert cpu.get("windowbase") == 0 and cpu.get("ps") == 0x1F  # INTLEVEL 15, EXCM
        assert cpu.gdb.command("p%x" % 212).startswith("E")
        cpu.set("icountlevel", 1)
        assert cpu.get("icountlevel") == 1
    finally:
        cpu.close()


@pytest.mark.parametrize("name", LINEAR_CASES)
def test_pie_linear_matches_reference(emulator_s3, linear_cases, name):
    calls = fast_linear_case(emulator_s3, linear_cases, name, "Pie")
    assert len(calls) >= {LINEAR_CASES[0]: 40}.get(name, 2)


def _run(emu, x, w, cols, depth, rows=1, offset_binary=False):
    """The PIE kernel's int32 outputs of rows x (int8, or offset binary) times offset-binary
    w, and its executed instructions."""
    with device_package(emu):
        from tinyattn.int8 import backend_choice, kernels as K

        out = array.array("i", bytes(4 * rows * cols))
        h = K.linear_header(cols, depth)
        src = bytearray(x) if offset_binary else array.array("b", x)
        K.bind_linear(h, w, rows, src, out, offset_binary=offset_binary)
        pie = backend_choice.Pie()
        pie.linear(h, pie.operands(w, cols, depth))
        return list(out), emu.calls[-1].instructions


@pytest.mark.parametrize("depth", [1, 15, 17, 31, 33, 100, 4096])
def test_extreme_int8_values_are_exact(emulator_s3, depth):
    """x = -128 against w = -128 (+2^14 a product, the largest), and against 127 (the most
    negative sum), alternating signs: nothing saturates, every dot product exact."""
    cols, rows = 3, 2
    x = np.array([[-128] * depth, [(-128, 127)[k % 2] for k in range(depth)]])
    w = np.array([[-128] * depth, [127] * depth, [(127, -128)[k % 2] for k in range(depth)]])
    got, _ = _run(emulator_s3, x.ravel().tolist(), bytearray((w + 128).ravel().tolist()),
                  cols, depth, rows)
    assert got == ref.matmul_xwt(x, w).ravel().tolist()
    assert max(map(abs, got)) == depth * 128 * 128


def test_offset_binary_source_is_exact(emulator_s3):
    rng = np.random.default_rng(7)
    depth, cols, rows = 45, 5, 3
    x = rng.integers(-128, 128, (rows, depth))
    w = rng.integers(-128, 128, (cols, depth))
    got, _ = _run(emulator_s3, bytearray((x + 128).ravel().tolist()),
                  bytearray((w + 128).ravel().tolist()), cols, depth, rows, offset_binary=True)
    assert got == ref.matmul_xwt(x, w).ravel().tolist()


def test_loop_bodies_start_4_byte_aligned(emulator_s3):
    code = emulator_s3.module(ASM)["linear"].loaded.code
    starts = loop_body_starts(code)
    assert len(starts) == 2 and all(s % 4 == 0 for s in starts), starts


def test_inner_loop_is_8_macs_per_instruction(emulator_s3):
    """Two calls that differ only in depth (64 and 128, 16 columns) differ by 4 instructions
    a pass of 32 MACs a column (plus the copy of the longer row: 5 instructions an item):
    8 MACs an executed instruction in the inner loop, 16 a VMULAS."""
    cols = 16
    counts = {}
    for depth in (64, 128):
        x = [((5 * k) % 255) - 127 for k in range(depth)]
        w = bytearray((7 * i + 1) & 255 for i in range(cols * depth))
        got, counts[depth] = _run(emulator_s3, x, w, cols, depth)
        want = ref.matmul_xwt(np.array([x]), np.array(list(w)).reshape(cols, depth) - 128)
        assert got == want.ravel().tolist()
    extra = counts[128] - counts[64]
    passes = 64 // 32
    assert extra == cols * passes * 4 + 5 * 64, (counts, extra)
    assert cols * 64 / (cols * passes * 4) == 8


def test_pie_forward_equals_viper_and_its_projections_cost_over_10x_less():
    """The int8 Attention(64, 4) S = 64 forward with the backend's PIE choice (PIE linear,
    MAC16 attention core; their self-test run on the S3) gives viper's bytes; the four
    projections and the attention core each run >= 10x fewer instructions.
    On a machine of its own, as `emulate-pie` runs it."""
    from tinyattn_host.emulator import pie_counts
    from tinyattn_host.emulator.machine import Emulator

    with Emulator(s3=True) as emu:
        m = pie_counts.measure(emu)
        text = pie_counts.section(emu, m)
    assert text.startswith(pie_counts.HEADING) and "| pie | 0.125 |" in text
    from tinyattn_host.emulator.backend_counts import split

    (vr, vout), (pr, pout) = m["forward"]["viper"], m["forward"]["pie"]
    assert vout == pout and any(vout)
    assert m["loop"]["pie"] == 1 / 8
    assert split(vr)[1] > 10 * split(pr)[1]
    assert vr[3].instructions > 10 * pr[3].instructions  # MAC16's attention core with PIE
