import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import pytest  # noqa: E402

from board_cases import open_target  # noqa: E402


def pytest_addoption(parser):
    parser.addoption("--board", default="unix", help=(
        "where the board cases (tests/board) run: unix (the unix port, the default), or a "
        "PORT: virtual, auto, /dev/ttyACM0, or default (the one board attached, else virtual)"))


def pytest_configure(config):
    config.addinivalue_line("markers", "board: runs a case module of tests/board on --board")


@pytest.fixture(scope="session")
def board_target(request):
    """The --board target, opened once per session (per worker with pytest-xdist)."""
    from tinyattn_host.errors import BoardError
    from tinyattn_host.virtual.virtual_board import NoRawRepl

    try:
        target = open_target(request.config.getoption("--board"))
    except NoRawRepl as err:  # an interpreter mpremote cannot drive (MICROPYTHON=...)
        pytest.skip("no virtual board: %s; run the cases on it directly: pytest --board unix"
                    % err)
    except BoardError as err:  # one line for the whole run, not one error per test
        pytest.exit("--board %s: %s" % (request.config.getoption("--board"), err), returncode=2)
    yield target
    if hasattr(target, "close"):
        target.close()


@pytest.fixture
def start_virtual_board(tmp_path):
    """start_virtual_board(board_class=VirtualBoard, **kwargs): a running board with a fresh
    flash folder, stopped (no process left) afterwards; the test is skipped on an interpreter
    mpremote cannot drive (MICROPYTHON=... without a raw REPL)."""
    from tinyattn_host.virtual.virtual_board import NoRawRepl, VirtualBoard

    started = []

    def start(board_class=VirtualBoard, **kwargs):
        board = board_class(flash_dir=tmp_path / "flash", **kwargs)
        try:
            board.start()
        except NoRawRepl as err:
            pytest.skip(str(err))
        started.append(board)
        return board

    yield start
    for board in started:
        board.stop()


@pytest.fixture
def virtual_board(start_virtual_board):
    """A running VirtualBoard (start_virtual_board's)."""
    return start_virtual_board()


@pytest.fixture(scope="session")
def deployed(tmp_path_factory):
    """The package compiled as `make deploy` ships it (.mpy for the unix port's architecture),
    in a folder for MICROPYPATH; once a session."""
    from tinyattn_host.bench.bench import compiled_package
    from tinyattn_host.virtual import unixport

    folder = tmp_path_factory.mktemp("deployed")
    compiled_package(unixport.interpreter(), folder)
    return folder


@pytest.fixture
def attached(monkeypatch):
    """attached(("/dev/ttyACM0", 0x303A, 0x1001, "USB JTAG/serial debug unit"), ...) makes
    pyserial's list_ports report those devices (path, USB vendor id, product id, description)."""
    from serial.tools import list_ports
    from serial.tools.list_ports_common import ListPortInfo

    def attach(*devices):
        infos = []
        for device, vid, pid, description in devices:
            info = ListPortInfo(device, skip_link_detection=True)
            info.vid, info.pid, info.description = vid, pid, description
            infos.append(info)
        monkeypatch.setattr(list_ports, "comports", lambda *args, **kwargs: infos)

    return attach
