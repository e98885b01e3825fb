"""Malformed items for the link's fuzz test (tests/e2e/test_link_fuzz.py), of every kind:
frames, records, head fields, config entries, arrays, int8 model descriptions, chunks."""

import json
import struct

import numpy as np

from tinyattn_host import protocol as P
from tinyattn_host.checks.run_check import IRIS_CONFIG

UNKNOWN_KINDS = [k for k in (0x00, 0x09, 0x0F, 0x11, 0x26, 0x2F, 0x33, 0x7F, 0x81, 0xA1, 0xFF)
                 if k not in P.MESSAGES]  # replies (0x80 | kind) are no request either
assert len(UNKNOWN_KINDS) == 11, "a message kind the fuzzer calls unknown is a request now"

W = P.wire
# The messages that carry a record (PART frames carry raw bytes of a TRANSFER, EXIT nothing;
# ACK, ERROR and RECORD go from the device to the host)
REQUESTS = [kind for kind in P.MESSAGES
            if kind not in (P.EXIT, P.ACK, P.ERROR, P.PART, P.RECORD)]
LENIENT = [b'{"a":}', b'{"a" 1}', b'{,}', b'{"a":1,}', b'{"attention": true,}', b'{"a"}',
           b'{"lr": 0.1 "optimizer": "sgd"}', b'{"batch": 01}', b'{1: 2}', b'{"x": [1 2]}',
           b'{"x": [1,,2]}', b'{"s": "\\x"}', b'{"s": "\x01"}', b'{"a": 1.}',
           b'{"arrays": [["x" "f" [1, 4]]]}', b'{"a": [:]}']
"""JSON heads that MicroPython's own json.loads takes (',' and ':' are blanks to it)."""


def record(head_bytes, blob=b""):
    """A record from raw head bytes and raw array bytes."""
    return struct.pack("<H", len(head_bytes)) + head_bytes + blob


def jrecord(head, blob=b""):
    return record(json.dumps(head).encode(), blob)


class Fuzz:
    """Makers of malformed items: each returns (frames' bytes, expected answer).

    The expected answer is an error name, "ACK" (the first chunk of a message that is then
    dropped) or None (garbage the device skips silently).
    """

    def __init__(self, rng, params, qhead, qarrays, X):
        self.rng, self.params, self.qhead, self.qarrays, self.X = rng, params, qhead, qarrays, X
        self.seq = 1000

    def next_seq(self):
        self.seq = self.seq % 60000 + 1
        return self.seq

    def message(self, kind, payload):
        return b"".join(P.frames(kind, self.next_seq(), payload))

    def request(self, kind, head=None, arrays=()):
        return self.message(kind, P.encode(head, arrays))

    def pick(self, options):
        return options[int(self.rng.integers(len(options)))]

    def rows(self, n=None, cols=4):
        n = int(self.rng.integers(1, 6)) if n is None else n
        return self.rng.normal(size=(n, cols))

    # ---- frames ----------------------------------------------------------------------------
    def bad_crc(self):
        data = bytearray(self.request(P.STATUS))
        at = self.pick([2, 3, 4, 5, 8, 9, 10, 11] + list(range(12, len(data))))
        data[at] ^= 1 << int(self.rng.integers(8))
        return bytes(data), "BAD_CRC"

    def oversized(self):
        fields = struct.pack("<BBHH", P.FORWARD, 0, self.next_seq(),
                             W.CHUNK + 1 + int(self.rng.integers(65535 - W.CHUNK)))
        return P.MAGIC + fields + bytes(4), "OVERSIZED"

    def unknown_type(self):
        kind = self.pick(UNKNOWN_KINDS)
        return P.frame(kind, self.next_seq(), P.encode()), "UNKNOWN_TYPE"

    def garbage(self):
        junk = self.rng.integers(0, 256, int(self.rng.integers(1, 60))).astype(np.uint8)
        return junk.tobytes().replace(b"\xa5", b"\x00"), None

    def abandoned_chunk(self):
        part = P.frames(P.LOAD_MODEL, self.next_seq(), bytes(400))[0]
        return part, "ACK"

    # ---- records ---------------------------------------------------------------------------
    def short_record(self):
        return self.message(self.pick([P.FORWARD, P.HELLO, P.STATUS]),
                            bytes(int(self.rng.integers(2)))), "BAD_PAYLOAD"

    def head_past_the_record(self):
        size = self.pick([5, 100, W.MAX_HEAD, W.MAX_HEAD + 1, 65535])
        return self.message(P.FORWARD, struct.pack("<H", size) + b"{}"), "BAD_PAYLOAD"

    def not_json(self):
        """A head that is not JSON, for any request: BAD_PAYLOAD whatever else is wrong."""
        junk = self.rng.integers(0, 256, int(self.rng.integers(1, 40))).astype(np.uint8)
        text = self.pick([junk.tobytes(), b"{", b'{"x": }', b"{'a': 1}", b'{"lr": NaN}',
                          b"[" * 200, b'{"a": "\\ud800', b"\xff\xfe{}"] + LENIENT)
        return self.message(self.pick(REQUESTS), record(text)), "BAD_PAYLOAD"

    def head_not_object(self):
        text = self.pick([b"[]", b"5", b'"head"', b"null", b"true", b"[1, 2]", b"-0.5"])
        return self.message(P.STATUS, record(text)), "BAD_PAYLOAD"

    def bad_array_list(self):
        entry = self.pick([
            5, "x", [["x", "f"]], [[1, "f", [1]]], [["x", "d", [1]]], [["x", "f", [1, 2, 3]]],
            [["x", "f", []]], [["x", "f", [-1, -4]]], [["x", "f", [0, 10 ** 9]]],
            [["x", "f", [10 ** 9, 0]]], [["x", "f", [2 ** 40, 2 ** 40]]], [["x", "f", [1.5]]],
            [["x", "f", [True]]], [["x", "f", "4"]], [["x", "f", [2 ** 70]]], [None],
            [["a", "f", [-1, 1]], ["x", "f", [2, 4]]],  # a negative shape hides an array
            [["x", "f", [1, 4]], ["x", "f", [1, 4]]],  # a name twice
        ])
        return self.message(P.FORWARD, jrecord({"arrays": entry}, bytes(32))), "BAD_PAYLOAD"

    def bytes_do_not_add_up(self):
        rows = int(self.rng.integers(1, 4))
        blob = self.rows(rows).astype("<f4").tobytes()
        cut = self.pick([-1, -3, 1, 4, -len(blob)])
        blob = blob[:cut] if cut < 0 else blob + bytes(cut)
        return self.message(P.FORWARD, jrecord({"arrays": [["x", "f", [rows, 4]]]}, blob)), \
            "BAD_PAYLOAD"

    # ---- head fields and arrays --------------------------------------------------------------
    def bad_head_field(self):
        kind, head, arrays, error = self.pick([
            (P.FORWARD, {"attention": "yes"}, {"x": self.rows()}, "BAD_VALUE"),
            (P.FORWARD, {"atention": True}, {"x": self.rows()}, "BAD_VALUE"),
            (P.FORWARD, {"int8": self.pick(["yes", 1, None])}, {"x": self.rows()}, "BAD_VALUE"),
            (P.HELLO, {"please": 1}, {}, "BAD_VALUE"),
            (P.STATUS, {}, {"x": self.rows()}, "BAD_PAYLOAD"),
            (P.GET_WEIGHTS, {"all": True}, {}, "BAD_VALUE"),
            (P.BENCH, {"batch": self.pick([0, -1, 10 ** 6, "16", 2.5, None, True])}, {},
             "BAD_VALUE"),
            (P.BENCH, {"repeat": self.pick([0, -3, W.MAX_REPEAT + 1, 10 ** 9, "3", [3]])}, {},
             "BAD_VALUE"),
            (P.QUANTIZE, {"bits": 4}, {"x": self.rows()}, "BAD_VALUE"),
            (P.FORWARD_INT8, {"scale": 1.0}, {"x": self.rows().astype(np.int8)}, "BAD_VALUE"),
        ])
        return self.request(kind, head, arrays), error

    def bad_train_step(self):
        x = self.rows(3)
        labels = np.array([0, 1, 2], dtype=np.int32)
        head, arrays, error = self.pick([
            ({"lr": self.pick([0, -0.1, 1e39, 1e300, 10 ** 400, "0.1", True, None, [0.1]])},
             {"x": x, "labels": labels}, "BAD_VALUE"),
            ({"optimizer": self.pick(["rmsprop", 3, None])}, {"x": x, "labels": labels},
             "BAD_VALUE"),
            ({}, {"x": x, "labels": np.array([0, 1, 3], dtype=np.int32)}, "BAD_VALUE"),
            ({}, {"x": x, "labels": np.array([0, -1, 2], dtype=np.int32)}, "BAD_VALUE"),
            ({}, {"x": x, "labels": np.array([0, 1], dtype=np.int32)}, "BAD_VALUE"),
            ({}, {"x": x, "labels": labels.astype(np.int8)}, "BAD_PAYLOAD"),
            ({}, {"x": x, "labels": labels.reshape(3, 1)}, "BAD_VALUE"),
            ({}, {"x": x}, "BAD_PAYLOAD"),
            ({}, {"x": self.with_nan(x), "labels": labels}, "NOT_FINITE"),
            ({}, {"x": self.rows(3, 5), "labels": labels}, "BAD_VALUE"),
        ])
        return self.request(P.TRAIN_STEP, head, arrays), error

    def with_nan(self, x):
        x = np.array(x, dtype=np.float64)
        x.flat[int(self.rng.integers(x.size))] = self.pick([np.nan, np.inf, -np.inf])
        return x

    def bad_batch(self):
        kind = self.pick([P.FORWARD, P.QUANTIZE])
        arrays, error = self.pick([
            ({"x": self.with_nan(self.rows())}, "NOT_FINITE"),
            ({"x": self.rows(cols=int(self.rng.integers(1, 4)))}, "BAD_VALUE"),
            ({"x": self.rows(cols=5)}, "BAD_VALUE"),
            ({"x": self.rows()[0]}, "BAD_VALUE"),
            ({"x": self.rows().astype(np.int8)}, "BAD_PAYLOAD"),
            ({"y": self.rows()}, "BAD_PAYLOAD"),
            ({"x": self.rows(), "extra": self.rows()}, "BAD_PAYLOAD"),
        ])
        return self.request(kind, {}, arrays), error

    def bad_int8_batch(self):
        arrays, error = self.pick([
            ({"x": self.rows()}, "BAD_PAYLOAD"),
            ({"x": self.rows().astype(np.int32)}, "BAD_PAYLOAD"),
            ({"x": self.rows()[0].astype(np.int8)}, "BAD_VALUE"),
            ({"x": self.rows(cols=self.pick([1, 3, 5, 9])).astype(np.int8)}, "BAD_VALUE"),
            ({}, "BAD_PAYLOAD"),
        ])
        return self.request(P.FORWARD_INT8, {}, arrays), error

    def bad_attention(self):
        E, H, S = 4, 2, 3
        rng = self.rng
        arrays = {n: rng.uniform(-0.5, 0.5, (E, E)) for n in ("Wq", "Wk", "Wv", "Wo")}
        arrays.update({n: rng.uniform(-0.1, 0.1, E) for n in ("bq", "bk", "bv", "bo")})
        arrays["x"] = rng.normal(size=(2 * S, E))
        head = {"E": E, "H": H, "S": S}
        case = int(rng.integers(9))
        error = "BAD_VALUE"
        if case == 0:
            del head[self.pick(["E", "H", "S"])]
        elif case == 1:
            head[self.pick(["E", "H", "S"])] = self.pick([0, -2, "4", 1.5, None, 10 ** 12])
        elif case == 2:
            head["H"] = 3  # E is not a multiple of H
        elif case == 3:
            head["S"] = 4  # 6 rows are not sequences of 4
        elif case == 4:
            arrays[self.pick(["Wq", "bo", "Wo"])] = rng.normal(size=(E + 1, E))
        elif case == 5:
            del arrays[self.pick(["Wq", "bk", "x"])]
            error = "BAD_PAYLOAD"
        elif case == 6:
            arrays["Wv"] = self.with_nan(arrays["Wv"])
            error = "NOT_FINITE"
        elif case == 7:
            head = {"E": 1, "H": 1, "S": 1025}  # B*H*S*S over MAX_SCORES
            arrays = {n: np.ones((1, 1)) for n in ("Wq", "Wk", "Wv", "Wo")}
            arrays.update({n: np.zeros(1) for n in ("bq", "bk", "bv", "bo")})
            arrays["x"] = np.ones((1025, 1))
        else:
            head[self.pick(["bias", "causal", "attention"])] = self.pick([1, "yes", None])
        return self.request(P.ATTENTION, head, arrays), error

    def bad_config(self):
        config = [list(entry) for entry in IRIS_CONFIG]
        params = dict(self.params)
        case = int(self.rng.integers(12))
        error = "BAD_VALUE"
        i = int(self.rng.integers(len(config)))
        if case == 0:
            config[i] = config[i][:1]
        elif case == 1:
            config[i] = self.pick([[], 5, None, "Dense", ["Conv2d", 3], [3, 4]])
        elif case == 2:
            config[0] = ["Dense", self.pick([0, -4, "4", 4.0, True, 10 ** 30]), 32, True]
        elif case == 3:
            config[0] = ["Dense", 10 ** 6, 10 ** 6, True]  # far more than the arrays sent
        elif case == 4:
            config[3] = ["SelfAttention", 8, 3, 4, True]
        elif case == 5:
            config[3] = ["SelfAttention", 8, 2, W.MAX_SEQ_LEN + 1, True]
        elif case == 6:
            config[1] = ["Activation", self.pick(["swish", 1, None])]
        elif case == 7:
            config = self.pick([[], {}, "iris", 5])
        elif case == 8:
            del params[self.pick(sorted(params))]
        elif case == 9:
            name = self.pick(sorted(params))
            params[name] = np.zeros(params[name].shape[:1] + (2,))
        elif case == 10:
            name = self.pick(sorted(params))
            params[name] = self.with_nan(params[name])
            error = "NOT_FINITE"
        else:
            params["9.W"] = np.zeros((2, 2))
        head = {"config": config} if case != 11 or self.rng.integers(2) else {}
        return self.request(P.LOAD_MODEL, head, params), error

    def bad_qmodel(self):
        layers = json.loads(json.dumps(self.qhead["layers"]))
        arrays = dict(self.qarrays)
        i = int(self.rng.integers(len(layers)))
        spec = layers[i]
        case = int(self.rng.integers(10))
        error = "BAD_VALUE"
        if case == 0:
            del spec[self.pick(sorted(k for k in spec if k != "kind"))]
        elif case == 1:  # a value that no field of that name takes (None is valid for some)
            name = self.pick(sorted(k for k in spec if k != "kind"))
            values = ([-1, 0, [1, 2], None] if name == "name"
                      else ["x", -1, 0, [1, 2], {"a": 1}, 10 ** 40])
            spec[name] = self.pick([v for v in values if not (name == "lo" and v == 0)])
        elif case == 2:
            spec["kind"] = self.pick(["Conv", None, 3])
        elif case == 3:
            spec["extra"] = 1
        elif case == 4:
            attention = next(s for s in layers if s["kind"] == "SelfAttention")
            if self.rng.integers(2):
                attention["H"] = self.pick([3, 5, 10 ** 9])  # E = 8 is not a multiple
            else:
                attention["seq_len"] = self.pick([W.MAX_SEQ_LEN + 1, 10 ** 9])
        elif case == 5:  # (a Dense without its bias array is a Dense without bias)
            dense_bias = [n for n in arrays if n.endswith(".b")]
            del arrays[self.pick(sorted(n for n in arrays if n not in dense_bias))]
        elif case == 6:
            arrays["7.W"] = np.zeros((2, 2), dtype=np.int8)
        elif case == 7:
            name = self.pick(sorted(arrays))
            arrays[name] = np.zeros(arrays[name].size + 1, dtype=arrays[name].dtype)
        elif case == 8:
            name = self.pick(sorted(arrays))
            arrays[name] = arrays[name].astype(np.int16)
        else:
            layers = self.pick([[], 5, "layers"])
        head = {"layers": layers}
        return self.request(P.LOAD_QMODEL, head, arrays), error

    def bad_transfer(self):
        """A PART without its TRANSFER, or a TRANSFER that cannot be (docs/protocol.md)."""
        case = int(self.rng.integers(6))
        if case == 0:
            return P.frame(P.PART, self.next_seq(), bytes(int(self.rng.integers(1, 100))),
                           self.pick([0, P.MORE])), "BAD_PAYLOAD"
        if case == 1:
            return self.request(P.TRANSFER, {"type": P.FORWARD, "bytes": 1 << 40, "crc": 0}), \
                "NO_MEMORY"
        head = {"type": P.FORWARD, "bytes": 100, "crc": 0}
        if case == 2:
            head["type"] = self.pick([P.EXIT, P.TRANSFER, 0x08, -1, 256, "FORWARD"])
        elif case == 3:
            head["bytes"] = self.pick([0, -5, 1.5, None])
        elif case == 4:
            head["crc"] = self.pick([-1, 1 << 32, "0"])
        elif self.rng.integers(2):
            head.pop(self.pick(["type", "bytes", "crc"]))
        else:
            head["extra"] = 1
        return self.request(P.TRANSFER, head), "BAD_VALUE"

    def makers(self):
        return [self.bad_crc, self.oversized, self.unknown_type, self.garbage,
                self.abandoned_chunk, self.short_record, self.head_past_the_record,
                self.not_json, self.head_not_object, self.bad_array_list,
                self.bytes_do_not_add_up, self.bad_head_field, self.bad_train_step,
                self.bad_batch, self.bad_int8_batch, self.bad_attention, self.bad_config,
                self.bad_qmodel, self.bad_transfer]
