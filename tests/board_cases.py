"""Host side of the board cases (tests/board): write their fixtures, run them through
tests/board/runner.py on the unix port or on a board, read the runner's records.

A device test module declares its case module and the fixtures the NumPy reference makes:

    test_rng_on_board = board_test("case_rng", fixtures=make_fixtures, heap="96k")

pytest runs it on the unix port (`--board unix`, the default: an interpreter and no board,
the runner's marker lines read from its output) or on a board through the link, as every
command reaches one (`--board virtual|auto|/dev/ttyACM0|default`: what make test-board
PORT=... passes): the files copied with mpremote, then one RUN of the runner a case module,
its records streamed back.
"""

import json
import os
import re
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from tinyattn_host.errors import BoardError, DeviceError
from tinyattn_host.virtual import unixport

BOARD_DIR = Path(__file__).parent / "board"
SUPPORT = ("runner.py", "check.py", "int8_near.py", "int8_check.py")  # the cases' own modules
REMOTE_DIR = "/tests"
DEFAULT_HEAP = "64m"  # the stand-in's Python lists take far more memory than ulab's buffers
SILENCE = 600  # seconds a case module may print nothing before the run is given up
VIRTUAL_HEAP = "8m"  # the virtual board's heap with a real ulab: an ESP32-S3 with 8 MB of
# PSRAM, which the largest cases need (attention with E=64, S=64, B=3; digits on 359 rows)


def write_fixtures(folder, fixtures):
    """Write {name: {key: value}} as name.txt files (check.fixture reads them) and
    {name: bytes} as raw files called name."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, value in fixtures.items():
        if isinstance(value, (bytes, bytearray)):
            (folder / name).write_bytes(bytes(value))
        else:
            (folder / (name + ".txt")).write_text(fixture_text(value))


def fixture_text(values):
    """{key: ndarray or JSON value} in check.fixture's text format: a head line, then one
    line per row of an array (shortest round-trip floats), or one line of JSON."""
    lines = []
    for key, value in values.items():
        if isinstance(value, np.ndarray):
            lines.append(f"{key} A {' '.join(str(d) for d in value.shape)}")
            for row in np.atleast_2d(value):
                lines.append(" ".join(repr(float(v)) for v in row))
        else:
            lines.append(f"{key} J")
            lines.append(json.dumps(value))
    return "\n".join(lines) + "\n"


@dataclass
class Report:
    """What the runner printed: tests passed, tests failed (with their lines), the whole."""

    output: str
    passed: list = field(default_factory=list)
    failed: dict = field(default_factory=dict)
    ended: bool = False

    def add(self, record):
        """One record of the runner's (through the link), kept as its marker line too."""
        event = record["event"]
        if event == "print":
            self.output += record["text"]
        elif event == "start":
            self.output += "@@START %s\n" % record["module"]
        elif event == "pass":
            self.passed.append(record["test"])
            self.output += "@@PASS %s %d ms, heap %+d\n" % (record["test"], record["ms"],
                                                            record["heap"])
        elif event == "fail":
            self.failed[record["test"]] = record["message"]
            self.output += "%s@@FAIL %s %s\n" % (record["traceback"], record["test"],
                                                 record["message"])
        elif event == "end":
            self.ended = True
            self.output += "@@END %d passed %d failed\n" % (record["passed"], record["failed"])

    @classmethod
    def parse(cls, output):
        """What the runner printed on the unix port."""
        report = cls(output)
        for line in output.splitlines():
            if line.startswith("@@PASS "):
                report.passed.append(line.split()[1])
            elif line.startswith("@@FAIL "):
                _, name, why = line.split(" ", 2)
                report.failed[name] = why
            elif line.startswith("@@END "):
                report.ended = True
        return report

    def check(self):
        """Fail the pytest test with every failed case and the output around it."""
        if self.failed or not self.ended or not self.passed:
            why = ("; ".join(f"{n}: {w}" for n, w in self.failed.items())
                   or ("no test ran" if self.ended else "the runner did not finish"))
            pytest.fail(f"{why}\n--- runner output ---\n{_tail(self.output)}", pytrace=False)


def _tail(text, lines=80):
    return "\n".join(text.splitlines()[-lines:])


class UnixPort:
    """Run case modules with `micropython runner.py` (device/ and tests/board on its path)."""

    name = "unix"

    def has_ulab(self):
        return unixport.has_ulab(unixport.interpreter())

    def run(self, module, fixtures, heap=None):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "fixtures"
            write_fixtures(root / module, fixtures)
            command = [unixport.interpreter(), "-X", f"heapsize={heap or DEFAULT_HEAP}",
                       str(BOARD_DIR / "runner.py"), root.name, module]
            env = dict(os.environ, MICROPYPATH=unixport.search_path([BOARD_DIR]))
            done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp,
                                  timeout=SILENCE)
        report = Report.parse(done.stdout + done.stderr)
        if report.ended and done.returncode != len(report.failed):
            pytest.fail(f"exit status {done.returncode}, {len(report.failed)} failures")
        return report


class OnBoard:
    """Run case modules on a board (or the virtual board) through the link: tinyattn deployed,
    runner.py, check.py, int8_near.py, int8_check.py, the case and its fixtures copied to
    /tests with mpremote; then, after a soft reset (a fresh heap for each module), the link
    started and one RUN of runner.records, whose records come back as RECORD frames."""

    def __init__(self, port):
        from tinyattn_host.board.board import Board

        # a virtual board with a real ulab gets a PSRAM board's heap; with the stand-in, its
        # own (64m: the stand-in's lists take far more than ulab's buffers)
        real_ulab = port is None and unixport.has_ulab(unixport.interpreter())
        self.board = Board(port=port, deploy="auto", out=lambda *a: None,
                           heap=VIRTUAL_HEAP if real_ulab else None)
        self.name = port or "virtual"

    def open(self):
        self.board.open()
        self.transport = self.board.transport
        for directory in (REMOTE_DIR, REMOTE_DIR + "/fixtures"):
            if not self.transport.fs_isdir(directory):
                self.transport.fs_mkdir(directory)
        for name in SUPPORT:
            self._put(f"{REMOTE_DIR}/{name}", (BOARD_DIR / name).read_bytes())
        return self

    def close(self):
        self.board.close()

    def has_ulab(self):
        return self.board.info["ulab"] not in (None, "stand-in")

    def _put(self, path, data):
        self.transport.fs_writefile(path, data, chunk_size=2048)

    def _clear(self, directory):
        if not self.transport.fs_isdir(directory):
            self.transport.fs_mkdir(directory)
            return
        for entry in self.transport.fs_listdir(directory):
            self.transport.fs_rmfile(f"{directory}/{entry.name}")

    def run(self, module, fixtures, heap=None):  # the board's heap is what it is
        self.transport.enter_raw_repl(soft_reset=False)  # its prompt again, after a link
        folder = f"{REMOTE_DIR}/fixtures/{module}"
        self._clear(folder)
        for name in (module, *case_imports(module)):
            self._put(f"{REMOTE_DIR}/{name}.py", (BOARD_DIR / f"{name}.py").read_bytes())
        with tempfile.TemporaryDirectory() as tmp:
            write_fixtures(Path(tmp), fixtures)
            for item in sorted(Path(tmp).iterdir()):
                self._put(f"{folder}/{item.name}", item.read_bytes())
        report = Report("")
        try:
            link = self.board.start_link()  # a soft reset first
            link.run("runner", "records", report.add, path=REMOTE_DIR, timeout=SILENCE,
                     kwargs={"selection": [module], "root": REMOTE_DIR, "fixtures": "fixtures"})
        except (BoardError, DeviceError) as err:  # an error frame, a timeout, a reset: the runner did not end
            report.output += f"\nthe link: {err}\n"
        finally:
            self.board.stop_link()  # before the board serves out its timeout
        return report


def open_target(option):
    """The target for --board: 'unix', or a PORT value for tinyattn_host.board.ports.choose."""
    if option == "unix":
        return UnixPort()
    from tinyattn_host.board.ports import choose

    return OnBoard(choose(None if option == "default" else option)).open()


def case_names(module):
    """The test_* functions a case module defines (read from its source)."""
    text = (BOARD_DIR / f"{module}.py").read_text()
    return re.findall(r"^def (test_\w+)\(", text, re.M)


def case_imports(module):
    """The case modules `module` imports (case_sdpa_backward takes case_sdpa's helpers)."""
    text = (BOARD_DIR / f"{module}.py").read_text()
    return sorted(set(re.findall(r"^(?:from|import) (case_\w+)", text, re.M)) - {module})


def board_test(module, fixtures=None, heap=None, needs_ulab=None):
    """A pytest test that runs case module `module` on the --board target with the fixtures
    `fixtures()` returns ({name: {key: value}} or {name: bytes}); `heap` on the unix port.
    `needs_ulab`: a reason to skip where ulab is the stand-in."""

    @pytest.mark.board
    def test(board_target):
        if needs_ulab and not board_target.has_ulab():
            pytest.skip(needs_ulab)
        report = board_target.run(module, fixtures() if fixtures else {}, heap=heap)
        report.check()
        assert sorted(report.passed) == sorted(f"{module}.{n}" for n in case_names(module))

    test.__name__ = f"test_{module}"
    test.__doc__ = f"tests/board/{module}.py on the --board target"
    return test
