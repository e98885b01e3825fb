"""The virtual-board command: a virtual board, by hand, until Ctrl-C.

    .venv/bin/python -m tinyattn_host virtual-board [--flash DIR] [--heap 2m] [--uart]

prints the path to connect to (`mpremote connect /dev/pts/N`); `--uart` drops what overflows
a UART's ring buffer (uart_board.py).
"""

import signal
import threading

from .uart_board import UartVirtualBoard
from .virtual_board import VirtualBoard


def virtual_board_command(args):
    """The virtual-board command: start one, print where to connect, serve until Ctrl-C."""
    board = (UartVirtualBoard if args.uart else VirtualBoard)(flash_dir=args.flash,
                                                              heap=args.heap)
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
