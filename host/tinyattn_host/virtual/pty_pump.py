"""The virtual board's byte pump between the host's pty and the interpreter's, as a board's port.

Two pseudo-terminals: the host opens the slave of the first (the board's port); the interpreter
runs with its stdin and stdout on the slave of the second. A thread copies bytes between the
two masters and notices the reboots. Output while no host has the port open is dropped, as a
USB port with nobody listening drops it. `_take_input` decides how much host input the
interpreter takes (uart_board overrides it).

Input: the interpreter's terminal may discard what waits in it (a unix port built from
MicroPython's source flushes at every line it runs), so the pump keeps the host's bytes and
writes them only as stdin_gate allows: while the interpreter reads, never more than it takes
before it could flush. A board's stdin buffer loses nothing either.

Ctrl-C: with the pty in raw mode the interpreter gets no SIGINT from the terminal, so the
thread plays the board's UART: a Ctrl-C byte while MicroPython runs code (its SIGINT handler
is installed while code runs with `micropython.kbd_intr(3)`, the default) and has mounted its
flash becomes SIGINT, and the code stops with KeyboardInterrupt; otherwise (at a prompt, or a
program that called `kbd_intr(-1)`, as the link does) the byte goes through as data, in its
turn. (At a prompt no handler is wanted: the unix port restores SIGINT's default action, which
would end it, as code ends.) The signal goes to the process that runs MicroPython, found
under a wrapper command if need be (process_state). A unix port with threads and no GIL
raises KeyboardInterrupt inside its signal handler, and when that lands in code holding its
heap's lock the interpreter waits for that lock for ever (docs/testing.md): the pump sees it
(process_state.hung_in_a_lock), says so in one line and resets the board, as a person presses
a hung board's reset button.
"""

import errno
import fcntl
import os
import select
import selectors
import signal
import struct
import termios
import time

from .process_state import catches_sigint, hung_in_a_lock, micropython_pid
from .stdin_gate import StdinGate
from .unixport_process import RAW_PROMPT, READY

FRIENDLY_PROMPT = b"\n>>> "
PROMPTS = (b">>> ", b"\x04>")  # how output ends at a prompt: the friendly REPL's, the raw's
OUTPUT_BACKLOG = 1 << 16  # bytes waiting for the host before the interpreter is held back
CTRL_C = b"\x03"
# A second SIGINT while the first is pending ends the unix port (its handler calls exit(1));
# a board keeps one pending KeyboardInterrupt. Ctrl-C bytes this soon after one are dropped.
INTERRUPT_PENDING = 0.25  # seconds
# A Ctrl-C becomes SIGINT only once code has run this long without coming back to a prompt:
# code that is about to end restores SIGINT's default action, and a SIGINT then ends the
# interpreter (a board would just print a prompt). Until then the byte waits.
SETTLE = 0.3  # seconds
# While input waits for the interpreter, the loop looks again after POLL_FIRST, then twice as
# long each time up to POLL_MOST (seconds).
POLL_FIRST, POLL_MOST = 0.001, 0.02
TIOCPKT_FLUSHREAD = 1  # packet mode's status bit: the interpreter's input was discarded
HUNG_AFTER_CTRL_C = (
    b"\r\nvirtual board: MicroPython hangs in a lock after the Ctrl-C (as a unix port without "
    b"a GIL can, in its heap's: docs/testing.md); resetting it\r\n")


class PtyPump:
    """The copying loop of a board (VirtualBoard subclasses it).

    The board sets `_host` (the port's pty master), `_wake_r` (a pipe's end that wakes the
    loop), `_stopping` and `_proc` (the interpreter command's process), calls `_attach` for
    each interpreter it boots, and has `banner`, `hard_reset()` (kill the interpreter) and
    `_reboot()`: start a new interpreter when the last one has exited, return what the board
    prints meanwhile.
    """

    def _attach(self, child, child_tty, raw):
        """A new interpreter on pty master `child` (slave `child_tty`): its output is held
        back until READY; in raw mode its banner is swallowed and Ctrl-A sent at its first
        prompt. The master is in packet mode, so that the pump sees the input flushes."""
        self._child, self._child_tty = child, child_tty
        fcntl.ioctl(child, termios.TIOCPKT, struct.pack("i", 1))
        self._ready = False  # until the boot script prints READY (held back till then)
        self._early = b""
        self._entering_raw = raw  # swallow output up to the first prompt, then send Ctrl-A
        self._swallowed = b""
        self._gate = StdinGate()
        self._child_full = False  # the interpreter's terminal took less than it was given
        self._code_since = None  # since when MicroPython is seen running code
        self._unanswered = False  # a SIGINT was sent and no prompt has followed yet

    def _interpreter_pid(self):
        """The process that runs MicroPython (the command's, or one its wrapper started)."""
        proc = self._proc
        return micropython_pid(proc.pid, self._child_tty) if proc is not None else None

    def _copy(self):
        """The loop, until `_stopping`: host input to the interpreter, its output to the host."""
        self._raw = False  # the interpreter is in the raw REPL (a reboot keeps the mode)
        self._interrupted = 0.0  # when the last SIGINT was sent
        self._to_child = to_child = bytearray()  # host input not yet given to the interpreter
        self._to_host = to_host = bytearray((self.banner + "\r\n").encode())  # not yet taken
        self._tail = b""  # the last output bytes, to spot prompts
        poll = POLL_FIRST
        selector = selectors.DefaultSelector()
        selector.register(self._wake_r, selectors.EVENT_READ)
        host_registered = child_registered = None
        while not self._stopping:
            if to_child and not self._entering_raw and not self._child_full:
                poll = POLL_FIRST if self._feed(to_child) else min(2 * poll, POLL_MOST)
            waiting = bool(to_child) and not self._child_full and not self._entering_raw
            host_events = selectors.EVENT_READ | (selectors.EVENT_WRITE if to_host else 0)
            host_registered = _register(selector, self._host, host_events, host_registered)
            child_events = (0 if len(to_host) > OUTPUT_BACKLOG else selectors.EVENT_READ) | (
                selectors.EVENT_WRITE if self._child_full else 0)
            child_registered = _register(selector, self._child, child_events, child_registered)
            events = selector.select(timeout=poll if waiting else 0.2)
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
                    if mask & selectors.EVENT_WRITE:
                        self._child_full = False
                    if mask & selectors.EVENT_READ and not self._from_child():
                        # the interpreter is gone: reboot
                        selector.unregister(self._child)
                        child_registered = None
                        to_host += self._reboot()
                        self._tail = b""
            if self._unanswered and self._hung():
                self._unanswered = False
                to_host += HUNG_AFTER_CTRL_C
                self.hard_reset()  # the loop sees it gone and boots a new one
        selector.close()

    def _hung(self):
        """Whether the interpreter (when one runs) waits for a lock for ever."""
        pid = self._interpreter_pid()
        return pid is not None and hung_in_a_lock(pid)

    def _from_child(self):
        """Take one read of the interpreter's output into `_to_host`; False when it is gone."""
        data = _read(self._child)
        if data is None:
            return False
        data = self._packet(data)
        if not self._ready:
            data = self._boot_output(data)
        if self._entering_raw:
            data = self._swallow(data)
        if not self._raw:  # the friendly REPL's newlines, as a board sends them
            data = _crlf(data, self._tail[-1:])
        self._tail = (self._tail + data)[-64:]
        self._track_mode(self._tail)
        if self._tail.endswith(PROMPTS):  # the interpreter answered and waits for input
            self._unanswered = False
        self._to_host += data
        return True

    def _packet(self, data):
        """The output in a packet-mode read. At a flush report, what the interpreter had not
        read yet goes back ahead of the pending input."""
        if not data:
            return b""
        if data[0] & TIOCPKT_FLUSHREAD:
            self._to_child[:0] = self._gate.flushed(self._interpreter_pid())
            self._code_since = None  # a flush: code starts or ends
        return data[1:] if data[0] == 0 else b""

    def _feed(self, pending):
        """Write to the interpreter what the gate lets through of the host's bytes, up to the
        next Ctrl-C, which interrupts running code as a board's UART does (module docstring);
        take them off `pending`. Whether anything happened."""
        pid = self._interpreter_pid()
        at = pending.find(CTRL_C)
        if at >= 0 and self._ready:
            if self._runs_code(pid):
                del pending[at]
                if time.monotonic() - self._interrupted > INTERRUPT_PENDING:
                    self._interrupted = time.monotonic()
                    self._unanswered = True
                    os.kill(pid, signal.SIGINT)
                return True
            if at == 0 and catches_sigint(pid):  # code that may end in a moment: it waits
                return False
        chunk = self._gate.chunk(pid, bytes(pending[:len(pending) if at < 0 else max(at, 1)]))
        if not chunk or not self._drain_child():
            return False
        written = _write(self._child, chunk)
        self._gate.wrote(chunk, written)
        self._child_full = written < len(chunk)
        del pending[:written]
        return written > 0

    def _drain_child(self):
        """Before a write: take the output (and flush reports) the interpreter has made, so
        that no flush it made before is taken for one of the bytes about to be written.
        False when it is gone."""
        for _ in range(64):
            if not select.select([self._child], [], [], 0)[0]:
                return True
            if not self._from_child():
                return False
        return True

    def _runs_code(self, pid):
        """Whether MicroPython has run code (its SIGINT handler installed) for SETTLE now."""
        if not catches_sigint(pid):
            self._code_since = None
            return False
        now = time.monotonic()
        if self._code_since is None:
            self._code_since = now
        return now - self._code_since >= SETTLE

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
        self._to_child[:0] = b"\x01"  # ahead of what the host sent meanwhile
        return rest

    def _track_mode(self, tail):
        raw_at = tail.rfind(RAW_PROMPT)
        friendly_at = tail.rfind(FRIENDLY_PROMPT)
        if raw_at >= 0 or friendly_at >= 0:
            self._raw = raw_at > friendly_at


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
