"""A unix-port interpreter process on its own pseudo-terminal, as the virtual board runs one.

`boot` starts one with a folder as its flash (`/`) and its stdin and stdout on a raw pty (a
tty, so its REPL is interactive); `has_raw_repl` asks an interpreter what the virtual board
needs to know (process_state says what a running one is doing). Every process started here
dies with the thread that started it, so a host that is killed leaves none behind.
"""

import ctypes
import functools
import os
import select
import signal
import subprocess
import time
import tty

RAW_PROMPT = b"raw REPL; CTRL-B to exit\r\n"
# Printed by the boot script once the flash is mounted (an escape sequence terminals ignore;
# the board never passes it on): from then on Ctrl-C can interrupt, as once a board's firmware
# has started and runs boot.py and main.py. Before, the byte is data.
READY = b"\x1b_tinyattn-ready\x1b\\"
PR_SET_PDEATHSIG = 1  # linux/prctl.h
_LIBC = ctypes.CDLL(None)
_prctl = getattr(_LIBC, "prctl", None)  # looked up here, not in a forked child
_signal = _LIBC.signal
_signal.argtypes, _signal.restype = [ctypes.c_int, ctypes.c_void_p], ctypes.c_void_p

# The flash is a VfsPosix at '/'. Before MicroPython's fix of #7389 (after 1.29), its rename
# of one absolute path to another fails with ENOENT; a board's file system has no such bug, and
# a Python subclass cannot patch it (the import machinery would read the subclass as the C
# object), so on the virtual board tinyattn.save takes a relative path (README).
_BOOT = """\
import os, sys
os.umount('/')
os.mount(os.VfsPosix({flash!r}), '/')
os.chdir('/')
sys.path[:] = ['', '.frozen', '/lib']
print({ready!r}, end='')
del os, sys
def _run(name):
    try:
        open(name).close()
    except OSError:
        return
    exec(open(name).read(), globals())
_run('boot.py')
if {run_main}:
    _run('main.py')
del _run
"""


def boot(interpreter, flash_dir, heap=None, run_main=True):
    """Start `interpreter` on a new raw pty, `flash_dir` mounted as `/`, boot.py run (and
    main.py when `run_main`), READY printed; return (process, its pty's master, non-blocking,
    and the path of the pty's slave)."""
    child, slave = os.openpty()
    tty.setraw(slave)
    command = [interpreter]
    if heap:
        command += ["-X", "heapsize=%s" % heap]
    command += ["-i", "-c", _BOOT.format(flash=str(flash_dir), run_main=run_main,
                                         ready=READY.decode())]
    env = {k: v for k, v in os.environ.items() if k != "MICROPYPATH"}
    proc = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave,
                            cwd=flash_dir, env=env, start_new_session=True,
                            preexec_fn=_interpreter_child)
    child_tty = os.ttyname(slave)
    os.close(slave)
    os.set_blocking(child, False)
    return proc, child, child_tty


@functools.lru_cache(maxsize=None)
def has_raw_repl(interpreter):
    """Whether the interpreter's REPL on a terminal answers Ctrl-A with the raw REPL prompt."""
    child, slave = os.openpty()
    tty.setraw(slave)
    proc = subprocess.Popen([interpreter], stdin=slave, stdout=slave, stderr=slave,
                            start_new_session=True, preexec_fn=_interpreter_child)
    os.close(slave)
    seen = b""
    try:
        # the REPL discards input that comes before it has set up its terminal (TCSAFLUSH):
        # Ctrl-A goes again until the raw prompt or the deadline
        deadline = time.monotonic() + 3
        while RAW_PROMPT not in seen and time.monotonic() < deadline:
            if b">>> " in seen or not seen:
                os.write(child, b"\r\x01")
            ready, _, _ = select.select([child], [], [], 0.2)
            if ready:
                try:
                    seen += os.read(child, 4096)
                except OSError:
                    break
    finally:
        proc.kill()
        proc.wait()
        os.close(child)
    return RAW_PROMPT in seen


def die_with_parent():
    """In a child before exec: be killed when the thread that started it ends (Linux)."""
    if _prctl is not None:
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def _interpreter_child():
    """In an interpreter's child before exec: die with the parent thread, and start with
    SIGINT ignored, so that a SIGINT handler means MicroPython's (a Python wrapper such as
    the PyPI unix port's installs none over an ignored SIGINT while it starts)."""
    die_with_parent()
    _signal(int(signal.SIGINT), int(signal.SIG_IGN))
