"""mpremote's serial transport, opened so that every wait for the board ends.

mpremote reads a pty without asking what is waiting, and without a read timeout one read
from a board that went silent (a lost byte, a hung program) never returns: its own deadlines
(`timeout_overall`, a follow's silence timeout) are only checked between reads. Every port
the host opens with mpremote is opened here, with a read timeout long enough for a loaded
machine's answer to a raw-paste request, so that those deadlines hold; a board that misses
them is a TransportError, which a command reports as one line, exit status 2 (cli.run).
"""

from mpremote.transport import TransportError
from mpremote.transport_serial import SerialTransport

from ..errors import BoardError

READ_TIMEOUT = 5  # seconds one read waits for its bytes


def open_transport(port, wait=0):
    """A SerialTransport on `port` (waiting up to `wait` seconds for it to appear)."""
    try:
        return SerialTransport(str(port), baudrate=115200, wait=wait, timeout=READ_TIMEOUT)
    except TransportError as err:
        raise BoardError("cannot open %s: %s" % (port, err)) from None
