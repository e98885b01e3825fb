"""The package's names at the REPL: dir(), help() and Tab completion in a 128 KB heap list the
public names and import only the submodules those come from; a name that is neither a
public name nor a submodule is an AttributeError that imports nothing
(tests/board/case_package_dir.py, case_package_names.py). In 128 KB the package runs as
`make deploy` ships it (.mpy for the interpreter, as on a board)."""

import json
import os
import select
import subprocess
import time
import tty

import pytest

from board_cases import BOARD_DIR, Report, board_test, write_fixtures
from heap_budget import board_heap
from tinyattn_host.virtual import unixport

HEAP = "128k"
SOURCE_HEAP = "1m"  # on the unix port the cases run device/'s sources, compiled on import
SCRIPTS = BOARD_DIR / "scripts"


def lazy_modules(device_dir=unixport.DEVICE_DIR, heap=None):
    """The modules that importing all LAZY's submodules adds to a fresh interpreter.
    Host-driven (scripts/lazy_modules.py): only a fresh interpreter tells."""
    stdout = unixport.run_file(SCRIPTS / "lazy_modules.py", heap=heap, device_dir=device_dir)
    return json.loads(stdout.splitlines()[-1])


def make_dir_fixtures():
    return {"lazy": {"modules": lazy_modules()}}


def test_package_dir_in_a_fresh_interpreter(tmp_path):
    """case_package_dir in a direct unix-port subprocess, not on a board: only a fresh
    interpreter tells what dir() imports (MicroPython's dir() asks the package's __getattr__
    for every name the interpreter has interned, and a board's link interns names of its
    own: the link's modules, which dir() would import again after the case's fresh import)."""
    write_fixtures(tmp_path / "case_package_dir", make_dir_fixtures())
    try:
        output = unixport.run_file(BOARD_DIR / "runner.py", heap=SOURCE_HEAP,
                                   extra_path=[BOARD_DIR], args=[str(tmp_path), "case_package_dir"])
    except unixport.MicroPythonError as err:  # the exit status is the number of failures
        output = err.output
    report = Report.parse(output)
    report.check()
    assert report.passed == ["case_package_dir.test_dir_and_help_list_the_public_names_and_"
                             "import_only_their_modules"], output


test_package_names_on_board = board_test("case_package_names", heap=SOURCE_HEAP)


REAL_ULAB_HEAP = pytest.mark.skipif(
    not unixport.has_ulab(unixport.interpreter()),
    reason="the pure-Python ulab stand-in's own module takes the heap a board's firmware ulab "
           "does not; the 128k budget is for a real ulab (run with MICROPYTHON=<ulab build>)")


@REAL_ULAB_HEAP
def test_names_and_dir_in_128k_as_deployed(deployed, tmp_path):
    """case_package_dir and case_package_names' LAZY test again, in 128 KB with the package
    as deployed. Host-driven: the bound is for the compiled package (board_test runs the
    sources on the unix port, whose compiling alone takes more heap)."""
    board_heap(HEAP)  # (a 32-bit figure: skipped on a 64-bit port)
    wanted = lazy_modules(deployed, HEAP)
    write_fixtures(tmp_path / "case_package_dir", {"lazy": {"modules": wanted}})
    write_fixtures(tmp_path / "case_package_names", {})
    selection = ["case_package_dir",
                 "case_package_names.test_every_lazy_name_is_its_submodules_own"]
    try:
        output = unixport.run_file(BOARD_DIR / "runner.py", heap=HEAP, extra_path=[BOARD_DIR],
                                   device_dir=deployed, args=[str(tmp_path), *selection])
    except unixport.MicroPythonError as err:  # the exit status is the number of failures
        output = err.output
    report = Report.parse(output)
    report.check()
    assert len(report.passed) == 2, output


@REAL_ULAB_HEAP
def test_tab_completion_at_the_repl(deployed):
    """`tinyattn.<Tab>` in the REPL of a 128 KB heap lists the public names, imports no others."""
    board_heap(HEAP)  # (a 32-bit figure: skipped on a 64-bit port)
    wanted = set(lazy_modules(deployed, HEAP))
    master, slave = os.openpty()
    tty.setraw(slave)
    env = dict(os.environ, MICROPYPATH=unixport.search_path(device_dir=deployed))
    proc = subprocess.Popen([unixport.interpreter(), "-X", "heapsize=" + HEAP], stdin=slave,
                            stdout=slave, stderr=slave, env=env)
    os.close(slave)
    seen = b""

    def send_and_read(data, ending=b">>> "):
        nonlocal seen
        os.write(master, data)
        seen = b""
        deadline = time.monotonic() + 30
        while not seen.endswith(ending) and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                seen += os.read(master, 65536)
        return seen.decode(errors="replace")

    try:
        send_and_read(b"")
        send_and_read(b"import sys, tinyattn; from ulab import numpy; before = set(sys.modules)\r")
        listed = send_and_read(b"tinyattn.\t", ending=b">>> tinyattn.")
        assert "MemoryError" not in listed
        for name in ("Attention", "Dense", "SelfAttention", "demo", "train", "load_iris"):
            assert name in listed.split(), listed
        send_and_read(b"\x03")  # drop the half-typed line
        added = send_and_read(b"print(sorted(set(sys.modules) - before))\r")
        assert eval(added.splitlines()[1]) == sorted(wanted)  # a list of module names
    finally:
        proc.kill()
        proc.wait()
        os.close(master)

