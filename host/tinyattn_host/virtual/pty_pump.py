"""The virtual board's byte pump between the host's pty and the interpreter's, as a board's port.

Two pseudo-terminals: the host opens the slave of the first (the board's port); the interpreter
runs with its stdin and stdout on the slave of the second. A thread copies bytes between the
two masters and notices the reboots. Output while no host has the port open is dropped, as a
USB port with nobody listening drops it. `_take_input` decides how much host input the
interpreter takes (uart_board overrides it).

Ctrl-C: with the pty in raw mode the interpreter gets no SIGINT from the terminal, so the
thread plays the board's UART: a Ctrl-C byte while the interpreter has a SIGINT handler (it
runs code with `micropython.kbd_intr(3)`, the default) and has mounted its flash becomes
SIGINT, and the code stops with KeyboardInterrupt; otherwise (at a prompt, or a program that
called `kbd_intr(-1)`, as the link does) the byte goes through as data. (At a prompt no handler
is wanted: the unix port restores SIGINT's default action, which would end it, as code ends.)
"""

import errno
import os
import selectors
import signal
import time

from .unixport_process import RAW_PROMPT, READY, catches_sigint

FRIENDLY_PROMPT = b"\n>>> "
OUTPUT_BACKLOG = 1 << 16  # bytes waiting for the host before the interpreter is held back
CTRL_C = b"\x03"
# A second SIGINT while the first is pending ends the unix port (its handler calls exit(1));
# a board keeps one pending KeyboardInterrupt. Ctrl-C bytes this soon after one are dropped.
INTERRUPT_PENDING = 0.25  # seconds
# A Ctrl-C becomes SIGINT only once code has run this long without coming back to a prompt:
# code that is about to end restores SIGINT's default action, and a SIGINT then ends the
# interpreter (a board would just print a prompt). Until then the byte waits.
SETTLE = 0.3  # seconds


class PtyPump:
    """The copying loop of a board (VirtualBoard subclasses it).

    The board sets `_host` (the port's pty master), `_wake_r` (a pipe's end that wakes the
    loop), `_stopping` and `_proc` (the interpreter), calls `_attach` for each interpreter it
    boots, and has `banner` and `_reboot()`: start a new interpreter when the last one has
    exited, return what the board prints meanwhile.
    """

    def _attach(self, child, raw):
        """A new interpreter on pty master `child`: its output is held back until READY; in
        raw mode its banner is swallowed and Ctrl-A sent at its first prompt."""
        self._child = child
        self._ready = False  # until the boot script prints READY (held back till then)
        self._at_prompt, self._busy_since = False, time.monotonic()
        self._early = b""
        self._entering_raw = raw  # swallow output up to the first prompt, then send Ctrl-A
        self._swallowed = b""

    def _copy(self):
        """The loop, until `_stopping`: host input to the interpreter, its output to the host."""
        self._raw = False  # the interpreter is in the raw REPL (a reboot keeps the mode)
        self._interrupted = 0.0  # when the last SIGINT was sent
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
