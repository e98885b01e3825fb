"""Which serial port a command uses, and whether it can be opened: one check for every command.

`choose(port)` turns the PORT a user gave into a path, or None for the virtual board:

- a path is used as it is; `virtual` is the virtual board;
- `auto` is the one ESP32-S3 attached (Espressif's USB vendor id, or a USB-serial bridge);
- nothing given: that board when exactly one is attached, the virtual board when none is.

`check_port(path)` says what is wrong with a port: missing, busy, no permission. Both raise
BoardError, whose message is one line saying what to do.
"""

import errno
import os

import serial
from serial.tools import list_ports

from ..errors import BoardError

AUTO, VIRTUAL = "auto", "virtual"
PORT_HELP = ("serial port of the board, auto, or virtual (default: the one board attached, "
             "else a virtual board)")
ESPRESSIF = 0x303A  # the ESP32-S3's own USB (USB-serial-JTAG, or TinyUSB CDC)
BRIDGES = {  # USB-serial bridges on ESP32-S3 boards' UART connector
    0x10C4: "Silicon Labs CP210x", 0x1A86: "WCH CH340/CH9102", 0x0403: "FTDI",
    0x067B: "Prolific PL2303",
}


def candidates():
    """The attached serial ports that may be an ESP32-S3 (list_ports entries), Espressif first."""
    found = [p for p in list_ports.comports() if p.vid == ESPRESSIF or p.vid in BRIDGES]
    return sorted(found, key=lambda p: (p.vid != ESPRESSIF, p.device))


def describe(info):
    """One line about a list_ports entry: path, vendor and product ids, what it is."""
    what = "Espressif USB" if info.vid == ESPRESSIF else BRIDGES[info.vid]
    detail = info.description if info.description and info.description != "n/a" else ""
    return "%-14s %04x:%04x  %s%s" % (info.device, info.vid, info.pid or 0, what,
                                      "  (%s)" % detail if detail else "")


def choose(port):
    """The port path for PORT=`port` (module docstring), or None for the virtual board."""
    if port == VIRTUAL:
        return None
    if port and port != AUTO:
        return port
    found = candidates()
    if len(found) == 1:
        return found[0].device
    if not found and port != AUTO:
        return None
    if not found:
        raise BoardError("PORT=auto: no ESP32-S3 on USB (no Espressif or USB-serial device); "
                         "plug it in, or give PORT=/dev/ttyACM0")
    raise BoardError("%d candidate boards: %s; pick one with PORT=... (make devs lists them)"
                     % (len(found), ", ".join(p.device for p in found)))


def check_port(port):
    """Raise BoardError when `port` does not exist, is busy, or cannot be opened."""
    if not os.path.exists(port):
        raise BoardError("no such port: %s (is the board plugged in? make devs lists the "
                         "candidates)" % port)
    try:
        serial.Serial(port, exclusive=True).close()
    except serial.SerialException as err:
        number = getattr(err, "errno", None)
        if number in (errno.EAGAIN, errno.EWOULDBLOCK, errno.EBUSY) or "lock" in str(err):
            raise BoardError("port busy: another program (mpremote, a serial monitor) has %s "
                             "open; close it and try again" % port) from None
        if number == errno.EACCES:
            raise BoardError("no permission to open %s: add yourself to the dialout group "
                             "(sudo usermod -aG dialout $USER, then log in again)" % port) from None
        if _not_a_terminal(err):
            raise BoardError("%s is not a serial port (it has no terminal settings): give the "
                             "board's, e.g. /dev/ttyACM0 (make devs lists the candidates)"
                             % port) from None
        raise BoardError("cannot open %s: %s" % (port, err)) from None


def _not_a_terminal(err):
    """Whether pyserial failed on a file that is no terminal (/dev/null, a regular file): it
    says so in a termios error (errno ENOTTY) behind its own exception."""
    cause = err.__context__
    return getattr(err, "errno", None) == errno.ENOTTY or (
        cause is not None and getattr(cause, "args", (None,))[:1] == (errno.ENOTTY,))


def devs_command(args):
    """The devs command (`make devs`): the candidate boards, one a line."""
    found = candidates()
    for info in found:
        print(describe(info))
    if not found:
        print("no ESP32-S3 candidates on USB (Espressif vendor id %04x, or a CP210x, CH340, "
              "FTDI or PL2303 bridge); without PORT, commands use the virtual board" % ESPRESSIF)
    return 0

