"""docs/sequences.md's walk from the .ts file to a board classifying a live stream, run as the
page gives it, so that the page cannot rot: its shell lines in a plain shell at the
repository's root (`.venv/bin/...` as they are, .venv the environment running pytest,
`<port>` a virtual board's pty; the last line, the interactive REPL, aside), its REPL block
through `mpremote run` on that board. The class after every frame must be the reference's
(the causal forward of the frames so far, from the model file the first line wrote), except
where the reference's top two logits are within 1e-3 (a tie that float32 may break the other
way). `pytest -s` prints the median time per frame."""

import re
import shlex
import subprocess
import sys

import numpy as np
import pytest

from tinyattn_host import modelfile
from tinyattn_host.locations import ROOT
from tinyattn_host.reference.sequential import sequential_forward
from tinyattn_host.sequences import padding_mask
from tinyattn_host.virtual import unixport
from tinyattn_host.virtual.unixport_process import has_raw_repl
from tinyattn_host.vowels import DEVICE, load_vowels

HEADING = "### From the `.ts` file to a board classifying a live stream"
TIE = 1e-3
PSRAM_HEAP = "8m"  # an ESP32-S3 with 8 MB of PSRAM

pytestmark = pytest.mark.skipif(
    not has_raw_repl(unixport.interpreter()),
    reason="the interpreter's REPL has no raw mode (unix port before 1.27): no mpremote")


def walk_blocks():
    """(shell lines, REPL code) of the walk's section of docs/sequences.md."""
    text = (ROOT / "docs" / "sequences.md").read_text()
    section = text[text.index(HEADING):]
    section = section[:section.find("\n#", len(HEADING))] if "\n#" in section[1:] else section
    shell = re.search(r"```sh\n(.*?)```", section, re.S).group(1)
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    return [line for line in shell.splitlines() if line.strip()], code


def reference_classes(model_path, row, length):
    """The reference's class after each frame of test row `row`, or None where it is a tie."""
    _, meta, params = modelfile.read_model(model_path)
    params = {k: v.astype(np.float64) for k, v in params.items()}
    X = load_vowels()["test"][0][row:row + 1]
    classes = []
    for t in range(1, length + 1):
        logits = sequential_forward(meta["config"], params, X,
                                    padding_mask(np.array([t]), DEVICE.SEQ_LEN))[0][0]
        top = np.sort(logits)[-2:]
        classes.append(int(np.argmax(logits)) if top[1] - top[0] > TIE else None)
    return classes


def test_the_walk_classifies_every_frame_as_the_reference(start_virtual_board, tmp_path):
    # the page's walk is for a board with PSRAM (it holds the test file's 515 KB of floats):
    # with a real ulab, such a board's heap, not the interpreter's own (1 MB on a 32-bit port)
    virtual_board = start_virtual_board(heap=PSRAM_HEAP if unixport.has_ulab() else None)
    shell, code = walk_blocks()
    assert shell[-1].endswith(" repl"), shell[-1]  # interactive: the REPL block stands for it
    root = tmp_path / "root"  # the repository's root as the shell sees it, its writes apart
    root.mkdir()
    (root / ".venv").symlink_to(sys.prefix)  # the environment running this test
    (root / "data").symlink_to(ROOT / "data")
    for line in shell[:-1]:
        argv = [a.replace("<port>", virtual_board.port) for a in shlex.split(line)]
        done = subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=900)
        assert done.returncode == 0, (line, done.stdout[-2000:], done.stderr[-2000:])
    walk = tmp_path / "walk.py"
    walk.write_text(code)
    done = subprocess.run([str(root / ".venv" / "bin" / "mpremote"), "connect",
                           virtual_board.port, "run", str(walk)],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    frames = re.findall(r"^frame (\d+) speaker (\d) (\d+) us", done.stdout, re.M)
    speaker = int(re.search(r"the speaker was (\d)", done.stdout).group(1))
    _, y, lengths = load_vowels()["test"]
    assert speaker == y[0] and len(frames) == lengths[0], done.stdout
    assert [int(f[0]) for f in frames] == list(range(1, lengths[0] + 1))
    want = reference_classes(root / "vowels_causal.bin", 0, int(lengths[0]))  # --save's file
    got = [int(f[1]) for f in frames]
    assert all(w is None or g == w for g, w in zip(got, want)), (got, want)
    assert sum(w is not None for w in want) >= len(want) // 2  # most frames are compared
    us = sorted(int(f[2]) for f in frames)
    print("\nthe walk on the virtual board (%s, %s ulab): %d frames, median %d us a frame "
          "(fastest %d, slowest %d)" % (virtual_board.interpreter, virtual_board.ulab,
                                        len(us), us[len(us) // 2], us[0], us[-1]))
