"""int8/pie_layout.py (plain Python) in CPython: the PIE kernel's operand buffer at every
misalignment of its bytearray, against the layout its docstring states, built with NumPy."""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

SOURCE = Path(__file__).resolve().parents[2] / "device" / "tinyattn" / "int8" / "pie_layout.py"
spec = importlib.util.spec_from_file_location("pie_layout", SOURCE)
pie_layout = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pie_layout)


@pytest.mark.parametrize("misalign", range(16))
@pytest.mark.parametrize("cols, depth", [(1, 1), (3, 31), (2, 32), (5, 33), (4, 100)])
def test_rows_start_on_16_byte_boundaries_signed_and_zero_padded(misalign, cols, depth):
    rng = np.random.default_rng(cols * 1000 + depth)
    u = rng.integers(0, 256, cols * depth)  # offset binary
    out = pie_layout.operands(bytearray(u.tolist()), cols, depth, lambda buf: 48 + misalign)
    row = 32 * -(-depth // 32)
    first = (16 - misalign) % 16
    assert (48 + misalign + first) % 16 == 0
    assert len(out) == 16 + row * (cols + 1) + 16
    got = np.frombuffer(bytes(out), dtype=np.int8)
    want = np.zeros(len(out), dtype=np.int8)
    weights = np.zeros((cols, row), dtype=np.int64)
    weights[:, :depth] = u.reshape(cols, depth) - 128
    want[first + row:first + row * (cols + 1)] = weights.ravel()
    assert np.array_equal(got, want)


def test_short_weights_are_refused():
    with pytest.raises(ValueError, match="w holds 5 bytes, \\(2, 3\\) weights need 6"):
        pie_layout.operands(bytearray(5), 2, 3, lambda buf: 0)
