"""Every command (run, bench, deploy, repl) meets a bad port the same way: one line, exit 2,
no traceback; and no command leaves a process behind, however it ends."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import serial

from tinyattn_host.virtual import unixport
from tinyattn_host.board.board import Board
from tinyattn_host.errors import BoardError
from tinyattn_host.virtual.unixport_process import has_raw_repl

from repl_line import DEADLINE

needs_virtual_board = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

COMMANDS = {
    "run": ["tinyattn_host", "run"],
    "bench": ["tinyattn_host", "bench", "--quick"],
    "deploy": ["tinyattn_host", "deploy"],
    "repl": ["tinyattn_host", "repl"],
}


def start(command, *args, **kwargs):
    return subprocess.Popen([sys.executable, "-m", *COMMANDS[command], *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def one_line_error(process, timeout=DEADLINE):
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 2, out + err
    assert "Traceback" not in err and err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in out and "b''" not in out, out
    return err


@pytest.fixture
def bare_pty():
    """A terminal with nothing behind it: the path of its slave."""
    master, slave = os.openpty()
    yield os.ttyname(slave)
    os.close(slave)
    os.close(master)


@pytest.mark.parametrize("command", COMMANDS)
def test_a_missing_port(command):
    err = one_line_error(start(command, "--port", "/dev/ttyNONE"))
    assert err.startswith("error: no such port: /dev/ttyNONE")


@pytest.mark.parametrize("command", COMMANDS)
def test_a_busy_port(command, bare_pty):
    with serial.Serial(bare_pty, exclusive=True):
        err = one_line_error(start(command, "--port", bare_pty))
    assert err.startswith("error: port busy: another program")


def test_nothing_answering():
    terminals = {command: os.openpty() for command in COMMANDS}  # nothing behind them
    try:
        paths = {command: os.ttyname(slave) for command, (_, slave) in terminals.items()}
        running = {command: start(command, "--port", paths[command]) for command in COMMANDS}
        for command, process in running.items():
            err = one_line_error(process)
            assert err.startswith("error: no MicroPython answering on %s" % paths[command])
    finally:
        for fd in sum(terminals.values(), ()):
            os.close(fd)


# ---- no process outlives its command ----------------------------------------------------
def descendants(pid):
    """Process ids of every descendant of `pid` that is still running."""
    found = []
    for task in Path("/proc/%d/task" % pid).glob("*"):
        try:
            children = (task / "children").read_text().split()
        except OSError:
            continue
        for child in map(int, children):
            found += [child, *descendants(child)]
    return found


def alive(pid):
    try:
        return "State:\tZ" not in Path("/proc/%d/status" % pid).read_text()
    except OSError:
        return False


def wait_for(condition, timeout=DEADLINE):
    deadline = time.monotonic() + timeout
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert condition()


@needs_virtual_board
def test_a_board_that_fails_to_open_leaves_nothing_running(tmp_path):
    before = set(descendants(os.getpid()))
    with pytest.raises(BoardError, match="has no tinyattn"):
        with Board(flash_dir=tmp_path / "flash", deploy="never", out=lambda *_: None):
            pass
    assert set(descendants(os.getpid())) == before


# What each command prints once it is in the middle of its work (a deploy about to copy files;
# the bench measuring).
MID_WORK = {"deploy": "deploying tinyattn as ", "run": "deploying tinyattn as ",
            "repl": "deploying tinyattn as ", "bench": " measured"}


@needs_virtual_board
@pytest.mark.parametrize("command, how", [("deploy", signal.SIGTERM), ("deploy", signal.SIGKILL),
                                          ("run", signal.SIGTERM), ("repl", signal.SIGHUP),
                                          ("bench", signal.SIGTERM)])
def test_a_killed_command_leaves_nothing_running(tmp_path, command, how):
    """As `timeout` (SIGTERM), a closed terminal (SIGHUP) or kill -9 end it, mid-way."""
    flash = ["--flash", str(tmp_path)] if command in ("deploy", "repl") else []
    process = subprocess.Popen([sys.executable, "-m", *COMMANDS[command], "--port", "virtual",
                                *flash], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
    lines = []

    def read_output():
        for line in process.stdout:
            lines.append(line)

    reader = threading.Thread(target=read_output, daemon=True)
    reader.start()
    try:
        wait_for(lambda: any(MID_WORK[command] in line for line in lines)
                 or process.poll() is not None)
        assert process.poll() is None, "".join(lines)  # still at work
        left = descendants(process.pid)
        assert left, "".join(lines)  # its board's interpreter, at least
        process.send_signal(how)
        process.wait(timeout=DEADLINE)
        wait_for(lambda: not any(alive(pid) for pid in left))
    finally:
        process.kill()
        process.wait()
        reader.join(timeout=DEADLINE)


@needs_virtual_board
def test_demo_prints_as_it_trains_and_writes_its_report(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "demo", "--port", "virtual",
                           "--epochs", "2", "--report", str(tmp_path)],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "epoch   2/2  loss" in done.stdout and "test accuracy" in done.stdout
    assert "@@HISTORY" not in done.stdout
    history = json.loads((tmp_path / "demo.json").read_text())
    assert len(history["loss"]) == len(history["test_accuracy"]) == 2
    assert all(0 <= a <= 1 for a in history["test_accuracy"])
    assert (tmp_path / "demo_training.png").stat().st_size > 5000
