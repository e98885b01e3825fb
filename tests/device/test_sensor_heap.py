"""Issue 34's heap figures, with the package as deployed (.mpy) on a real ulab (the stand-in's
figures mean nothing): its sensor model (tests/sensor_files.py) loads and runs one sample in
a board's heap, float and int8, and a load holds one copy of the weights. docs/your-model.md
has the table of

    MICROPYTHON=<a real-ulab port> .venv/bin/python -m pytest -p no:xdist -s \\
        tests/device/test_sensor_heap.py -k table

(the table is printed; 32-bit and 64-bit ports alike)."""

import pytest

from heap_budget import board_heap
from sensor_files import SCRIPT, held, sensor_files, smallest_heap
from tinyattn_host.virtual import unixport

SLACK_KB = 48  # a load's peak over what the loaded model holds (32-bit; twice that on 64-bit)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if not unixport.has_ulab():
        pytest.skip("heap figures need a real ulab (MICROPYTHON=...); the stand-in's mean nothing")
    return sensor_files(tmp_path_factory.mktemp("sensor"))


def test_the_float_file_loads_and_runs_one_sample_in_300k(files):
    lib, float_file, _ = files
    assert held(lib, float_file, "float", "run", board_heap("300k")) > 4 * 22000  # weights


def test_the_int8_file_loads_and_runs_one_sample_in_128k(files):
    lib, _, int8_file = files
    assert held(lib, int8_file, "int8", "run", board_heap("128k")) > 30000


def test_a_load_holds_one_copy_of_the_weights(files, tmp_path):
    """One Dense(200, 200) (a 160 KB array): the load fits the heap of what the loaded model
    holds plus SLACK_KB, less than the array (the loader that kept every array while it built needed 744k on
    i686 for it, with 202 KB held)."""
    lib = files[0]
    wide = tmp_path / "wide.bin"
    unixport.run_file(SCRIPT, heap="4m", args=("--save-wide", str(wide)), device_dir=lib)
    kept = held(lib, wide, "float", "load", "4m")
    assert kept > 160000
    slack = SLACK_KB * unixport.word_bits(unixport.interpreter()) // 32
    held(lib, wide, "float", "load", "%dk" % (kept // 1024 + slack))


def test_heap_table(files):
    """Prints docs/your-model.md's table for this interpreter."""
    lib, float_file, int8_file = files
    bits = unixport.word_bits(unixport.interpreter())
    print("\n%d-bit port (%s)" % (bits, unixport.interpreter()))
    print("| model | file bytes | held after load | smallest heap: load "
          "| held after one sample | smallest heap: load + one sample |")
    print("|---|---|---|---|---|---|")
    for kind, path in (("float", float_file), ("int8", int8_file)):
        row = [kind, path.stat().st_size]
        for what in ("load", "run"):
            row += [held(lib, path, kind, what, "4m"), "%dk" % smallest_heap(lib, path, kind, what)]
        print("| %s | %d | %d | %s | %d | %s |" % tuple(row))
