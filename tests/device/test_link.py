"""The device end of the link (tests/board/case_link.py on the board): golden frames in and
out, the server over byte streams, its errors, and the heap it leaves."""

import json
import zlib
from pathlib import Path

import numpy as np

from board_cases import board_test
from tinyattn_host import __version__
from tinyattn_host import protocol as P
from tinyattn_host.checks.run_check import IRIS_CONFIG, random_model
from tinyattn_host.reference import attention_forward
from tinyattn_host.reference.sequential import sequential_forward

GOLDEN_PATH = Path(__file__).parents[1] / "support" / "golden_frames.json"
GOLDEN = json.loads(GOLDEN_PATH.read_text())


def attention_request(seq, B=2, S=3, E=4, H=2, seed=0, x=None):
    rng = np.random.default_rng(seed)
    arrays = {n: rng.uniform(-0.5, 0.5, (E, E)) for n in ("Wq", "Wk", "Wv", "Wo")}
    arrays.update({n: rng.uniform(-0.1, 0.1, E) for n in ("bq", "bk", "bv", "bo")})
    arrays["x"] = rng.normal(size=(B * S, E)) if x is None else x
    head = {"E": E, "H": H, "S": S, "attention": True}
    return head, arrays, P.frames(P.ATTENTION, seq, P.encode(head, arrays))


def message(kind, seq, head=None, arrays=()):
    return b"".join(P.frames(kind, seq, P.encode(head, arrays)))


# ---- golden frames ---------------------------------------------------------------------------
def golden_fixtures():
    """Every golden frame into serve(), and the replies it must give: (what went in, type,
    seq, error name, a part of its message, the golden bytes the reply must be)."""
    G = {case["name"]: case for case in GOLDEN}

    def golden(name):
        return bytes.fromhex(G[name]["hex"])

    def err(label, seq, name, part=""):
        return [label, P.ERROR, seq, name, part, None]

    corrupt = bytearray(P.frame(P.HELLO, G["error_bad_crc"]["seq"], P.encode()))
    corrupt[-1] ^= 0xFF
    first_chunk = P.frames(P.LOAD_MODEL, G["ack"]["seq"], bytes(400))[0]
    assert G["ack"]["payload"] == (P.CHUNK).to_bytes(4, "little").hex()
    assert G["error_bad_crc"]["payload"][:2] == "01"  # BAD_CRC
    assert G["exit_reply"]["seq"] == G["exit_request"]["seq"]
    steps = [
        ("hello_request", golden("hello_request"), [["hello_request", P.HELLO | P.REPLY, 1,
                                                     None, None, None]]),
        ("exit_reply", golden("exit_reply"), [err("exit_reply", 7, "UNKNOWN_TYPE", "0x83")]),
        ("ack", golden("ack"), [err("ack", 258, "UNKNOWN_TYPE", "0x04")]),
        ("error_bad_crc", golden("error_bad_crc"),
         [err("error_bad_crc", 5, "UNKNOWN_TYPE", "0x05")]),
        ("forward_request", golden("forward_request"), [err("forward_request", 42, "NO_MODEL")]),
        ("forward_reply", golden("forward_reply"),
         [err("forward_reply", 42, "UNKNOWN_TYPE", "0xa1")]),
        ("train_step_labels", golden("train_step_labels"),  # no x: malformed before no model
         [err("train_step_labels", 9, "BAD_PAYLOAD", "['labels', 'x']")]),
        ("chunk_1_of_2", golden("chunk_1_of_2"), [["chunk_1_of_2", P.ACK, 3, None, None, None]]),
        # the two chunks make one record of 200 bytes, whose head length (0x0100) overruns it
        ("chunk_2_of_2", golden("chunk_2_of_2"),
         [err("chunk_2_of_2", 3, "BAD_PAYLOAD", "the record's 200")]),
        ("a first chunk, seq 258", first_chunk,
         [["a first chunk", P.ACK, 258, None, None, G["ack"]["hex"]]]),
        ("a frame with a bad CRC, seq 5", bytes(corrupt),
         [["a bad CRC", P.ERROR, 5, "BAD_CRC", "CRC mismatch", G["error_bad_crc"]["hex"]]]),
        ("exit_request", golden("exit_request"),
         [["exit_request", P.EXIT | P.REPLY, 7, None, None, G["exit_reply"]["hex"]]]),
    ]
    stream = b"".join(data for _, data, _ in steps)
    replies = [reply for _, _, answers in steps for reply in answers]
    records = []
    for case in GOLDEN:
        if "head" not in case:
            continue
        arrays = {}
        for name, want in case["arrays"].items():
            values = np.array(want["values"], dtype=P.DTYPES[want["dtype"]])
            if want["dtype"] == "f":  # compared as float32 bit patterns
                values = values.view(np.uint32)
            arrays[name] = [want["dtype"], want["shape"], values.tolist()]
        records.append({"name": case["name"], "payload": case["payload"], "head": case["head"],
                        "arrays": arrays, "order": list(case["arrays"])})
    return {"golden.bin": stream, "golden_replies": {"replies": replies},
            "golden_records": {"cases": records}}


# ---- serve() ---------------------------------------------------------------------------------
def hello_fixtures():
    head, arrays, frames = attention_request(3)
    assert len(frames) > 1  # the ATTENTION request goes in chunks
    stream = P.frame(P.HELLO, 1, P.encode()) + P.frame(P.STATUS, 2, P.encode()) \
        + b"".join(frames) + P.frame(P.EXIT, 4)
    kinds = [[P.HELLO | P.REPLY, 1], [P.STATUS | P.REPLY, 2]] + [[P.ACK, 3]] * (len(frames) - 1) \
        + [[P.ATTENTION | P.REPLY, 3], [P.EXIT | P.REPLY, 4]]
    p = {k: arrays[k].astype(np.float32).astype(np.float64) for k in arrays}
    y, cache = attention_forward(p["x"], p, 2, 3)
    return {"hello.bin": stream, "one_hello.bin": P.frame(P.HELLO, 1, P.encode()),
            "hello": {"kinds": kinds, "version": __version__, "chunk": P.CHUNK,
                      "y": y, "y_atol": 1e-5 * max(1.0, float(np.abs(y).max())),
                      "A": cache["A_cache"]}}


def bad_fixtures():
    good = P.frame(P.HELLO, 1, P.encode())
    corrupt = bytearray(P.frame(P.HELLO, 2, P.encode()))
    corrupt[-1] ^= 0xFF
    oversized = P.MAGIC + bytes([P.FORWARD, 0]) + (3).to_bytes(2, "little") \
        + (60000).to_bytes(2, "little") + bytes(4)
    _, _, wrong_shape = attention_request(5, x=np.zeros((5, 4)))  # 5 rows, S = 3
    x_nan = np.zeros((6, 4))
    x_nan[2, 1] = np.nan
    _, _, nan_frames = attention_request(6, x=x_nan)
    unknown = P.frame(0x6E, 7, P.encode())
    not_json = P.frame(P.HELLO, 8, b"\x05\x00{oops")
    no_model = P.frame(P.FORWARD, 9, P.encode({}, {"x": np.zeros((1, 4))}))
    truncated = P.frame(P.HELLO, 10, P.encode())[:9]
    stream = (b"garbage\x00\xa5" + bytes(corrupt) + oversized + b"".join(wrong_shape)
              + b"".join(nan_frames) + unknown + not_json + no_model)
    return {"bad.bin": stream + truncated, "bad_then_hello.bin": stream + good,
            "bad": {"errors": [[2, "BAD_CRC"], [3, "OVERSIZED"], [5, "BAD_VALUE"],
                               [6, "NOT_FINITE"], [7, "UNKNOWN_TYPE"], [8, "BAD_PAYLOAD"],
                               [9, "NO_MODEL"], [0, "TRUNCATED"]],
                    "error": P.ERROR, "hello_reply": P.HELLO | P.REPLY}}


def raw_record(head, blob=b""):
    text = json.dumps(head).encode()
    return len(text).to_bytes(2, "little") + text + blob


def field_fixtures():
    params = random_model(5)
    x = np.random.default_rng(2).normal(size=(3, 4))
    head, arrays, _ = attention_request(0)
    del head["E"]
    short_config = [list(e) for e in IRIS_CONFIG]
    short_config[1] = ["Activation"]
    requests = [
        (P.LOAD_MODEL, P.encode({"config": IRIS_CONFIG}, params)),
        (P.ATTENTION, P.encode(head, arrays)),
        (P.LOAD_MODEL, P.encode({"config": short_config}, params)),
        (P.LOAD_MODEL, P.encode({"config": [["Dense", 10 ** 6, 10 ** 6, True]]},
                                {"0.W": params["0.W"], "0.b": params["0.b"]})),
        (P.TRAIN_STEP, P.encode({"lr": 1e39}, {"x": x, "labels": np.zeros(3, np.int32)})),
        (P.TRAIN_STEP, P.encode({}, {"x": x, "labels": np.array([0, 1, 7], np.int32)})),
        (P.BENCH, P.encode({"repeat": 10 ** 9})),
        (P.FORWARD, P.encode({"atention": True}, {"x": x})),
        (P.FORWARD, raw_record({"arrays": [["x", "f", [0, 10 ** 9]]]})),
        (P.FORWARD, raw_record({"arrays": [["a", "f", [-1, 4]], ["x", "f", [1, 4]]]},
                               bytes(16))),
        (P.FORWARD, raw_record({"arrays": [["x", "f", [2, 4]]]}, bytes(31))),
        (P.FORWARD, P.encode({}, {"x": x})),
    ]
    stream = b"".join(b"".join(P.frames(kind, 1 + i, payload))
                      for i, (kind, payload) in enumerate(requests))
    logits, _ = sequential_forward(IRIS_CONFIG, params, x.astype(np.float32))
    return {"fields.bin": stream, "fields": {
        "errors": [["BAD_VALUE", "head field 'E' is missing"],
                   ["BAD_VALUE", "config entry 1: ['Activation']: must be ['Activation', kind]"],
                   ["BAD_VALUE", "array 0.W must be float32 of shape (1000000, 1000000)"],
                   ["BAD_VALUE", "finite number"],
                   ["BAD_VALUE", "label 7 at row 2"],
                   ["BAD_VALUE", "head field 'repeat' must be an int in 1..100"],
                   ["BAD_VALUE", "unknown head field 'atention'"],
                   ["BAD_PAYLOAD", "shape (1 or 2 ints >= 1)"],
                   ["BAD_PAYLOAD", "shape (1 or 2 ints >= 1)"],
                   ["BAD_PAYLOAD", "array x (2, 4) needs 32 bytes, the record has 31 left"]],
        "logits": logits, "ack": P.ACK, "error": P.ERROR, "forward_reply": P.FORWARD | P.REPLY}}


def qmodel_fixtures():
    from tinyattn_host.checks.run_check import iris

    X, _ = iris()
    stream = message(P.LOAD_MODEL, 1, {"config": IRIS_CONFIG}, random_model(3)) \
        + message(P.QUANTIZE, 2, {}, {"x": X[:30]})
    return {"quantize.bin": stream, "qmodel": {
        "replies": [P.LOAD_MODEL | P.REPLY, P.QUANTIZE | P.REPLY], "ack": P.ACK,
        "load_qmodel": P.LOAD_QMODEL}}


# ---- the heap --------------------------------------------------------------------------------
ROUNDS = 10


def heap_fixtures():
    """A model loaded, then rounds of requests, good and refused, each round ending in STATUS."""
    params = random_model(6)
    x = np.random.default_rng(6).normal(size=(3, 4))
    head, arrays, _ = attention_request(0)
    stream = message(P.LOAD_MODEL, 1, {"config": IRIS_CONFIG}, params)
    for r in range(ROUNDS):
        seq = 10 * (r + 1)
        stream += (message(P.FORWARD, seq, {"attention": True}, {"x": x})
                   + message(P.ATTENTION, seq + 1, head, arrays)
                   + message(P.TRAIN_STEP, seq + 2, {"lr": 0.01},
                             {"x": x, "labels": np.array([0, 1, 2], np.int32)})
                   + message(P.FORWARD, seq + 3, {"atention": True}, {"x": x})  # refused
                   + message(P.STATUS, seq + 4))
    stream += message(P.EXIT, 99)
    return {"heap.bin": stream, "heap": {"rounds": ROUNDS, "status_reply": P.STATUS | P.REPLY}}


def make_fixtures():
    data = bytes(range(256)) * 3 + b"tinyattn"
    return {**golden_fixtures(), **hello_fixtures(), **bad_fixtures(), **field_fixtures(),
            **heap_fixtures(), **qmodel_fixtures(), "crc_data": data, "crc": {"zlib": zlib.crc32(data)}}


test_link_on_board = board_test("case_link", make_fixtures)
