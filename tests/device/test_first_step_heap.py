"""A fresh layer's first forward + backward fits where a training loop's does: the gradient
buffers are made at the first training forward, before its caches (nn/layer.py,
Layer.grads_first), not in backward when the caches have cut the heap into pieces. Issue 34:
Attention(64, 4) in 256 KB on a 32-bit port (.mpy, real ulab) fitted only up to S = 29
without zero_grad() first (S = 23 in the issue's session), up to 33 with it.
tests/board/scripts/attention_first_step.py is the step."""

import pytest

from board_cases import BOARD_DIR
from heap_budget import board_heap
from tinyattn_host.bench.bench import compiled_package
from tinyattn_host.virtual import unixport

SCRIPT = BOARD_DIR / "scripts" / "attention_first_step.py"


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    if not unixport.has_ulab():
        pytest.skip("heap figures need a real ulab (MICROPYTHON=...); the stand-in's mean nothing")
    folder = tmp_path_factory.mktemp("first_step") / "lib"
    compiled_package(unixport.interpreter(), folder)
    return folder


@pytest.mark.parametrize("first", ["plain", "zero_grad"])
def test_every_S_up_to_32_fits_256k_either_way(lib, first):
    heap = board_heap("256k")
    failed = []
    for S in range(1, 33):
        try:
            out = unixport.run_file(SCRIPT, heap=heap, args=(str(S), first), device_dir=lib)
            assert out.split() == ["ok"]
        except unixport.MicroPythonError as err:
            failed.append((S, str(err).splitlines()[-1]))
    assert not failed, failed
