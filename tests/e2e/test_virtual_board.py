"""The virtual board answers plain mpremote like a board, reboots like one, and leaves nothing."""

import os
import pty
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import serial

from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl
from tinyattn_host.virtual.virtual_board import VirtualBoard

from repl_line import DEADLINE, friendly, read_until, wait_until

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

MPREMOTE = [sys.executable, "-m", "mpremote"]
DEVICE_PACKAGE = Path(__file__).resolve().parents[2] / "device" / "tinyattn"


def mpremote(port, *args, timeout=DEADLINE):
    done = subprocess.run([*MPREMOTE, "connect", port, *args], capture_output=True, text=True,
                          timeout=timeout)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return not Path("/proc/%d/status" % pid).read_text().count("State:\tZ")


def test_mpremote_exec_cp_ls_and_files_survive_a_restart(tmp_path):
    flash = tmp_path / "flash"
    with VirtualBoard(flash_dir=flash) as board:
        out = mpremote(board.port, "exec", "import sys; print(sys.path)")
        assert "['', '.frozen', '/lib']" in out
        mpremote(board.port, "cp", "-r", str(DEVICE_PACKAGE), ":/lib/")
        listing = mpremote(board.port, "ls", ":/lib/tinyattn")
        assert "nn/" in listing
        assert (flash / "lib" / "tinyattn" / "nn" / "attention.py").read_bytes() == \
            (DEVICE_PACKAGE / "nn" / "attention.py").read_bytes()
    with VirtualBoard(flash_dir=flash) as board:  # the flash keeps its files
        out = mpremote(board.port, "exec", "import tinyattn; print(tinyattn.__version__)")
        assert out.strip() == "0.1.0"


def test_flash_is_the_root_and_nothing_escapes_it(virtual_board):
    mpremote(virtual_board.port, "exec", "f = open('/lib/note.txt', 'w'); f.write('hi'); f.close()")
    assert (virtual_board.flash_dir / "lib" / "note.txt").read_text() == "hi"
    out = mpremote(virtual_board.port, "exec", "import os; print(sorted(os.listdir('/')))")
    assert out.strip() == "['lib']"


def test_soft_reset_starts_a_fresh_interpreter(virtual_board):
    port = virtual_board.port
    first_pid = virtual_board.pid
    mpremote(port, "exec", "import machine; machine.soft_reset()")
    wait_until(lambda: virtual_board.pid not in (first_pid, None))
    with serial.Serial(port, timeout=0.05) as line:
        friendly(line)
        line.write(b"marker = 1\r")
        assert read_until(line, b">>> ").endswith(b"marker = 1\r\n>>> ")
        line.write(b"\x04")  # Ctrl-D: soft reset
        rebooted = read_until(line, b">>> ", after=b"MPY: soft reboot\r\n")
        assert b"MPY: soft reboot\r\n" in rebooted, rebooted
        assert b"tinyattn virtual board:" in rebooted
        line.write(b"print('marker' in globals())\r")
        assert b"False\r\n" in read_until(line, b">>> ")


def test_lines_typed_ahead_all_run(virtual_board):
    """A board keeps what arrives while it runs a line; so does the virtual board, on a unix
    port whose REPL discards pending input before and after each line it runs."""
    with serial.Serial(virtual_board.port, timeout=0.05) as line:
        friendly(line)
        line.write(b"a = 6\rimport time; time.sleep_ms(50)\rb = a * 7\r"
                   b"print('typed', 'ahead', b)\r")
        seen = read_until(line, b"typed ahead 42\r\n>>> ")
        assert seen.endswith(b"typed ahead 42\r\n>>> "), seen


def test_soft_reset_in_raw_repl_comes_back_to_the_raw_repl(virtual_board):
    with serial.Serial(virtual_board.port, timeout=0.05) as line:
        line.write(b"\r\x03\r\x01")
        assert read_until(line, b"raw REPL; CTRL-B to exit\r\n>").endswith(
            b"raw REPL; CTRL-B to exit\r\n>")
        line.write(b"\x04")
        answer = read_until(line, b"raw REPL; CTRL-B to exit\r\n>")
        assert answer.startswith(b"OK\r\nMPY: soft reboot\r\n"), answer
        assert b"MicroPython" not in answer  # no friendly banner in raw mode, as on a board


def test_mpremote_repl(virtual_board):
    """`mpremote connect <pty> repl` on a terminal: a line typed in comes back evaluated."""
    pid, terminal = pty.fork()
    if pid == 0:
        os.execv(sys.executable, [*MPREMOTE, "connect", virtual_board.port, "repl"])
    try:
        seen = b""
        deadline = time.monotonic() + DEADLINE
        while b"to exit this shell" not in seen and time.monotonic() < deadline:
            if select.select([terminal], [], [], 0.1)[0]:
                seen += os.read(terminal, 4096)
        os.write(terminal, b"\r")  # mpremote is connected: a prompt
        sent = False
        while time.monotonic() < deadline and b"42" not in seen.split(b"6 * 7")[-1]:
            if select.select([terminal], [], [], 0.1)[0]:
                seen += os.read(terminal, 4096)
            if not sent and b">>> " in seen:
                os.write(terminal, b"6 * 7\r")
                sent = True
        assert b"42" in seen.split(b"6 * 7")[-1], seen
        os.write(terminal, b"\x1d")  # Ctrl-]: leave mpremote
    finally:
        _reap(pid)
        os.close(terminal)


def _reap(pid, timeout=DEADLINE):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if os.waitpid(pid, os.WNOHANG) != (0, 0):
            return
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def test_banner_names_the_interpreter_and_ulab(virtual_board):
    expected = "real" if unixport.has_ulab(virtual_board.interpreter) else "stand-in"
    assert virtual_board.ulab == expected
    assert virtual_board.interpreter in virtual_board.banner
    assert "ulab: %s" % expected in virtual_board.banner
    standin = virtual_board.flash_dir / "lib" / "ulab" / "numpy.py"
    assert standin.exists() == (expected == "stand-in")


def test_stop_leaves_no_process_or_thread(tmp_path):
    board = VirtualBoard(flash_dir=tmp_path / "flash")
    board.start()
    first_pid = board.pid
    mpremote(board.port, "exec", "import machine; machine.soft_reset()")
    wait_until(lambda: board.pid not in (first_pid, None))  # the reboot's new interpreter
    pid = board.pid
    threads = threading.active_count()
    board.stop()
    assert not alive(pid)
    assert threading.active_count() == threads - 1
    assert board.pid is None


def test_cli_prints_the_port_and_stops_on_interrupt(tmp_path):
    # SIGINT's default action in the command, as in a terminal: a test run started in the
    # background (`make test &`) ignores SIGINT, and its children would inherit that
    cli = subprocess.Popen([sys.executable, "-m", "tinyattn_host", "virtual-board",
                            "--flash", str(tmp_path / "flash")],
                           stdout=subprocess.PIPE, text=True,
                           preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        banner = cli.stdout.readline()
        port_line = cli.stdout.readline()
        assert "tinyattn virtual board" in banner
        port = port_line.split()[2]
        assert mpremote(port, "exec", "print(1 + 1)").strip() == "2"
        children = [pid for task in Path("/proc/%d/task" % cli.pid).iterdir()
                    for pid in (task / "children").read_text().split()]
        assert len(children) == 1  # the interpreter
    finally:
        cli.send_signal(signal.SIGINT)
        try:
            stopped = cli.wait(timeout=DEADLINE)
        finally:
            cli.kill()  # only if it is still running: a failed test leaves nothing behind
    assert stopped == 0
    assert not alive(int(children[0]))
