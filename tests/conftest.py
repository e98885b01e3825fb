import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402


@pytest.fixture
def virtual_board(tmp_path):
    """A running VirtualBoard with a fresh flash folder; stopped (no process left) afterwards."""
    from tinyattn_host.virtual_board import NoRawRepl, VirtualBoard

    board = VirtualBoard(flash_dir=tmp_path / "flash")
    try:
        board.start()
    except NoRawRepl as err:  # an old interpreter (MICROPYTHON=...) that mpremote cannot drive
        pytest.skip(str(err))
    yield board
    board.stop()
