"""What the digits model and issue 20's model (tests/fixtures/torch/base: 16 tokens x 12
features, two encoder layers of 32, 18k parameters) need to run one sample, with the package
deployed as .mpy (tests/board/scripts/one_sample.py). A real ulab only (the stand-in's heap
figures mean nothing); docs/your-model.md has the figures of

    MICROPYTHON=<a 32-bit ulab port> .venv/bin/python -m pytest -p no:xdist -s \
        tests/device/test_model_heap.py

(the table is printed)."""

from pathlib import Path

import pytest

from board_cases import BOARD_DIR
from heap_budget import board_heap
from tinyattn_host.bench.bench import compiled_package
from tinyattn_host.interop.statedict import import_npz, read_description
from tinyattn_host.virtual import unixport

SCRIPT = BOARD_DIR / "scripts" / "one_sample.py"
TORCH = Path(__file__).resolve().parents[1] / "fixtures" / "torch" / "base"
BOARD_HEAP = "300k"  # a board without PSRAM: a 32-bit figure (heap_budget)


@pytest.fixture(scope="module")
def heap_models(tmp_path_factory):
    """(package folder, {model name: model file}), the package compiled as deploy ships it."""
    if not unixport.has_ulab():
        pytest.skip("heap figures need a real ulab (MICROPYTHON=...); the stand-in's mean nothing")
    folder = tmp_path_factory.mktemp("heap")
    compiled_package(unixport.interpreter(), folder / "lib")
    models = {"digits": folder / "digits.bin", "issue 20": folder / "issue20.bin"}
    unixport.run_file(SCRIPT, heap="4m", args=("--save-digits", str(models["digits"])),
                      device_dir=folder / "lib")
    import_npz(TORCH / "model.npz", read_description(TORCH / "layers.json"), models["issue 20"])
    return folder / "lib", models


def run(heap_models, name, heap, *args):
    """The script's figures {what: bytes} for one model at `heap` (MicroPythonError if not)."""
    lib, models = heap_models
    out = unixport.run_file(SCRIPT, heap=heap, args=(str(models[name]), *args),
                            device_dir=lib)
    return dict((line.split()[0], int(line.split()[1])) for line in out.splitlines()
                if line.split()[0] in ("params", "inference", "trainable"))


def fits(heap_models, name, kilobytes):
    try:
        run(heap_models, name, "%dk" % kilobytes)
        return True
    except unixport.MicroPythonError:
        return False


def smallest_heap(heap_models, name):
    """The smallest -X heapsize= (KB) that loads the model and runs one sample."""
    low, high = 8, 4096  # low fails, high fits
    assert not fits(heap_models, name, low) and fits(heap_models, name, high)
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if fits(heap_models, name, middle) else (middle, high)
    return high


def test_a_300k_board_loads_and_runs_issue_20s_model_one_sample(heap_models):
    figures = run(heap_models, "issue 20", board_heap(BOARD_HEAP))
    assert figures["inference"] > 4 * 18000  # the weights at least


def test_an_inference_model_holds_under_0_6_of_a_trainable_one(heap_models):
    rows = []
    for name in ("digits", "issue 20"):
        figures = run(heap_models, name, "4m", "trainable")
        ratio = figures["inference"] / figures["trainable"]
        rows.append((name, figures["params"], figures["inference"], figures["trainable"],
                     ratio, smallest_heap(heap_models, name)))
        assert ratio < 0.6, (name, figures)
    print("\n| model | parameters | held, inference | held, trainable | ratio "
          "| smallest heapsize |")
    for row in rows:
        print("| %s | %d | %d | %d | %.2f | %dk |" % row)
