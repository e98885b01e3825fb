"""How deep the package's first imports nest. Importing a module from source or .mpy costs the
C stack of a whole import on top of the one that asked for it: on the unix port about 4.9 KB
a level (two PATH_MAX path buffers among it), and a 32-bit unix port stops at 40,000 bytes
("maximum recursion depth exceeded"). The board cases import the package two levels down
(runner, case module), so a chain of 8 failed there on i686 (int8.stream -> backend ->
fast_attend -> kernels_attend -> kernels -> fixedpoint -> nn.arguments). Each module imports
its leaves first; this test imports every module first, in a fresh interpreter, and counts
the package modules open at once (the stand-in's own modules not counted)."""

import os
import re
import subprocess

import pytest

from tinyattn_host.board.deploy import sources
from tinyattn_host.virtual import unixport

MAX_DEPTH = 4  # tinyattn's package module itself is 1
ENTER, LEAVE = "@@IMPORT+", "@@IMPORT-"


def module_name(relative):
    parts = list(relative.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@pytest.fixture(scope="module")
def marked_package(tmp_path_factory):
    """A copy of device/tinyattn whose every module prints a line as it starts and ends."""
    root = tmp_path_factory.mktemp("marked")
    names = []
    for relative in sources(unixport.DEVICE_DIR, "x64"):
        name = module_name(relative)
        text = (unixport.DEVICE_DIR / relative).read_text()
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text("print(%r)\n%s\nprint(%r)\n" % (ENTER + name, text, LEAVE + name))
        names.append(name)
    return root, names


def deepest_chain(output):
    """The longest run of package modules open at once, outermost first."""
    open_now, deepest = [], []
    for line in output.splitlines():
        if line.startswith(ENTER):
            open_now.append(line[len(ENTER):])
            if len(open_now) > len(deepest):
                deepest = list(open_now)
        elif line.startswith(LEAVE) and open_now and open_now[-1] == line[len(LEAVE):]:
            open_now.pop()
    return deepest


def test_the_chain_reader_counts_nesting():
    lines = "\n".join([ENTER + "a", ENTER + "a.b", LEAVE + "a.b", ENTER + "a.c", ENTER + "a.d",
                       LEAVE + "a.d", LEAVE + "a.c", LEAVE + "a"])
    assert deepest_chain(lines) == ["a", "a.c", "a.d"]


def test_no_first_import_nests_deeper_than_max_depth(marked_package):
    root, names = marked_package
    env = dict(os.environ, MICROPYPATH=unixport.search_path(device_dir=root))
    chains = {}
    for name in names:
        done = subprocess.run([unixport.interpreter(), "-c", "import " + name],
                              capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 0, (name, done.stdout[-1000:] + done.stderr[-1000:])
        chains[name] = deepest_chain(done.stdout)
    assert len(chains["tinyattn.int8.stream"]) >= 3  # the reader sees nesting
    deep = {n: c for n, c in chains.items() if len(c) > MAX_DEPTH}
    assert not deep, "\n".join("import %s nests %d deep: %s" % (n, len(c), " -> ".join(c))
                               for n, c in sorted(deep.items()))
