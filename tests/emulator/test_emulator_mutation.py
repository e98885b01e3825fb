"""A deliberately wrong kernel is caught: one instruction's immediate flipped in the machine
code extracted from the .mpy (linear's unrolled loop loads w[2] where it should load w[3]),
then the board case that checks linear against the reference runs on it and fails."""

import pytest

from emulated_cases import run_case, write_case
from tinyattn_host.emulator.machine import Emulator
from tinyattn_host.chipcost.xtensa_loops import disassemble, innermost_loops


def flip_w3_load(name, code):
    """linear's code with `l8ui aX, aW, 3` of its 8-way loop made `l8ui aX, aW, 2`."""
    if name != "linear":
        return code
    instructions = disassemble(code)
    unrolled = max(innermost_loops(instructions), key=lambda lp: lp[1] - lp[0])
    body = instructions[unrolled[0]:unrolled[1] + 1]
    load = next(i for i in body if i.mnemonic == "l8ui" and i.operands[2] == "3")
    patched = bytearray(code)
    assert patched[load.address + 2] == 3  # RRI8: the immediate is the third byte
    patched[load.address + 2] = 2
    return bytes(patched)


def test_a_flipped_immediate_in_linear_is_caught(tmp_path):
    import test_kernels

    fixtures = {"linear%02d" % seed: {"seed": seed, "c": c,
                                      "dst": test_kernels.linear_reference(c).tolist()}
                for seed, c in enumerate(test_kernels.LINEAR_CONFIGS)}
    folder = write_case(tmp_path, "case_kernels", fixtures)
    with Emulator(patch=flip_w3_load) as wrong:
        with pytest.raises(AssertionError, match=r"linear\d\d \(seed \d+\)") as caught:
            run_case(wrong, folder, "case_kernels", "test_linear_matches_reference_bit_for_bit")
        assert any(call.name == "linear" for call in wrong.calls)
    assert "differ" in str(caught.value)
