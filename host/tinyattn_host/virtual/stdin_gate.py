"""When the virtual board may hand the host's bytes to the interpreter: none must be lost.

A board keeps every received byte in its stdin buffer until a program or the REPL reads it.
A unix port built from MicroPython's source does not: its REPL switches its terminal's mode
(tcsetattr TCSAFLUSH) before and after running each line, and so discards whatever input is
waiting, such as the next line typed ahead or mpremote's Ctrl-A. So the board's byte pump
keeps the bytes itself and writes them only while the interpreter is blocked reading its
stdin (process_state): at the REPL (a one-byte read) up to and including the next byte that
may end a line or switch a mode, to a program that reads more (the link) what it may take.
The next bytes wait until the interpreter has read those (its read count has grown by as
much), or until its terminal reports a flush: then the bytes it had not read yet (its read
count tells how many it had) go back to the head of the pending input, as a board would still
hold them (a program that ends before reading all the host sent: the link after EXIT).
"""

from .process_state import LINE, UNKNOWN, bytes_read, waits_for_input

# Bytes after which the REPL may flush its input: Enter, Ctrl-A (raw REPL), Ctrl-B (friendly
# REPL), Ctrl-D (run the raw REPL's code, or soft reset).
MAY_FLUSH = b"\r\x01\x02\x04"
STREAM_CHUNK = 4096  # bytes written at once to a program reading a stream


class StdinGate:
    """Decides how much of the host's pending input to write now to interpreter process
    `pid` (`chunk`); told what was written (`wrote`) and when the interpreter's terminal
    flushed its input (`flushed`: it returns what to write again). One per interpreter."""

    def __init__(self):
        self._taken = None  # the interpreter's read count when the last chunk was chosen
        self._written = b""  # the last chunk written, until it is all read
        self._expected = None  # the read count at which it is all read

    def flushed(self, pid):
        """The interpreter's terminal discarded its input: return the bytes of the last
        chunk it had not read (to be written again)."""
        if self._expected is None:
            return b""
        self._expected = None
        taken = bytes_read(pid)
        read = len(self._written) if taken is None else taken - self._taken
        return self._written[max(0, read):]

    def chunk(self, pid, pending):
        """The head of `pending` (bytes) to write now; b"" when it must wait."""
        if self._expected is not None:
            taken = bytes_read(pid)
            if taken is not None and taken < self._expected:
                return b""
            self._expected = None
        state = waits_for_input(pid)
        if state is None:
            return b""
        self._taken = bytes_read(pid)  # blocked in a read: it takes nothing meanwhile
        if state == UNKNOWN:  # /proc cannot tell: write it all, as a plain pty would
            return pending
        if state == LINE:
            ends = [at for at in map(pending.find, MAY_FLUSH) if at >= 0]
            return pending[:min(ends) + 1] if ends else pending
        return pending[:STREAM_CHUNK]

    def wrote(self, chunk, count):
        """The first `count` bytes of `chunk` went to the interpreter's terminal."""
        if count and self._taken is not None:
            self._written = chunk[:count]
            self._expected = self._taken + count
