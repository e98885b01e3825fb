"""The host end of the protocol against the golden frames (the same bytes the device test reads)."""

import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from tinyattn_host import protocol as P

GOLDEN = json.loads((Path(__file__).parents[1] / "support" / "golden_frames.json").read_text())


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_golden_frame_layout_by_hand(case):
    """The layout of docs/protocol.md, read with struct and zlib only."""
    data = bytes.fromhex(case["hex"])
    assert data[:2] == b"\xa5T"
    kind, flags, seq, length, check = struct.unpack("<BBHHI", data[2:12])
    payload = data[12:]
    assert (kind, flags, seq) == (case["type"], case["flags"], case["seq"])
    assert length == len(payload) and payload.hex() == case["payload"]
    assert check == zlib.crc32(data[2:8] + payload)


@pytest.mark.parametrize("case", GOLDEN, ids=[c["name"] for c in GOLDEN])
def test_golden_frames_encode_and_parse(case):
    payload = bytes.fromhex(case["payload"])
    assert P.frame(case["type"], case["seq"], payload, case["flags"]).hex() == case["hex"]
    assert P.parse_frame(bytes.fromhex(case["hex"])) == (
        case["type"], case["flags"], case["seq"], payload)
    if "head" in case:
        head, arrays = P.decode(payload)
        assert head == case["head"]
        assert sorted(arrays) == sorted(case["arrays"])
        for name, want in case["arrays"].items():
            assert arrays[name].dtype == P.DTYPES[want["dtype"]]
            assert arrays[name].shape == tuple(want["shape"])
            np.testing.assert_array_equal(arrays[name].ravel(), want["values"])
        assert P.encode(case["head"], arrays) == payload


def test_chunks_join_to_the_message():
    payload = bytes(range(256)) * 3
    parts = P.frames(P.LOAD_MODEL, 9, payload, chunk=192)
    assert len(parts) == 4
    parsed = [P.parse_frame(part) for part in parts]
    assert [flags for _, flags, _, _ in parsed] == [P.MORE] * 3 + [0]
    assert b"".join(p for _, _, _, p in parsed) == payload
    assert all(len(part) <= P.HEADER + 192 for part in parts)


def test_damaged_frames_are_refused():
    good = P.frame(P.HELLO, 1, b"abc")
    with pytest.raises(P.ProtocolError, match="CRC"):
        P.parse_frame(good[:-1] + b"x")
    with pytest.raises(P.ProtocolError, match="payload bytes"):
        P.parse_frame(good[:-1])
    with pytest.raises(P.ProtocolError, match="not a frame"):
        P.parse_frame(b"xx" + good[2:])


def test_records_keep_dtypes_and_values():
    rng = np.random.default_rng(1)
    arrays = {"w": rng.normal(size=(3, 5)), "q": rng.integers(-128, 128, (2, 4)).astype(np.int8),
              "acc": rng.integers(-2**31, 2**31, 6).astype(np.int32)}
    head, back = P.decode(P.encode({"k": 1}, arrays))
    assert head == {"k": 1}
    np.testing.assert_array_equal(back["w"], arrays["w"].astype(np.float32))
    np.testing.assert_array_equal(back["q"], arrays["q"])
    np.testing.assert_array_equal(back["acc"], arrays["acc"])
    with pytest.raises(ValueError, match="only 1-D and 2-D"):
        P.encode({}, {"t": np.zeros((1, 2, 3))})
    with pytest.raises(P.ProtocolError, match="describes"):
        P.decode(P.encode({}, arrays) + b"\x00")


class _Loopback:
    """A port whose device side is scripted: answers are queued bytes."""

    def __init__(self, answers):
        self.written = []
        self.answers = answers

    def write(self, data):
        self.written.append(bytes(data))
        if self.answers:
            self.pending = self.answers.pop(0)

    def read(self, n):
        data, self.pending = getattr(self, "pending", b""), b""
        return data

    @property
    def in_waiting(self):
        return len(getattr(self, "pending", b""))


def test_link_waits_for_each_ack_and_skips_noise():
    payload = P.encode({}, {"x": np.zeros((10, 8))})  # 320 bytes of floats: two chunks
    ack = P.frame(P.ACK, 1, struct.pack("<I", 192))
    reply = P.frame(P.FORWARD | P.REPLY, 1, P.encode({"ok": True}))
    port = _Loopback([b"OK" + ack, b"\x04 noise " + reply])
    link = P.Link(port)
    head, _ = P.decode(link.request_raw(P.FORWARD, payload))
    assert head == {"ok": True}
    assert len(port.written) == 2
    assert P.parse_frame(port.written[0])[1] == P.MORE


def test_link_raises_the_device_error():
    port = _Loopback([P.frame(P.ERROR, 1, b"\x08array x holds NaN or infinity")])
    with pytest.raises(P.ErrorReply, match="NOT_FINITE: array x holds NaN") as info:
        P.Link(port).request(P.FORWARD, {}, {"x": np.zeros((1, 4))})
    assert info.value.code == 8


def test_the_host_reads_the_devices_own_table_of_constants():
    from tinyattn_host import modelfile
    from tinyattn_host.virtual.unixport import DEVICE_DIR

    assert Path(P.wire.__file__) == DEVICE_DIR / "tinyattn" / "link" / "wire.py"
    assert (P.MAGIC, P.CHUNK, P.FORWARD, P.ERRORS[7]) == (b"\xa5T", 192, 0x21, "BAD_VALUE")
    assert (modelfile.MAGIC, modelfile.VERSION) == (P.wire.FILE_MAGIC, P.wire.FILE_VERSION)
    assert {code: dtype.itemsize for code, dtype in P.DTYPES.items()} == P.wire.ITEMSIZE
