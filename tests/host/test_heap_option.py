"""A virtual board's heap (--heap, make's HEAP=, $VIRTUAL_HEAP) with the ulab stand-in is
refused before anything runs, in one line naming the fix (virtual/heap_option.py)."""

import os
import subprocess
import sys
from argparse import Namespace

import pytest

from tinyattn_host.errors import UsageError
from tinyattn_host.virtual import heap_option, unixport

STANDIN = {k: v for k, v in os.environ.items() if k not in ("MICROPYTHON", "VIRTUAL_HEAP")}


def command(args, env=()):
    return subprocess.run([sys.executable, "-m", "tinyattn_host", *args], text=True,
                          capture_output=True, timeout=60, env=dict(STANDIN, **dict(env)))


@pytest.mark.parametrize("args, env, named", [
    (["run", "--heap", "300k"], {}, "--heap 300k"),
    (["run", "--heap", "300k", "--port", "virtual"], {}, "--heap 300k"),
    (["check-model", "m.bin", "x.npy", "--heap", "5m"], {}, "--heap 5m"),
    (["virtual-board", "--heap", "2m"], {}, "--heap 2m"),
    (["run"], {"VIRTUAL_HEAP": "300k"}, "VIRTUAL_HEAP=300k"),
])
def test_a_heap_with_the_standin_is_one_line_before_anything_runs(args, env, named):
    if unixport.has_ulab(unixport.interpreter()):
        pytest.skip("the interpreter of .venv has a real ulab")
    done = command(args, env)
    assert done.returncode == 2
    assert done.stdout == ""  # no banner: no virtual board was started, nothing was read
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error: %s: " % named)
    assert "MICROPYTHON=" in done.stderr and "Traceback" not in done.stderr


def test_a_real_ulab_or_a_board_keeps_its_heap(monkeypatch):
    monkeypatch.delenv("VIRTUAL_HEAP", raising=False)
    args = Namespace(command="run", port=None, heap="300k")
    monkeypatch.setattr(unixport, "has_ulab", lambda command=None: True)
    heap_option.refuse_heap_on_standin(args)  # a real ulab: the heap stands
    monkeypatch.setattr(unixport, "has_ulab", lambda command=None: False)
    with pytest.raises(UsageError, match="needs a real ulab"):
        heap_option.refuse_heap_on_standin(args)
    heap_option.refuse_heap_on_standin(Namespace(command="run", port="/dev/ttyACM0",
                                                 heap="300k"))  # a board: run's own check
    heap_option.refuse_heap_on_standin(Namespace(command="bench", port=None, heap="256k"))
