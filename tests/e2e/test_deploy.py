"""make deploy on the virtual board: .mpy files, skipping, the demo, mip; and the ESP32-S3 build."""

import hashlib
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from tinyattn_host.board import deploy as deploy_module
from tinyattn_host.board import mip_package
from mpremote.transport import TransportError

from tinyattn_host.board.deploy import DeployError, MpyFormat, deploy
from tinyattn_host.board.transport import open_transport
from tinyattn_host.locations import DEVICE_DIR, ROOT
from tinyattn_host.virtual.unixport import interpreter
from tinyattn_host.virtual.unixport_process import has_raw_repl

SOURCES = sorted(p.relative_to(DEVICE_DIR / "tinyattn").as_posix()
                 for p in (DEVICE_DIR / "tinyattn").rglob("*.py"))
BOARD_SOURCES = [  # what a unix port (the virtual board) gets: no asm_xtensa module
    n for n in SOURCES
    if not deploy_module.XTENSAWIN_ONLY.search((DEVICE_DIR / "tinyattn" / n).read_text())]
ESP32S3_MPY = 6 | (3 << 8) | (10 << 10)  # sys.implementation._mpy of MicroPython 1.23+ there
needs_virtual_board = pytest.mark.skipif(
    not has_raw_repl(interpreter()), reason="the virtual board needs a unix port with a raw REPL")


def quiet(*_):
    pass


def run_on(board, code, timeout=300):
    """Run code in the board's raw REPL; return its output (raise on an exception)."""
    transport = open_transport(board.port)
    try:
        transport.enter_raw_repl()
        out, err = transport.exec_raw(code, timeout=timeout)
        assert not err, err.decode()
        return out.decode()
    finally:
        transport.close()


def device_mpy(board):
    return MpyFormat.from_sys(int(run_on(board, "import sys\nprint(sys.implementation._mpy)")))


def files_under(folder):
    """The files under folder (its subfolders too), as sorted relative posix paths."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def on_flash(board):
    return files_under(board.flash_dir / "lib" / "tinyattn")


@needs_virtual_board
def test_deploy_then_run_the_demo(virtual_board):
    lines = []
    done = deploy(virtual_board.port, out=lines.append)
    assert len(lines) == 3, lines  # what, the counts (not a line a file), where it imports from
    assert lines[1] == "  %d copied, 0 unchanged, 0 removed" % len(done.copied)
    device = device_mpy(virtual_board)
    assert done.how == f".mpy v{device.label} for {device.arch_name}"
    mpy_names = [name.replace(".py", ".mpy") for name in BOARD_SOURCES]
    assert sorted(done.copied) == [f"/lib/tinyattn/{name}" for name in mpy_names]
    assert on_flash(virtual_board) == mpy_names
    for name in mpy_names:
        data = (virtual_board.flash_dir / "lib" / "tinyattn" / name).read_bytes()
        assert device.loads(MpyFormat.from_header(data[:3])), name
    assert (done.version, done.imported_from) == ("0.1.0", "/lib/tinyattn/__init__.mpy")
    out = run_on(virtual_board, "import tinyattn\ntinyattn.demo(epochs=2, log_every=1)")
    assert "training the Iris model" in out
    assert "test accuracy" in out


@needs_virtual_board
def test_second_deploy_copies_only_what_changed(virtual_board):
    first = deploy(virtual_board.port, out=quiet)
    again = deploy(virtual_board.port, out=quiet)
    assert (again.copied, again.removed) == ([], [])
    assert sorted(again.unchanged) == sorted(first.copied)
    lib = virtual_board.flash_dir / "lib" / "tinyattn"
    (lib / "rng.mpy").write_bytes(b"M\x06\x00\x1f stale")
    (lib / "gone.py").write_text("x = 1\n")
    lines = []
    third = deploy(virtual_board.port, out=lines.append)
    assert lines[1] == "  1 copied (/lib/tinyattn/rng.mpy), %d unchanged, 1 removed " \
        "(/lib/tinyattn/gone.py)" % len(third.unchanged)
    assert third.copied == ["/lib/tinyattn/rng.mpy"]
    assert third.removed == ["/lib/tinyattn/gone.py"]


@needs_virtual_board
def test_py_deploy_replaces_the_mpy_files(virtual_board):
    deploy(virtual_board.port, out=quiet)
    done = deploy(virtual_board.port, use_py=True, out=quiet)
    assert done.how == ".py sources, as asked"
    assert on_flash(virtual_board) == BOARD_SOURCES
    for name in BOARD_SOURCES:
        assert ((virtual_board.flash_dir / "lib" / "tinyattn" / name).read_bytes()
                == (DEVICE_DIR / "tinyattn" / name).read_bytes())
    assert done.imported_from == "/lib/tinyattn/__init__.py"


@needs_virtual_board
def test_deploy_accepts_an_open_transport(virtual_board):
    transport = open_transport(virtual_board.port)
    try:
        transport.enter_raw_repl()
        done = deploy(transport, out=quiet)
        assert transport.in_raw_repl
        assert transport.eval("1 + 1") == 2
    finally:
        transport.close()
    assert done.version == "0.1.0"


@needs_virtual_board
def test_a_board_gone_silent_is_an_error_not_a_hang(virtual_board):
    """mpremote reads a pty without a deadline of its own: a board that went silent must end
    the deploy with an error (a command: one line, exit 2) within its deadlines."""
    os.kill(virtual_board.pid, signal.SIGSTOP)  # frozen: it reads nothing, prints nothing
    ended = []

    def deploy_in_thread():
        try:
            deploy(virtual_board.port, out=quiet)
        except Exception as err:  # what ended it
            ended.append(err)

    started = time.monotonic()
    thread = threading.Thread(target=deploy_in_thread, daemon=True)
    thread.start()
    thread.join(timeout=180)  # mpremote's own deadlines (10 s a wait) hold well within it
    assert not thread.is_alive(), "deploy still waiting after %.0f s" % (time.monotonic()
                                                                         - started)
    assert len(ended) == 1 and isinstance(ended[0], TransportError), ended


@needs_virtual_board
def test_a_firmware_without_ulab_is_named(virtual_board):
    if virtual_board.ulab == "real":
        pytest.skip("the interpreter has ulab built in")
    for path in sorted((virtual_board.flash_dir / "lib" / "ulab").rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    (virtual_board.flash_dir / "lib" / "ulab").rmdir()
    with pytest.raises(DeployError, match="ImportError.*ulab.*firmware has no ulab"):
        deploy(virtual_board.port, out=quiet)


@needs_virtual_board
def test_cli_deploys_to_a_virtual_board(tmp_path):
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "deploy", "--flash",
                           str(tmp_path)], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    assert "tinyattn 0.1.0 imports on the device from /lib/tinyattn/__init__.mpy" in done.stdout
    assert files_under(tmp_path / "lib" / "tinyattn") == [
        name.replace(".py", ".mpy") for name in BOARD_SOURCES]


@needs_virtual_board
def test_mip_installs_package_json(virtual_board):
    """mpremote's own mip, given the local package.json, installs what github: would: the
    core, without the bench (package-bench.json, whose dependency on the core is a github:
    URL, is checked in tests/host/test_package_json.py)."""
    done = subprocess.run(
        [sys.executable, "-m", "mpremote", "connect", virtual_board.port,
         "mip", "install", str(ROOT / "package.json")],
        capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    lib = virtual_board.flash_dir / "lib" / "tinyattn"
    core = [p.as_posix() for p in mip_package.part_sources("core")]
    assert on_flash(virtual_board) == core
    for name in core:
        local = (DEVICE_DIR / "tinyattn" / name).read_bytes()
        assert hashlib.sha256((lib / name).read_bytes()).digest() == hashlib.sha256(local).digest()
    out = run_on(virtual_board, "import tinyattn\nprint(tinyattn.__version__, tinyattn.__file__)")
    assert out.split() == ["0.1.0", "/lib/tinyattn/__init__.py"]


def test_mpy_files_for_the_esp32s3_are_xtensawin():
    """Compiled as for a board: 'M', v6, and native code (viper) for arch 10, sub-version 3."""
    compiled = deploy_module.compile_package(MpyFormat.from_sys(ESP32S3_MPY))
    assert sorted(compiled) == [name.replace(".py", ".mpy") for name in SOURCES]
    native = []
    for name, data in compiled.items():
        assert data[:2] == b"M\x06", name
        source = (DEVICE_DIR / "tinyattn" / name.replace(".mpy", ".py")).read_text()
        if any("\n@micropython." + k in source for k in ("viper", "native", "asm_xtensa")):
            native.append(name)
            assert (data[2] >> 2, data[2] & 3) == (10, 3), name
        else:
            assert data[2] == 0, name  # bytecode only: no arch, loads anywhere
    assert "int8/kernels.mpy" in native and "int8/asm_mac16.mpy" in native
