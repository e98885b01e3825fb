"""tests/board/runner.py itself: markers, the exit status (= failures), a module that does not
import, the heap each test keeps, and the host's reading of it all (board_cases.Report)."""

import os
import subprocess

from board_cases import BOARD_DIR, Report
from tinyattn_host.virtual import unixport

SAMPLE = '''
import check
KEPT = []
def test_passes():
    check.equal([1, 2], [1, 2], "list")
def test_fails():
    check.close([1.0, 2.0], [1.0, 2.5], atol=0.1, what="pair")
def test_keeps_memory():
    KEPT.append(bytearray(4000))
def helper_not_a_test():
    raise RuntimeError("not run")
'''


def run_runner(tmp_path, *selection):
    (tmp_path / "case_sample.py").write_text(SAMPLE)
    (tmp_path / "case_broken.py").write_text("import nothing_of_that_name\n")
    (tmp_path / "fixtures").mkdir()
    env = dict(os.environ, MICROPYPATH=unixport.search_path([BOARD_DIR, tmp_path]))
    done = subprocess.run([unixport.interpreter(), str(BOARD_DIR / "runner.py"),
                           str(tmp_path / "fixtures"), *selection],
                          capture_output=True, text=True, env=env, timeout=60)
    return done.returncode, done.stdout


def test_markers_and_exit_status(tmp_path):
    status, out = run_runner(tmp_path, "case_sample", "case_broken")
    report = Report.parse(out)
    assert status == 2 == len(report.failed)
    assert report.ended and "@@END 2 passed 2 failed" in out
    assert sorted(report.passed) == ["case_sample.test_keeps_memory", "case_sample.test_passes"]
    assert report.failed["case_sample.test_fails"].startswith("AssertionError: pair: max error 0.5")
    assert report.failed["case_broken"].startswith("import: ImportError")
    assert "RuntimeError" not in out  # only test_* functions run
    kept = [line for line in out.splitlines() if "test_keeps_memory" in line][0]
    assert int(kept.split("heap ")[1]) >= 4000  # the heap a test keeps is reported


def test_one_test_of_a_module(tmp_path):
    status, out = run_runner(tmp_path, "case_sample.test_passes")
    assert status == 0
    assert Report.parse(out).passed == ["case_sample.test_passes"]
    assert "@@END 1 passed 0 failed" in out


HEAP_SAMPLE = '''
import check
def test_a_leak_of_a_block_a_call_fails():
    kept = [None] * 12
    calls = [0]
    def step():
        kept[calls[0]] = bytearray(8)  # one small object a call, kept
        calls[0] += 1
    message = check.raises(AssertionError, check.heap_returns, step, what="leak")
    assert "leak: the heap grows call after call" in message, message
def test_one_object_kept_once_passes():
    kept, calls = [None], [0]
    def step():
        calls[0] += 1
        if calls[0] == 3:
            kept[0] = bytearray(200)
    check.heap_returns(step, what="once")
def test_a_step_that_keeps_nothing_passes():
    check.heap_returns(lambda: bytearray(300), what="garbage")
'''


def test_heap_returns_tells_a_leak_from_one_kept_object(tmp_path):
    """check.heap_returns fails a step that keeps a small object every call and passes one
    that keeps an object once, at its third call (tests/board/check.py)."""
    (tmp_path / "case_heap.py").write_text(HEAP_SAMPLE)
    status, out = run_runner(tmp_path, "case_heap")
    assert status == 0, out
    assert "@@END 3 passed 0 failed" in out
