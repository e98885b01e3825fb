"""The ulab stand-in answers as a real ulab does: tools/standin/conformance/ run here
against tests/fixtures/standin_conformance.json, which tools/standin/record_conformance.py
wrote from a real ulab 6.12 unix port (float32, ULAB_MAX_DIMS=2). Floats agree to float32
precision (a real ulab computes in float32, the stand-in in the port's doubles, rounded to
float32 on store), everything else (dtypes, shapes, ints, text, error types) exactly."""

import json
import math
from pathlib import Path

import pytest

from tinyattn_host.virtual import unixport

ROOT = Path(__file__).resolve().parents[2]
CASES = ROOT / "tools" / "standin" / "conformance"
FIXTURE = ROOT / "tests" / "fixtures" / "standin_conformance.json"
RTOL = 2e-6  # a few float32 ulps (2^-23 = 1.2e-7): float32 sums and libm against doubles
ATOL = 1e-6  # for results near 0 made by cancellation


def run_cases(folder):
    """{case: result} of the cases on this interpreter (the stand-in unless it has ulab)."""
    out = unixport.run_file(CASES / "run.py", args=[str(folder)], extra_path=[CASES],
                             timeout=120)
    return dict(json.loads(line) for line in out.splitlines() if line.startswith("["))


def differences(want, got, where=""):
    """Where `got` differs from `want`: floats beyond float32 precision, anything else."""
    if isinstance(want, dict) and "float" in want and isinstance(got, dict) and "float" in got:
        w, g = want["float"], got["float"]
        if isinstance(w, str) or isinstance(g, str):
            return [] if w == g else ["%s: %r != %r" % (where, g, w)]
        return [] if math.isclose(g, w, rel_tol=RTOL, abs_tol=ATOL) else \
            ["%s: %r != %r" % (where, g, w)]
    if type(want) is not type(got):
        return ["%s: %r != %r" % (where, got, want)]
    if isinstance(want, dict):
        if set(want) != set(got):
            return ["%s: keys %s != %s" % (where, sorted(got), sorted(want))]
        return [d for k in want for d in differences(want[k], got[k], "%s.%s" % (where, k))]
    if isinstance(want, list):
        if len(want) != len(got):
            return ["%s: %d items != %d" % (where, len(got), len(want))]
        return [d for i, (w, g) in enumerate(zip(want, got))
                for d in differences(w, g, "%s[%d]" % (where, i))]
    return [] if want == got else ["%s: %r != %r" % (where, got, want)]


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    return run_cases(tmp_path_factory.mktemp("conformance"))


RECORDED = json.loads(FIXTURE.read_text())["cases"]


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_answers_as_real_ulab(answers, name):
    assert name in answers, "the case did not run"
    found = differences(RECORDED[name], answers[name], name)
    assert not found, "\n".join(found[:20])


def test_every_case_is_recorded(answers):
    assert set(answers) == set(RECORDED)


def test_the_comparison_sees_a_difference():
    x = {"dtype": "float32", "data": [{"float": 1.0}, 2]}
    assert differences(x, x) == []
    assert differences(x, {"dtype": "float32", "data": [{"float": 1.00001}, 2]})
    assert not differences(x, {"dtype": "float32", "data": [{"float": 1.0000001}, 2]})
    assert differences(x, {"dtype": "float32", "data": [{"float": 1.0}, True]})
    assert differences(x, {"dtype": "int16", "data": [{"float": 1.0}, 2]})
    assert differences({"error": "TypeError"}, {"error": "ValueError"})


GAPS = """
from ulab import numpy as np
a = np.zeros((2, 2))
for what, attempt in (("np.roll", lambda: np.roll), ("a.sort", lambda: a.sort),
                      ("//", lambda: a // 2), ("np.nothing", lambda: np.nothing)):
    try:
        attempt()
        print(what, "ran")
    except Exception as e:
        print(what, type(e).__name__, e)
"""


def test_what_the_standin_lacks_says_so(tmp_path):
    if unixport.has_ulab(unixport.interpreter()):
        pytest.skip("a real ulab: no stand-in to test")
    script = tmp_path / "gaps.py"
    script.write_text(GAPS)
    lines = unixport.run_file(script).splitlines()
    fix = "not in the stand-in: use a firmware or unix port with ulab"
    assert lines[0] == "np.roll AttributeError np.roll is " + fix
    assert lines[1] == "a.sort AttributeError ndarray.sort is " + fix
    assert lines[2] == "// NotImplementedError the operator // is " + fix
    assert lines[3] == "np.nothing AttributeError module 'numpy' has no attribute 'nothing'"
