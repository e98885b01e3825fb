"""quantize(model, "rows.npy") reads the calibration rows a batch at a time
(device/tinyattn/npy_rows.py): the int8 file is the one quantizing the same rows from an
array writes, byte for byte, float32 and float64 files alike; on a 32-bit real-ulab port
1,000 rows of issue 34's sensor model (480 KB of floats) calibrate in a 2 MB heap and leave
it where it was (tests/board/scripts/calibrate_npy.py). A bad file is one line on any port."""

import numpy as np
import pytest

from board_cases import BOARD_DIR
from heap_budget import board_heap
from sensor_files import FEATURES, SEQ_LEN, sensor_files
from tinyattn_host.virtual import unixport

SCRIPT = BOARD_DIR / "scripts" / "calibrate_npy.py"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return sensor_files(tmp_path_factory.mktemp("calibrate"), int8=False)


def real_ulab():
    if not unixport.has_ulab():
        pytest.skip("the stand-in quantizes the sensor model in minutes: a real ulab "
                    "(MICROPYTHON=...) runs it")


def rows_files(folder, count):
    x = np.random.default_rng(34).uniform(-1, 1, (count, SEQ_LEN * FEATURES)).astype(np.float32)
    np.save(folder / "x32.npy", x)
    np.save(folder / "x64.npy", x.astype(np.float64))
    x.tofile(folder / "x.f32")
    return x.shape


def quantize_both(files, folder, heap, count):
    lib, float_file, _ = files
    rows, cols = rows_files(folder, count)
    kept = []
    for name in ("x32", "x64"):
        out = unixport.run_file(SCRIPT, heap=heap, device_dir=lib, args=(
            str(float_file), "npy", str(folder / (name + ".npy")), str(folder / (name + ".bin"))))
        kept.append(int(out.split()[-1]))
    unixport.run_file(SCRIPT, heap="8m", device_dir=lib, args=(
        str(float_file), "array", str(folder / "x.f32"), str(rows), str(cols),
        str(folder / "array.bin")))
    want = (folder / "array.bin").read_bytes()
    assert (folder / "x32.bin").read_bytes() == want
    assert (folder / "x64.bin").read_bytes() == want
    return kept


def test_rows_from_a_npy_file_quantize_as_the_array_does(files, tmp_path):
    real_ulab()
    quantize_both(files, tmp_path, "8m", 40)


def test_1000_rows_calibrate_in_2m_and_leave_the_heap_where_it_was(files, tmp_path):
    real_ulab()
    kept = quantize_both(files, tmp_path, board_heap("2m"), 1000)
    assert max(kept) <= 256, kept  # the heap after the second quantize, less the first's


def test_a_bad_npy_file_is_one_clear_line(files, tmp_path):
    lib, float_file, _ = files
    np.save(tmp_path / "wide.npy", np.zeros((4, 7), np.float32))
    np.save(tmp_path / "ints.npy", np.zeros((4, 120), np.int32))
    bad = np.zeros((4, 120), np.float32)
    bad[2, 5] = np.nan
    np.save(tmp_path / "nan.npy", bad)
    (tmp_path / "text.npy").write_text("not numpy")
    wanted = {"wide.npy": "has 7 columns; the model takes 120", "ints.npy": "float32 or float64",
              "nan.npy": "NaN or infinity in rows 0..3", "text.npy": "is not a .npy file"}
    for name, words in wanted.items():
        with pytest.raises(unixport.MicroPythonError) as err:
            unixport.run_file(SCRIPT, heap="8m", device_dir=lib, args=(
                str(float_file), "npy", str(tmp_path / name), str(tmp_path / "out.bin")))
        assert "ValueError" in str(err.value) and words in str(err.value), (name, str(err.value))
