"""Reach a board: open its port (or start a virtual board), check it, deploy, start the link.

    with Board(port=None) as board:      # None: a virtual board, started and stopped here
        link = board.start_link()        # tinyattn.link.serve() through the raw REPL
        link.forward(x)                  # the typed requests (link_requests.py), RUN

Every failure a user can meet on the way is a BoardError whose message says what to do.
"""

import contextlib
import io
import time

from mpremote.transport import TransportError, TransportExecError

from .. import protocol
from ..errors import BoardError
from .deploy import deploy as deploy_package, local_version
from .ports import check_port, choose
from .transport import open_transport

FIRMWARE_HINT = ("flash a MicroPython firmware built with ulab for the ESP32-S3 "
                 "(README, 'First board'; then make flash PORT=... FIRMWARE=...)")
RESET_MARKERS = (b"soft reboot", b"rst:0x")


class DeviceReset(BoardError):
    """The device rebooted while the link was running."""


class Board:
    """A board on `port`, or a virtual board (on `flash_dir`) when port is None.

    deploy: "auto" deploys when the device's tinyattn version is not this one, "always"
    deploys (copying only the files that differ; `use_py`: the .py sources), "never" raises
    BoardError offering the deploy. `serve_timeout`: seconds of host silence after which the
    device leaves the link by itself.
    """

    def __init__(self, port=None, flash_dir=None, deploy="auto", serve_timeout=10,
                 out=print, heap=None, use_py=False):
        self.port = port
        self.flash_dir = flash_dir
        self.deploy_mode = deploy
        self.use_py = use_py
        self.serve_timeout = serve_timeout
        self.out = out
        self.heap = heap
        self.virtual = None
        self.transport = None
        self.link = None
        self.info = None

    def __enter__(self):
        self.open()
        return self

    def __exit__(self, *exc):
        self.close()

    def open(self):
        """Connect, check MicroPython, ulab and the tinyattn version; deploy if needed.

        On any failure the port is closed and a virtual board stopped before the error goes up.
        """
        try:
            return self._open()
        except BaseException:
            self.close()
            raise

    def _open(self):
        if self.port is None:
            from ..virtual.virtual_board import VirtualBoard

            self.virtual = VirtualBoard(flash_dir=self.flash_dir, heap=self.heap)
            self.port = self.virtual.start()
            self.out(self.virtual.banner)
        check_port(self.port)
        self.transport = open_transport(self.port)
        self._leave_stale_link()
        self._enter_raw()
        self.info = self._device_info()
        if self.info["ulab"] is None:
            raise BoardError("the firmware on %s has no ulab: %s" % (self.port, FIRMWARE_HINT))
        wanted = local_version()
        if self.deploy_mode == "always" or self.info["tinyattn"] != wanted:
            if self.deploy_mode == "never":
                have = self.info["tinyattn"] or "no tinyattn"
                raise BoardError("the device has %s, this is tinyattn %s: deploy it (run "
                                 "with --deploy, or make deploy PORT=%s)" % (have, wanted, self.port))
            deploy_package(self.transport, use_py=self.use_py, out=self.out)
            self._enter_raw()
            self.info = self._device_info()
        return self.info

    def _leave_stale_link(self):
        """A link left serving by a host that vanished: ask it to exit, then forget it."""
        self.transport.serial.write(protocol.frame(protocol.EXIT, 0))
        time.sleep(0.2)
        self.transport.serial.reset_input_buffer()

    def _enter_raw(self):
        try:
            with contextlib.redirect_stdout(io.StringIO()):  # mpremote prints what it got
                self.transport.enter_raw_repl(soft_reset=True)
        except TransportError as err:
            raise BoardError("no MicroPython answering on %s (%s): is it a MicroPython board, "
                             "and not busy running a program? Press reset and try again"
                             % (self.port, err)) from None

    def _device_info(self):
        code = ("import sys, gc\n"
                "try:\n import ulab; u = ulab.__version__\nexcept ImportError:\n u = None\n"
                "try:\n import tinyattn; t = tinyattn.__version__\nexcept Exception:\n t = None\n"  # none, or broken
                "print(repr({'micropython': '%d.%d.%d' % sys.implementation.version[:3], "
                "'mpy': getattr(sys.implementation, '_mpy', None), 'ulab': u, 'tinyattn': t, "
                "'free': gc.mem_free()}))")
        try:
            return eval(self.transport.exec(code).decode(), {})  # a dict literal of our making
        except (TransportError, TransportExecError, SyntaxError) as err:
            raise BoardError("the device on %s did not answer a simple query: %s"
                             % (self.port, err)) from None

    def start_link(self):
        """Start tinyattn.link.serve() through the raw REPL; return a protocol.Link (HELLO done)."""
        self._enter_raw()
        self.transport.exec_raw_no_follow(
            "import tinyattn.link\ntinyattn.link.serve(timeout=%r)" % self.serve_timeout)
        self.link = ResetAwareLink(self.transport.serial)
        hello = self.link.hello()
        if hello.get("protocol") != protocol.PROTOCOL:
            raise BoardError("the device speaks link protocol %r, this host %d: deploy again"
                             % (hello.get("protocol"), protocol.PROTOCOL))
        return self.link

    def stop_link(self):
        """EXIT the link (the device goes back to the raw REPL)."""
        if self.link is None:
            return
        link, self.link = self.link, None
        try:
            link.exit()
            self.transport.read_until(1, b">", timeout=2)
        except (protocol.LinkTimeout, protocol.ErrorReply, DeviceReset):
            pass

    def release(self):
        """Stop the link, leave the raw REPL and close the port (a virtual board keeps running)."""
        try:
            if self.transport is not None:
                self.stop_link()
                self.transport.exit_raw_repl()
                self.transport.close()
        except (OSError, TransportError):
            pass
        finally:
            self.transport = None

    def close(self):
        """release(), and stop a virtual board."""
        try:
            self.release()
        finally:
            if self.virtual is not None:
                self.virtual.stop()
                self.virtual = None


def deploy_command(args):
    """The deploy command: deploy.py's deploy on the board `--port` names (or a virtual one)."""
    with Board(port=choose(args.port), flash_dir=args.flash, deploy="always", use_py=args.py):
        pass
    return 0


class ResetAwareLink(protocol.Link):
    """A Link that raises DeviceReset when the boot messages of a reset show up."""

    def _fill(self, deadline):
        super()._fill(deadline)
        if any(marker in self._buffer for marker in RESET_MARKERS):
            self._buffer.clear()
            raise DeviceReset("the device rebooted")
