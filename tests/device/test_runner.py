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
