"""The package's names at the REPL: dir(), help() and Tab completion in a 128 KB heap list the
public names and import only the submodules those come from; a name that is neither a
public name nor a submodule is an AttributeError that imports nothing. The package runs as
`make deploy` ships it (.mpy for the interpreter, as on a board)."""

import os
import select
import subprocess
import time
import tty

import pytest

from device_runner import run_device
from tinyattn_host import unixport
from tinyattn_host.bench import compiled_package

HEAP = "128k"


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """The package compiled as `make deploy` ships it, in a folder for MICROPYPATH."""
    folder = tmp_path_factory.mktemp("deployed")
    compiled_package(unixport.interpreter(), folder)
    return folder


def lazy_modules(deployed):
    """LAZY, and the modules that importing all its submodules adds (a fresh interpreter)."""
    out = run_device("""
import sys, tinyattn
before = set(sys.modules)
for module in tinyattn.LAZY.values():
    __import__('tinyattn.' + module)
OUT['lazy'] = tinyattn.LAZY
OUT['added'] = sorted(set(sys.modules) - before)
""", heap=HEAP, device_dir=deployed)
    return out["lazy"], set(out["added"])


def test_every_lazy_name_is_its_submodules_own(deployed):
    out = run_device("""
import sys, tinyattn
OUT['same'] = [getattr(tinyattn, name) is getattr(sys.modules['tinyattn.' + module], name)
               for name, module in tinyattn.LAZY.items()]
""", heap=HEAP, device_dir=deployed)
    assert out["same"] and all(out["same"])


def test_dir_and_help_list_the_public_names_and_import_only_their_modules(deployed):
    lazy, wanted = lazy_modules(deployed)
    out = run_device("""
import sys, tinyattn
before = set(sys.modules)
OUT['names'] = sorted(dir(tinyattn))
help(tinyattn)
OUT['added'] = sorted(set(sys.modules) - before)
""", heap=HEAP, device_dir=deployed)
    assert set(lazy) | {"Attention", "padding_mask", "__version__"} <= set(out["names"])
    assert set(out["added"]) == wanted and "tinyattn.link" not in wanted


def test_other_names_import_nothing_and_submodules_import():
    out = run_device("""
import sys, tinyattn
before = set(sys.modules)
OUT['has'] = [hasattr(tinyattn, name) for name in ('', '/', '.', 'nothing', '__pycache__')]
OUT['added'] = sorted(set(sys.modules) - before)
from tinyattn import kernels
import tinyattn.bench
OUT['kernels'] = kernels.__name__
OUT['bench'] = tinyattn.bench.__name__
OUT['after'] = sorted(set(sys.modules) - before)
""", heap="1m")
    assert out["has"] == [False] * 5 and out["added"] == []
    assert out["kernels"] == "tinyattn.kernels" and out["bench"] == "tinyattn.bench"
    assert "tinyattn.link" not in out["after"]


def test_tab_completion_at_the_repl(deployed):
    """`tinyattn.<Tab>` in the REPL of a 128 KB heap lists the public names, imports no others."""
    _, wanted = lazy_modules(deployed)
    master, slave = os.openpty()
    tty.setraw(slave)
    env = dict(os.environ, MICROPYPATH=unixport.search_path(device_dir=deployed))
    proc = subprocess.Popen([unixport.interpreter(), "-X", "heapsize=" + HEAP], stdin=slave,
                            stdout=slave, stderr=slave, env=env)
    os.close(slave)
    seen = b""

    def send_and_read(data, ending=b">>> "):
        nonlocal seen
        os.write(master, data)
        seen = b""
        deadline = time.monotonic() + 30
        while not seen.endswith(ending) and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                seen += os.read(master, 65536)
        return seen.decode(errors="replace")

    try:
        send_and_read(b"")
        send_and_read(b"import sys, tinyattn; before = set(sys.modules)\r")
        listed = send_and_read(b"tinyattn.\t", ending=b">>> tinyattn.")
        assert "MemoryError" not in listed
        for name in ("Attention", "Dense", "SelfAttention", "demo", "train", "load_iris"):
            assert name in listed.split(), listed
        send_and_read(b"\x03")  # drop the half-typed line
        added = send_and_read(b"print(sorted(set(sys.modules) - before))\r")
        assert eval(added.splitlines()[1]) == sorted(wanted)  # a list of module names
    finally:
        proc.kill()
        proc.wait()
        os.close(master)

