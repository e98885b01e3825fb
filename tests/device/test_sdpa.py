"""scaled_dot_product_attention on the device: ONNX's own Attention node cases (ONNX's reference
in tests/fixtures/sdpa/onnx.*) and random cases with PyTorch's autograd (torch.*), both made
once by tests/fixtures/make_sdpa_fixtures.py; tests/board/case_sdpa.py compares."""

import functools
import json
from pathlib import Path

import numpy as np

from board_cases import board_test, fixture_text

FIXTURES = Path(__file__).parent.parent / "fixtures" / "sdpa"
INPUTS = ("q", "k", "v", "mask", "keep", "bias", "grad_out")


def load(kind):
    """[(name, args, {array name: array})] of tests/fixtures/sdpa/<kind>.*"""
    index = json.loads((FIXTURES / (kind + ".json")).read_text())
    with np.load(FIXTURES / (kind + ".npz")) as data:
        return [(c["name"], c["args"], {a: data["%s.%s" % (c["name"], a)] for a in c["arrays"]})
                for c in index["cases"]]


def fixtures_of(kind, prefix, part=None, parts=1):
    """name.txt (the call's arguments, the arrays' names and shapes, inputs first) and
    name.f32 (the arrays as little-endian float32, in that order) of each case."""
    fixtures = {}
    for i, (name, args, arrays) in enumerate(load(kind)):
        if part is not None and i % parts != part:
            continue
        order = [n for n in INPUTS if n in arrays] + sorted(n for n in arrays if n not in INPUTS)
        key = "%s%02d" % (prefix, i)
        fixtures[key] = {"case": name, "args": args,
                         "arrays": [[n, list(arrays[n].shape)] for n in order]}
        fixtures[key + ".f32"] = b"".join(arrays[n].astype("<f4").tobytes() for n in order)
    return fixtures


@functools.cache
def onnx_fixtures(part):
    return fixtures_of("onnx", "onnx", part, PARTS)


@functools.cache
def torch_fixtures():
    return fixtures_of("torch", "torch")


def test_every_case_is_written_once_and_small():
    """Every ONNX case that fits goes to the device once; each run's fixtures are small enough
    to copy to a board."""
    parts = [onnx_fixtures(p) for p in range(PARTS)]
    names = sorted(n for f in parts for n in f if "." not in n)
    assert len(names) == len(load("onnx")) >= 60
    for fixtures in parts + [torch_fixtures()]:
        size = sum(len(v) if isinstance(v, bytes) else len(fixture_text(v))
                   for v in fixtures.values())
        assert size < 400_000, size


PARTS = 2
test_sdpa_onnx_even_on_board = board_test("case_sdpa", lambda: onnx_fixtures(0))
test_sdpa_onnx_odd_on_board = board_test("case_sdpa", lambda: onnx_fixtures(1))
test_sdpa_backward_on_board = board_test("case_sdpa_backward", torch_fixtures)
