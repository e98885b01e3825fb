"""make repl without PORT: mpremote's REPL on a virtual board, in a terminal."""

import os
import select
import subprocess
import sys
import time

import pytest

from tinyattn_host.unixport import interpreter
from tinyattn_host.virtual_board import has_raw_repl

pytestmark = pytest.mark.skipif(
    not has_raw_repl(interpreter()), reason="the virtual board needs a unix port with a raw REPL")


def read_until(fd, marker, timeout=60):
    seen = b""
    end = time.monotonic() + timeout
    while marker not in seen:
        left = end - time.monotonic()
        assert left > 0, f"no {marker!r} in {seen[-400:]!r}"
        if select.select([fd], [], [], left)[0]:
            try:
                seen += os.read(fd, 4096)
            except OSError:  # the terminal closed
                break
    return seen


def test_repl_on_the_virtual_board_sees_the_deployed_package(tmp_path):
    deployed = subprocess.run([sys.executable, "-m", "tinyattn_host.deploy", "--flash",
                               str(tmp_path)], capture_output=True, timeout=300, check=False)
    assert deployed.returncode == 0, deployed.stderr
    terminal, user_side = os.openpty()
    repl = subprocess.Popen([sys.executable, "-m", "tinyattn_host.repl", "--flash", str(tmp_path)],
                            stdin=user_side, stdout=user_side, stderr=user_side)
    os.close(user_side)
    try:
        read_until(terminal, b"Use Ctrl-] or Ctrl-x to exit this shell")
        os.write(terminal, b"\r")
        read_until(terminal, b">>> ")
        os.write(terminal, b"import tinyattn; tinyattn.__version__, tinyattn.__file__\r")
        assert b"('0.1.0', '/lib/tinyattn/__init__.mpy')" in read_until(terminal, b"mpy')")
        os.write(terminal, b"\x18")  # Ctrl-X leaves mpremote's REPL
        assert repl.wait(timeout=60) == 0
    finally:
        if repl.poll() is None:
            repl.kill()
            repl.wait()
        os.close(terminal)
