"""The device end of the link on the unix port: golden frames, the server over byte streams."""

import json
import struct
import zlib
from pathlib import Path

import numpy as np

from device_runner import run_device
from tinyattn_host import protocol as P
from tinyattn_host.reference import attention_forward

GOLDEN_PATH = Path(__file__).parents[1] / "support" / "golden_frames.json"
GOLDEN = json.loads(GOLDEN_PATH.read_text())

GOLDEN_CASE = """
import io, json
from tinyattn import framing, records, wire
cases = json.load(open(IN['path']))
OUT['parsed'] = []
OUT['sent'] = []
OUT['records'] = []
for case in cases:
    port = framing.Port(io.BytesIO(bytes.fromhex(case['hex'])), io.BytesIO(), poll=False)
    buf = bytearray(wire.CHUNK)
    kind, flags, seq, payload = framing.receive(port, buf, 1000, 1000)
    OUT['parsed'].append([kind, flags, seq, bytes(payload).hex()])
    out = io.BytesIO()
    framing.Port(None, out, poll=False).send(case['type'], case['seq'], bytes(payload))
    OUT['sent'].append(out.getvalue().hex())
    if 'head' in case:
        head, arrays = records.decode(payload)
        got = {}
        for name, (code, shape, data) in arrays.items():
            if code == 'f':
                got[name] = [code, list(shape), records.matrix(arrays, name).tolist()]
            else:
                got[name] = [code, list(shape), list(records.integers(arrays, name)[0])]
        again = records.encode({}, [(n, records.matrix(arrays, n)) if arrays[n][0] == 'f'
                                    else (n,) + records.integers(arrays, n) for n in arrays])
        OUT['records'].append([case['name'], head, got, bytes(again).hex()])
"""


def test_golden_frames_on_the_device():
    out = run_device(GOLDEN_CASE, {"path": str(GOLDEN_PATH)})
    for case, parsed, sent in zip(GOLDEN, out["parsed"], out["sent"]):
        assert parsed == [case["type"], case["flags"], case["seq"], case["payload"]], case["name"]
        if case["flags"] == 0 or len(bytes.fromhex(case["payload"])) > 1024:
            assert sent == case["hex"], case["name"]  # the device frames the same bytes
    records = {name: (head, got, again) for name, head, got, again in out["records"]}
    for case in GOLDEN:
        if "head" not in case:
            continue
        head, got, again = records[case["name"]]
        arrays = dict(case["arrays"])
        head_without_list = {k: v for k, v in head.items() if k != "arrays"}
        assert head_without_list == case["head"]
        for name, want in arrays.items():
            code, shape, values = got[name]
            assert (code, shape) == (want["dtype"], want["shape"])
            dtype = P.DTYPES[want["dtype"]]  # compared in the array's dtype: a float32
            np.testing.assert_array_equal(  # build prints 0.001 for float32(0.001)
                np.ravel(values).astype(dtype), np.array(want["values"], dtype=dtype))
        if not case["head"]:  # a head with the array list only: key order cannot differ
            assert again == case["payload"], case["name"]


def test_crc32_table_fallback_matches_zlib():
    data = bytes(range(256)) * 3 + b"tinyattn"
    out = run_device("""
from tinyattn.crc import crc32_table
OUT['crc'] = crc32_table(IN['data'].encode())
OUT['chained'] = crc32_table(IN['data'][5:].encode(), crc32_table(IN['data'][:5].encode()))
""", {"data": data.decode("latin-1")})
    assert out["crc"] == zlib.crc32(data.decode("latin-1").encode())
    text = data.decode("latin-1").encode()
    assert out["chained"] == zlib.crc32(text)


SERVE_CASE = """
import io
from tinyattn import link
calls = []
class FakeMicropython:
    @staticmethod
    def kbd_intr(c):
        calls.append(c)
real = link.micropython
link.micropython = FakeMicropython
stdin = io.BytesIO(bytes.fromhex(IN['stream']))
stdout = io.BytesIO()
try:
    OUT['why'] = link.serve(timeout=5, byte_timeout=0.05, stdin=stdin, stdout=stdout)
finally:
    link.micropython = real
OUT['calls'] = calls
OUT['out'] = stdout.getvalue().hex()
"""


def split_frames(data):
    frames, rest = [], bytes(data)
    while rest:
        length = struct.unpack_from("<H", rest, 6)[0]
        frames.append(P.parse_frame(rest[:P.HEADER + length]))
        rest = rest[P.HEADER + length:]
    return frames


def serve(stream):
    out = run_device(SERVE_CASE, {"stream": bytes(stream).hex()})
    return out, split_frames(bytes.fromhex(out["out"]))


def attention_request(seq, B=2, S=3, E=4, H=2, seed=0, x=None):
    rng = np.random.default_rng(seed)
    arrays = {n: rng.uniform(-0.5, 0.5, (E, E)) for n in ("Wq", "Wk", "Wv", "Wo")}
    arrays.update({n: rng.uniform(-0.1, 0.1, E) for n in ("bq", "bk", "bv", "bo")})
    arrays["x"] = rng.normal(size=(B * S, E)) if x is None else x
    head = {"E": E, "H": H, "S": S, "attention": True}
    return head, arrays, P.frames(P.ATTENTION, seq, P.encode(head, arrays))


def test_serve_answers_and_disables_ctrl_c_then_restores_it():
    head, arrays, frames = attention_request(3)
    stream = P.frame(P.HELLO, 1, P.encode()) + P.frame(P.STATUS, 2, P.encode()) + b"".join(frames)
    stream += P.frame(P.EXIT, 4)
    out, replies = serve(stream)
    assert out["calls"] == [-1, 3]
    assert out["why"] == "exit"
    kinds = [(kind, seq) for kind, _, seq, _ in replies]
    acks = [(P.ACK, 3)] * (len(frames) - 1)
    assert len(frames) > 1
    assert kinds == [(P.HELLO | P.REPLY, 1), (P.STATUS | P.REPLY, 2), *acks,
                     (P.ATTENTION | P.REPLY, 3), (P.EXIT | P.REPLY, 4)]
    hello = P.decode(replies[0][3])[0]
    assert hello["tinyattn"] == "0.1.0" and hello["chunk"] == P.CHUNK
    assert isinstance(hello["mpy"], int) and hello["free"] > 0
    assert P.decode(replies[1][3])[0]["kbd_intr"] == -1
    _, got = P.decode(replies[-2][3])
    p = {k: arrays[k].astype(np.float32).astype(np.float64) for k in arrays}
    want, cache = attention_forward(p["x"], p, 2, 3)
    np.testing.assert_allclose(got["y"], want, atol=1e-5 * max(1.0, np.abs(want).max()))
    np.testing.assert_allclose(got["A"], cache["A_cache"], atol=1e-5)


def test_serve_restores_ctrl_c_when_the_stream_breaks():
    out = run_device(SERVE_CASE.replace("stdout = io.BytesIO()", """
class Broken:
    def write(self, data):
        raise OSError(5)
stdout = Broken()""").replace("OUT['out'] = stdout.getvalue().hex()", "")
        .replace("try:\n    OUT['why']", "try:\n  try:\n    OUT['why']")
        .replace("finally:\n    link.micropython = real",
                 "  except OSError as e:\n    OUT['why'] = 'OSError'\nfinally:\n"
                 "    link.micropython = real"),
        {"stream": P.frame(P.HELLO, 1, P.encode()).hex()})
    assert out["why"] == "OSError"
    assert out["calls"] == [-1, 3]


def test_bad_input_gets_error_frames_and_the_server_goes_on():
    good = P.frame(P.HELLO, 1, P.encode())
    corrupt = bytearray(P.frame(P.HELLO, 2, P.encode()))
    corrupt[-1] ^= 0xFF
    oversized = P.MAGIC + struct.pack("<BBHH", P.FORWARD, 0, 3, 60000)
    oversized += struct.pack("<I", 0)
    _, _, wrong_shape = attention_request(5, x=np.zeros((5, 4)))  # 5 rows, S = 3
    x_nan = np.zeros((6, 4))
    x_nan[2, 1] = np.nan
    _, _, nan_frames = attention_request(6, x=x_nan)
    unknown = P.frame(0x6E, 7, P.encode())
    not_json = P.frame(P.HELLO, 8, b"\x05\x00{oops")
    no_model = P.frame(P.FORWARD, 9, P.encode({}, {"x": np.zeros((1, 4))}))
    truncated = P.frame(P.HELLO, 10, P.encode())[:9]
    stream = (b"garbage\x00\xa5" + bytes(corrupt) + oversized + b"".join(wrong_shape)
              + b"".join(nan_frames) + unknown + not_json + no_model + truncated)
    out, replies = serve(stream)
    # the truncated frame at the very end is the last thing; then the stream ends
    errors = [(seq, P.ERRORS[payload[0]]) for kind, _, seq, payload in replies if kind == P.ERROR]
    assert errors == [(2, "BAD_CRC"), (3, "OVERSIZED"), (5, "BAD_VALUE"), (6, "NOT_FINITE"),
                      (7, "UNKNOWN_TYPE"), (8, "BAD_PAYLOAD"), (9, "NO_MODEL"),
                      (0, "TRUNCATED")]
    out, replies = serve(stream[:-len(truncated)] + good)
    assert replies[-1][0] == P.HELLO | P.REPLY  # still serving after all of it
    assert out["calls"] == [-1, 3]


def raw_record(head, blob=b""):
    text = json.dumps(head).encode()
    return struct.pack("<H", len(text)) + text + blob


def test_errors_name_the_field_and_a_refused_request_changes_nothing():
    from tinyattn_host.harness import IRIS_CONFIG, random_model
    from tinyattn_host.reference.layers import sequential_forward

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
    _, replies = serve(stream)
    answers = [(kind, payload) for kind, _, _, payload in replies if kind != P.ACK]
    errors = [(P.ERRORS[p[0]], p[1:].decode()) for kind, p in answers if kind == P.ERROR]
    want = [("BAD_VALUE", "head field 'E' is missing"),
            ("BAD_VALUE", "config entry 1: ['Activation']: must be ['Activation', kind]"),
            ("BAD_VALUE", "array 0.W must be float32 of shape (1000000, 1000000)"),
            ("BAD_VALUE", "finite number"),
            ("BAD_VALUE", "label 7 at row 2"),
            ("BAD_VALUE", "head field 'repeat' must be an int in 1..100"),
            ("BAD_VALUE", "unknown head field 'atention'"),
            ("BAD_PAYLOAD", "shape (1 or 2 ints >= 1)"),
            ("BAD_PAYLOAD", "shape (1 or 2 ints >= 1)"),
            ("BAD_PAYLOAD", "array x (2, 4) needs 32 bytes, the record has 31 left")]
    assert len(errors) == len(want)
    for (code, message), (want_code, part) in zip(errors, want):
        assert code == want_code and part in message, (code, message)
    kind, payload = answers[-1]  # the model loaded first is still there, its weights unchanged
    assert kind == P.FORWARD | P.REPLY
    want_logits, _ = sequential_forward(IRIS_CONFIG, params, x.astype(np.float32))
    np.testing.assert_allclose(P.decode(payload)[1]["logits"], want_logits, atol=1e-5)
