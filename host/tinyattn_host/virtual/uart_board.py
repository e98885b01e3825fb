"""A virtual board whose stdin is a UART's ring buffer: what overflows it is lost.

    .venv/bin/python -m tinyattn_host virtual-board --uart [--flash DIR]

An ESP32's UART driver keeps received bytes in a ring until the program reads them; bytes
that arrive while it holds RING unread ones are dropped. The plain virtual board keeps every
byte (like the chip's USB port). Here the copying thread passes on only what fits: the bytes
the interpreter has not read yet are its tty's input queue (FIONREAD) plus those still held.
`dropped` counts the bytes lost.
"""

import fcntl
import os
import struct
import termios

from .virtual_board import VirtualBoard

RING = 260  # the bytes a board's stdin ring holds unread


class UartVirtualBoard(VirtualBoard):
    """VirtualBoard with a RING-byte unread window on the interpreter's stdin."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.dropped = 0

    def _take_input(self, data, queued):
        room = max(0, RING - queued - self._unread())
        self.dropped += max(0, len(data) - room)
        return data[:room]

    def held(self):
        """The bytes in the ring now: received, not read by the program yet."""
        return len(self._to_child) + self._unread()

    def _unread(self):
        """Bytes in the interpreter's tty input queue. The tty is opened for the question
        only: a slave held open would hide the interpreter's exit (EIO) from the board."""
        try:
            fd = os.open(self._child_tty, os.O_RDWR | os.O_NOCTTY)
        except OSError:  # no interpreter at the moment: it reads nothing
            return RING
        try:
            return struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, bytes(4)))[0]
        finally:
            os.close(fd)

