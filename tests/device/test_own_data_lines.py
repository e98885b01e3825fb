"""README's and docs/your-model.md's "your data on the board" lines run as written, on the
interpreter under test (the ulab stand-in by default), in a folder holding the files those
pages copy to the board: X.npy (float32), y.npy (uint8), data.csv and model.bin."""

import re
import subprocess

import numpy as np
import pytest

from page_lines import repl_lines
from tinyattn_host.virtual import unixport

ROWS, FEATURES, CLASSES = 40, 6, 3

MAKE_MODEL = """
import tinyattn
from tinyattn import Sequential, Dense, Activation
tinyattn.save(Sequential([Dense(%d, 8), Activation("relu"), Dense(8, %d)]), "model.bin")
""" % (FEATURES, CLASSES)


def run_here(folder, code):
    script = folder / "lines.py"
    script.write_text(code)
    done = subprocess.run([unixport.interpreter(), str(script)], cwd=folder, text=True,
                          capture_output=True, timeout=300,
                          env={"MICROPYPATH": unixport.search_path()})
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


@pytest.fixture
def board_files(tmp_path):
    rng = np.random.default_rng(3)
    X = rng.standard_normal((ROWS, FEATURES)).astype(np.float32)
    y = rng.integers(0, CLASSES, ROWS).astype(np.uint8)
    np.save(tmp_path / "X.npy", X)
    np.save(tmp_path / "y.npy", y)
    np.savetxt(tmp_path / "data.csv", np.column_stack([X, y]), delimiter=",", fmt="%.7g")
    run_here(tmp_path, MAKE_MODEL)
    return tmp_path


@pytest.mark.parametrize("page, after", [("README.md", "Then on the board"),
                                         ("docs/your-model.md", "## 4. Run and fine-tune")])
def test_the_pages_lines_run(board_files, page, after):
    lines = repl_lines(page, after)
    assert any("np.load(" in line for line in lines)  # the lines this test is about
    code = "\n".join("print(repr(%s))" % line if not re.match(r"^\w[\w, ]*=|^(from|import) ",
                                                               line) else line
                     for line in lines)
    out = run_here(board_files, code + "\nprint('rows', len(data))\n")
    assert "rows %d" % ROWS in out
    assert (board_files / "tuned.bin").exists()
