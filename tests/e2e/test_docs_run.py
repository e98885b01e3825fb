"""The Python blocks of README.md and docs/*.md: each says what it is in a marker line before
it, and the marking is checked. `runs`: executed as written on the virtual board (a REPL
transcript as its `>>>` lines); `fragment`: a piece that needs names or files the page makes
around it, so run alone it must fail (else it is marked `runs`); `pytorch`: host Python with
PyTorch (it says torch or state_dict()); `host`: host Python (NumPy, the host's reference); `slow`: a call of
minutes (the demo, the bench, a training) that tests run with smaller arguments."""

import re
import shlex

import pytest

from tinyattn_host.board.board import Board
from tinyattn_host.locations import CHECKOUT
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl

PAGES = [CHECKOUT / "README.md"] + sorted((CHECKOUT / "docs").glob("*.md"))
MARKS = ("runs", "fragment", "pytorch", "host", "slow")
FENCE = re.compile(r"^(?:<!-- docs-test: (\w+) -->\n)?```python\n(.*?)^```", re.S | re.M)
needs_virtual_board = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()), reason="the virtual board needs a raw REPL")


def blocks():
    """(page:line, mark or None, code) of every Python block."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for m in FENCE.finditer(text):
            line = text[:m.start()].count("\n") + 1
            found.append(("%s:%d" % (page.relative_to(CHECKOUT), line), m.group(1), m.group(2)))
    return found


def as_script(code):
    """A REPL transcript's input lines (its outputs dropped); other code as it is."""
    lines = code.splitlines()
    if not any(line.startswith(">>> ") for line in lines):
        return code
    return "\n".join(line[4:] for line in lines if line.startswith((">>> ", "... ")))


def by_mark(mark):
    return [pytest.param(code, id=where) for where, got, code in blocks() if got == mark]


def test_every_python_block_is_marked():
    unmarked = [where for where, mark, _ in blocks() if mark not in MARKS]
    assert not unmarked, "a Python block without <!-- docs-test: %s -->: %s" % (
        "|".join(MARKS), unmarked)
    assert len(by_mark("runs")) >= 4


@pytest.mark.parametrize("code", by_mark("pytorch"))
def test_a_pytorch_block_uses_torch(code):
    assert "torch" in code or "state_dict()" in code


@pytest.fixture(scope="module")
def board(tmp_path_factory):
    if not has_raw_repl(unixport.interpreter()):
        pytest.skip("the virtual board needs a raw REPL")
    with Board(port=None, flash_dir=tmp_path_factory.mktemp("flash"), heap="8m",
               out=lambda *a: None) as opened:
        yield opened


def run(board, code):
    """(output, error text) of code run in the board's raw REPL after a soft reset: fresh
    names, one block does not see another's."""
    board.transport.enter_raw_repl(soft_reset=True)
    out, err = board.transport.exec_raw(as_script(code) + "\n", timeout=300)
    return out.decode(errors="replace"), err.decode(errors="replace")


@needs_virtual_board
@pytest.mark.parametrize("code", by_mark("runs"))
def test_a_runs_block_runs_on_the_virtual_board(board, code):
    _, err = run(board, code)
    assert not err, err


@needs_virtual_board
@pytest.mark.parametrize("code", by_mark("fragment"))
def test_a_fragment_does_not_run_alone(board, code):
    _, err = run(board, code)
    assert re.search(r"(NameError|OSError|ImportError|AttributeError|TypeError)", err), err


def shell_lines():
    """(page, line) of every command line in the sh blocks of the pages (comments dropped)."""
    found = []
    for page in PAGES:
        for m in re.finditer(r"^```(?:sh|bash|shell)\n(.*?)^```", page.read_text(), re.S | re.M):
            for line in m.group(1).splitlines():
                line = line.split(" #")[0].strip()
                if line and not line.startswith("#"):
                    found.append((page.relative_to(CHECKOUT).as_posix(), line))
    return found


def test_every_shell_block_names_commands_that_exist():
    """make targets of the Makefile, tinyattn_host commands of its table, test files that
    are there, the venv's programs that pip installs."""
    from tinyattn_host.__main__ import COMMANDS

    makefile = (CHECKOUT / "Makefile").read_text()
    targets = set(re.findall(r"^([\w-]+):", makefile, re.M))
    wrong = []
    for page, line in shell_lines():
        for part in re.split(r"&&|;|\|", line):
            words = [w for w in _words(part) if not re.match(r"^[A-Z_]+=", w)]
            if words[:1] == ["make"]:
                wrong += [(page, line) for w in words[1:] if not w.startswith("-")
                          and w not in targets]
            for sub in re.findall(r"(?:-m tinyattn_host|bin/tinyattn)\s+([a-z][\w-]*)", part):
                if sub not in COMMANDS:
                    wrong.append((page, line))
            for path in re.findall(r"\b(tests/[\w/]+\.py)", part):
                if not (CHECKOUT / path).exists():
                    wrong.append((page, line))
            for program in re.findall(r"\.venv/bin/([\w-]+)", part):
                if program not in ("python", "pip", "mpremote", "micropython", "esptool"):
                    wrong.append((page, line))
    assert not wrong, wrong


def _words(part):
    """A shell line's words as the shell splits them (PROMPT="One day" one word); a part the
    split at && ; | leaves unbalanced falls back to white space."""
    try:
        return shlex.split(part)
    except ValueError:
        return part.split()
