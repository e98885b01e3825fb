"""The host's reader and writer of the model file format, against the documented layout."""

import json
import struct
import zlib

import numpy as np
import pytest

from tinyattn_host.modelfile import ModelFileError, read_model, write_model


def test_layout_is_the_documented_one(tmp_path):
    path = tmp_path / "m.bin"
    write_model(path, "k", {"a": 1}, {"w": np.array([[1.5, -2.0]]), "q": np.array([-3, 4], np.int8)})
    data = path.read_bytes()
    meta = json.dumps({"a": 1}).encode()
    body = (b"TINYATTN" + struct.pack("<H", 1) + struct.pack("<H", 1) + b"k"
            + struct.pack("<I", len(meta)) + meta + struct.pack("<H", 2)
            + struct.pack("<H", 1) + b"w" + b"f" + struct.pack("<BII", 2, 1, 2)
            + struct.pack("<2f", 1.5, -2.0)
            + struct.pack("<H", 1) + b"q" + b"b" + struct.pack("<BI", 1, 2) + struct.pack("<2b", -3, 4))
    assert data == body + struct.pack("<I", zlib.crc32(body)) + b"END."
    assert not (tmp_path / "m.bin.tmp").exists()


def test_round_trip_keeps_dtypes_shapes_and_order(tmp_path):
    arrays = {"b": np.arange(6, dtype=np.float64).reshape(2, 3) / 7,
              "a": np.array([1, -2, 3], np.int32), "c": np.array([[255, 0]], np.uint8),
              "d": np.array([-5, 6], np.int16), "e": np.array([-128, 127], np.int8)}
    write_model(tmp_path / "m.bin", "int8-sequential", {"config": [["Dense", 2, 3, True]]}, arrays)
    kind, meta, got = read_model(tmp_path / "m.bin")
    assert kind == "int8-sequential" and meta == {"config": [["Dense", 2, 3, True]]}
    assert list(got) == list(arrays)
    assert got["b"].dtype == np.float32 and np.array_equal(got["b"], arrays["b"].astype(np.float32))
    for name in "acde":
        assert got[name].dtype == arrays[name].dtype and np.array_equal(got[name], arrays[name])


def resealed(data):
    """data with its CRC-32 made right again (a damaged file that passes the CRC check)."""
    return data[:-8] + struct.pack("<I", zlib.crc32(data[:-8])) + data[-4:]


def test_bad_files_get_clear_errors(tmp_path):
    path = tmp_path / "m.bin"
    write_model(path, "sequential", {}, {"w": np.ones((3, 4))})
    data = path.read_bytes()
    cases = {
        "foreign": (b"\x89PNG\r\n\x1a\n...", "not a tinyattn model file"),
        "empty": (b"", "not a tinyattn model file"),
        "v9": (data[:8] + struct.pack("<H", 9) + data[10:], "format version 9"),
        "short": (data[:40], "truncated"),
        "no_end": (data[:-4], "truncated"),
        "flipped": (data[:-20] + bytes([data[-20] ^ 1]) + data[-19:], "corrupt: CRC mismatch"),
        "longer": (data + b"x", "1 unexpected bytes"),
        "dims": (resealed(data.replace(b"\x01\x00wf\x02", b"\x01\x00wf\x03")), "3 dimensions"),
        "damaged": (data.replace(b"\x01\x00wf\x02", b"\x01\x00wf\x03"), "corrupt: CRC mismatch"),
        "no_marker": (data[:-1] + b"?", "corrupt: no end marker"),
    }
    for name, (content, words) in cases.items():
        (tmp_path / name).write_bytes(content)
        with pytest.raises(ModelFileError, match=words):
            read_model(tmp_path / name)
    with pytest.raises(ValueError, match="cannot be stored"):
        write_model(tmp_path / "x.bin", "k", {}, {"z": np.zeros((2, 2, 2))})
