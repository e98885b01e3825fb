"""Damaged model files, on the device (tests/board/case_damaged_files.py: float and int8
models saved there, then random bytes in each region, random cuts) and on the host
(modelfile.read_model, the same over the host's own files): always a clear error naming the
file and the damage, never a bare UnicodeError."""

import struct

import numpy as np
import pytest

from board_cases import board_test
from tinyattn_host import modelfile
from tinyattn_host.checks.run_check import IRIS_CONFIG, random_model

test_damaged_files_on_board = board_test("case_damaged_files", heap="512k")

WORDS = {"header": ("is corrupt", "not a tinyattn model file", "format version"),
         "meta": ("is corrupt",), "arrays": ("is corrupt",), "crc": ("is corrupt",)}


def file_regions(data):
    """{region: (start, end)} of a model file's bytes (the layout of store.py)."""
    kind_end = 12 + struct.unpack_from("<H", data, 10)[0]
    meta_end = kind_end + 4 + struct.unpack_from("<I", data, kind_end)[0]
    return {"header": (0, kind_end), "meta": (kind_end, meta_end),
            "arrays": (meta_end, len(data) - 8), "crc": (len(data) - 8, len(data))}


@pytest.mark.parametrize("kind", ["float", "int8"])
def test_the_host_refuses_a_file_damaged_anywhere_naming_it(tmp_path, kind):
    source = tmp_path / "model.bin"
    if kind == "float":
        modelfile.write_model(source, "sequential", {"config": IRIS_CONFIG}, random_model(3))
    else:
        modelfile.write_model(source, "quantized", {"layers": [{"kind": "Dense", "s_x": 0.5}]},
                              {"0.W": np.arange(-60, 60, dtype=np.int8).reshape(12, 10),
                               "0.b": np.arange(12, dtype=np.int32) * 1000})
    data = source.read_bytes()
    modelfile.read_model(source)
    path = tmp_path / "damaged.bin"
    rng = np.random.default_rng(11)
    for _ in range(200):
        for region, (start, end) in file_regions(data).items():
            count = min(end - start, int(rng.integers(1, 9)))
            at = int(rng.integers(start, end - count + 1))
            damaged = bytearray(data)
            damaged[at:at + count] = bytes(b ^ int(rng.integers(1, 256))
                                           for b in data[at:at + count])
            path.write_bytes(damaged)
            with pytest.raises(modelfile.ModelFileError) as err:
                modelfile.read_model(path)
            assert str(path) in str(err.value) and any(w in str(err.value) for w in WORDS[region])
        path.write_bytes(data[:int(rng.integers(0, len(data)))])
        with pytest.raises(modelfile.ModelFileError, match="is truncated at byte|not a tinyattn"):
            modelfile.read_model(path)
