"""device/tinyattn/canonical_json.py (the int8 description's text on every board and the host):
each float32 as CPython's "%.8e" of it (correctly rounded by its own dtoa), on 100,000 random
bit patterns and the edges; keys sorted; what JSON cannot hold refused."""

import json
import random
import struct

import pytest

from tinyattn_host.device_modules import device_module

CANONICAL = device_module("canonical_json")


def float32(bits):
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def test_every_float32_is_written_as_cpythons_8e_of_it():
    rng = random.Random(34)
    patterns = [rng.getrandbits(32) & 0xFF7FFFFF for _ in range(100000)]  # not inf or NaN
    patterns += [0x00000001, 0x007FFFFF, 0x00800000, 0x3F800000, 0x7F7FFFFF, 0x80000000,
                 0x358637BD, 0x4E6E6B28]  # subnormals, 1.0, the largest, -0.0, 1e-6, 1e9
    for bits in patterns:
        v = float32(bits)
        assert CANONICAL.float32_text(v) == "%.8e" % v, hex(bits)


def test_a_double_is_written_as_the_float32_a_board_holds():
    assert CANONICAL.float32_text(0.1) == "1.00000001e-01"
    back = json.loads(CANONICAL.float32_text(1 / 3))  # 9 digits: the float32 again
    assert struct.unpack("<f", struct.pack("<f", back))[0] == float32(0x3EAAAAAB)


def test_keys_are_sorted_and_values_keep_their_kind():
    text = CANONICAL.dumps({"b": [1, 2.5, None, True], "a": "x\"y", "c": {"z": (1, -2), "y": 0.0}})
    assert text == ('{"a": "x\\"y", "b": [1, 2.50000000e+00, null, true], '
                    '"c": {"y": 0.00000000e+00, "z": [1, -2]}}')
    assert json.loads(text)["c"]["z"] == [1, -2]


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 1e39, object()])
def test_what_json_cannot_hold_is_refused(value):
    with pytest.raises((ValueError, TypeError, OverflowError)):
        CANONICAL.dumps([value])
