"""The MAC16 linear kernel (device/tinyattn/int8/asm_mac16.py, @micropython.asm_xtensa with
LOOPGTZ and MULA.DD.*.LDINC) on the emulated chip: the board cases' 40 linear configurations
and the worst-case inputs, run with kernels.linear replaced by the MAC16 kernel on its operand
buffer (mac16_layout), bit for bit against the integer reference; its inner loop's cost."""

import pytest

from emulated_cases import LINEAR_CASES, fast_linear_case
from emulator_tools import loop_body_starts
from tinyattn_host.emulator.device_glue import DEVICE_DIR

ASM = DEVICE_DIR / "tinyattn" / "int8" / "asm_mac16.py"


@pytest.mark.parametrize("name", LINEAR_CASES)
def test_mac16_linear_matches_reference(emulator, linear_cases, name):
    calls = fast_linear_case(emulator, linear_cases, name, "Mac16")
    assert len(calls) >= {LINEAR_CASES[0]: 80}.get(name, 4)


def test_loop_bodies_start_4_byte_aligned(emulator):
    code = emulator.module(ASM)["linear"].loaded.code
    starts = loop_body_starts(code)
    assert len(starts) == 2 and all(s % 4 == 0 for s in starts), starts


def test_inner_loop_is_one_mac_per_instruction(emulator):
    """Two calls that differ only in depth differ by one instruction per MAC (plus the
    widening of the longer row: 6 instructions an item)."""
    import array

    from tinyattn_host.emulator.device_glue import device_package

    counts = {}
    with device_package(emulator):
        from tinyattn.int8 import asm_mac16, kernels as K, mac16_layout

        for depth in (64, 128):
            cols = 16
            w = bytearray((7 * i + 1) & 255 for i in range(cols * depth))
            x = array.array("b", [((5 * i) % 255) - 127 for i in range(depth)])
            out = array.array("i", bytes(4 * cols))
            h = K.linear_header(cols, depth)
            K.bind_linear(h, w, 1, x, out)
            asm_mac16.linear(h, mac16_layout.operands(w, cols, depth))
            counts[depth] = emulator.calls[-1].instructions
            want = [sum(x[k] * (w[j * depth + k] - 128) for k in range(depth))
                    for j in range(cols)]
            assert list(out) == want
    extra = counts[128] - counts[64]
    assert extra == 16 * 64 + 6 * 64, (counts, extra)
