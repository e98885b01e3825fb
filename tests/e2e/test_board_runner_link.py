"""The board test runner through the one transport: on a board (here a virtual one) each case
module runs as one RUN of tests/board/runner.py's `records` from the board's /tests folder,
its records (start, print, pass or fail with the message and the heap figure, end) streamed
back as RECORD frames, as make test-board PORT=... runs every case. An int8 case (case_quant:
the Iris int8 model bit for bit against the integer reference) passes this way, and a case
that fails comes back as a failure with its message and traceback."""

import importlib.util
from pathlib import Path

import pytest

import board_cases
from tinyattn_host import protocol
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

TESTS = Path(__file__).parents[1]
FAILING_CASE = '''
def test_passes():
    print("a line", 42)

def test_fails():
    assert 1 + 1 == 3, "one and one are not three"
'''


def _fixtures_of(test_file, function):
    """A device test module's fixture function (tests/device is no package)."""
    spec = importlib.util.spec_from_file_location(test_file.stem, test_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, function)


@pytest.fixture(scope="module")
def target():
    board = board_cases.open_target("virtual")
    yield board
    board.close()


@pytest.fixture
def runs(monkeypatch):
    """The RUN requests sent: (module, function, path)."""
    sent = []
    real = protocol.Link.run

    def run(link, module, function, on_record, kwargs=None, timeout=None, path=None):
        sent.append((module, function, path))
        return real(link, module, function, on_record, kwargs, timeout, path)

    monkeypatch.setattr(protocol.Link, "run", run)
    return sent


def test_an_int8_case_passes_through_the_link(target, runs):
    make_fixtures = _fixtures_of(TESTS / "device" / "test_quant.py", "make_fixtures")
    report = target.run("case_quant", make_fixtures())
    report.check()
    assert sorted(report.passed) == sorted(
        "case_quant." + name for name in board_cases.case_names("case_quant"))
    assert runs == [("runner", "records", "/tests")]
    assert "@@PASS case_quant.test_" in report.output and ", heap " in report.output
    assert "Iris test accuracy: float" in report.output  # what the case printed, a record


def test_a_failing_case_comes_back_as_its_failure(target, runs, tmp_path, monkeypatch):
    (tmp_path / "case_failing.py").write_text(FAILING_CASE)
    monkeypatch.setattr(board_cases, "BOARD_DIR", tmp_path)
    report = target.run("case_failing", {})
    assert report.ended and runs == [("runner", "records", "/tests")]
    assert report.passed == ["case_failing.test_passes"]
    assert report.failed == {"case_failing.test_fails": "AssertionError: one and one are not three"}
    assert "a line 42\n" in report.output and "Traceback" in report.output
    with pytest.raises(pytest.fail.Exception, match="one and one are not three"):
        report.check()
