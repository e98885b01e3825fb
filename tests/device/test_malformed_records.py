"""Malformed records on the device (tests/board/case_malformed_records.py): every message type
answers BAD_PAYLOAD to a JSON head that MicroPython's lenient parser would take (and a request
without its arrays is BAD_PAYLOAD, not NO_MODEL), and the strict JSON check agrees with
CPython's json on seeded mutations of real heads."""

import json
import struct

import numpy as np

from board_cases import board_test
from malformed import LENIENT, REQUESTS
from tinyattn_host import protocol as P

GOOD_HEADS = [{}, {"attention": True},
              {"optimizer": "sgd", "lr": 0.05, "arrays": [["x", "f", [2, 4]], ["labels", "i", [2]]]},
              {"config": [["Dense", 4, 8, True], ["Activation", "relu"]], "s": "\u00e9\n\"\\/",
               "n": [-0.5e-3, 1e+2, 0, None, False]}]
MUTATIONS = b'{}[],:"0-.eE \\n\tftu1'


def cpython_takes(data):
    """Whether CPython's strict json reads data (UTF-8) as one value; NaN and Infinity refused."""
    def refuse(name):
        raise ValueError(name)

    try:
        json.loads(data.decode("utf-8"), parse_constant=refuse)
        return True
    except ValueError:
        return False


def mutated(rng, data):
    """data with a byte deleted, inserted or replaced (JSON's own characters mostly)."""
    at = int(rng.integers(len(data) + 1))
    byte = bytes([MUTATIONS[int(rng.integers(len(MUTATIONS)))]])
    how = int(rng.integers(3))
    if how == 0:
        return data[:at] + data[at + 1:]
    if how == 1:
        return data[:at] + byte + data[at:]
    return data[:at] + byte + data[at + 1:]


def make_fixtures():
    rng = np.random.default_rng(24)
    texts = []
    heads = [json.dumps(head, ensure_ascii=False).encode() for head in GOOD_HEADS]
    for _ in range(1500):
        data = heads[int(rng.integers(len(heads)))]
        for _ in range(int(rng.integers(1, 4))):
            data = mutated(rng, data)
        texts.append([data.hex(), cpython_takes(data)])
    texts += [[text.hex(), cpython_takes(text)] for text in LENIENT + heads]
    requests = [[kind, (struct.pack("<H", len(text)) + text).hex()]
                for kind in REQUESTS for text in LENIENT]
    junk = P.encode({}, {"junk": np.ones((1, 1))})  # well formed, but not these requests' arrays
    requests += [[kind, junk.hex()] for kind in (P.FORWARD, P.TRAIN_STEP, P.GET_WEIGHTS,
                                                 P.BENCH, P.QUANTIZE, P.FORWARD_INT8)]
    return {"records": {"requests": requests, "texts": texts}}


def test_the_lenient_heads_are_not_json_to_cpython():
    assert not any(cpython_takes(text) for text in LENIENT)
    texts = make_fixtures()["records"]["texts"]
    assert 200 < sum(good for _, good in texts) < 1300  # both verdicts well represented


test_malformed_records_on_board = board_test("case_malformed_records", make_fixtures)
