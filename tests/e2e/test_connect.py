"""Connecting to the virtual board succeeds every time (issue 24): the host's first bytes, an
EXIT frame for a link a vanished host may have left serving (typed into the friendly REPL it
is a junk line, with a Ctrl-C and a \\r in it), then mpremote's Ctrl-C and Ctrl-A, all arrive,
however long the junk line takes to run."""

import shutil

import pytest

from tinyattn_host.board.board import Board
from tinyattn_host.errors import BoardError
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport import DEVICE_DIR
from tinyattn_host.virtual.unixport_process import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")

CONNECTS = 100


def test_every_connect_succeeds(virtual_board):
    shutil.copytree(DEVICE_DIR / "tinyattn", virtual_board.flash_dir / "lib" / "tinyattn")
    failed = []
    for attempt in range(CONNECTS):
        try:
            with Board(port=virtual_board.port, deploy="never", out=lambda *_: None) as board:
                assert board.info["tinyattn"] == "0.1.0"
        except BoardError as err:
            failed.append("connect %d: %s" % (attempt + 1, err))
    assert not failed, "%d of %d connects failed:\n%s" % (len(failed), CONNECTS,
                                                         "\n".join(failed))
