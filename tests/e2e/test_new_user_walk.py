"""A new user's path (issue 38): README's PyTorch walk and its int8 lines pasted into a shell,
line by line, against a virtual board; each step exit 0 and no traceback."""

from pathlib import Path

import numpy as np
import pytest

from test_user_model_e2e import FIXTURES, ROWS, psram_board  # noqa: F401 (a fixture)

WALK = "**A model from PyTorch.**"


def users_folder(tmp_path):
    """A folder holding what a user brings from PyTorch (the base fixture's model, ROWS rows
    of its inputs and outputs, X.npy float32 and y.npy uint8 labels) and `.venv`: this
    interpreter's environment, as README's `.venv/bin/...` lines expect it."""
    import sys

    work = tmp_path / "user"
    work.mkdir()
    if not (Path(sys.prefix) / "bin" / "mpremote").exists():
        pytest.skip("%s has no bin/mpremote: README's lines need a .venv made by make venv"
                    % sys.prefix)
    (work / ".venv").symlink_to(sys.prefix)
    (work / "model.npz").write_bytes((FIXTURES / "base" / "model.npz").read_bytes())
    X = np.load(FIXTURES / "inputs.npy")[:ROWS].astype(np.float32)
    out = np.load(FIXTURES / "base" / "out.npy")[:ROWS]
    np.save(work / "inputs.npy", X)
    np.save(work / "out.npy", out)
    np.save(work / "X.npy", X)
    np.save(work / "y.npy", out.argmax(axis=1).astype(np.uint8))
    return work


def paste(line, work, port):
    """One line run by bash in `work`, /dev/ttyACM0 being the virtual board: exit 0 and no
    traceback; its stdout and stderr."""
    import subprocess

    done = subprocess.run(["bash", "-c", line.replace("/dev/ttyACM0", port)], cwd=work,
                          capture_output=True, text=True, timeout=900)
    seen = done.stdout + done.stderr
    assert done.returncode == 0 and "Traceback" not in seen, "$ %s\n%s" % (line, seen)
    return done.stdout, done.stderr


def test_a_new_user_pastes_readmes_pytorch_walk(psram_board, tmp_path):
    """README's walk as written (issue 38): --describe, import-torch with the draft as it
    comes (the base model is PyTorch's defaults with 8 features a head), check-model against
    torch's outputs, the files copied, evaluate and fine-tune at the board's prompt, the tuned
    file back and export-torch: each step exit 0 and no traceback; the tuned weights come
    back in torch's keys and shapes, changed by the training."""
    import json
    import shlex

    from page_lines import quoted_commands, repl_lines, shell_lines
    from tinyattn_host.interop.arrayfiles import read_state_dict

    work = users_folder(tmp_path)
    steps = shell_lines("README.md", WALK)
    assert [s.split()[3] for s in steps[:3]] == ["import-torch", "import-torch", "check-model"]
    _, notes = paste(steps[0], work, psram_board.port)  # --describe > layers.json
    assert "--describe" in steps[0] and "number of heads" in notes
    for step in steps[1:]:
        out, _ = paste(step, work, psram_board.port)
        if "check-model" in step:
            assert "PASS" in out and "against the expected outputs" in out, out
    code = "\n".join("print(repr(%s))" % line if line.startswith("tinyattn.evaluate(") else line
                     for line in repl_lines("README.md", "Then on the board"))
    out, _ = paste(".venv/bin/mpremote connect /dev/ttyACM0 exec %s" % shlex.quote(code), work,
                   psram_board.port)
    assert out.strip(), "evaluate printed nothing"
    back = quoted_commands("README.md", "Then on the board", "**Sequence data.**")
    assert [c.split()[3] for c in back] == ["cp", "export-torch"]  # tuned.bin back, exported
    for step in back:
        paste(step, work, psram_board.port)
    tuned = read_state_dict(work / "tuned.npz")
    torch_keys = json.loads((FIXTURES / "manifest.json").read_text())["variants"]["base"][
        "state_dict"]
    assert {k: list(v.shape) for k, v in tuned.items()} == torch_keys
    assert not np.array_equal(tuned["head.weight"],
                              read_state_dict(work / "model.npz")["head.weight"])


def test_a_new_user_pastes_readmes_int8_lines(psram_board, tmp_path):
    """README's int8-from-the-PC lines (quantize, check-model of the int8 file, the copy),
    after the import, each exit 0 and no traceback."""
    from page_lines import ROOT, shell_lines
    from tinyattn_host.__main__ import COMMANDS

    int8 = "**int8 from the PC**"
    assert "quantize" in COMMANDS and int8 in (ROOT / "README.md").read_text()
    work = users_folder(tmp_path)
    np.save(work / "calib.npy", np.load(work / "X.npy"))
    import_lines = [s for s in shell_lines("README.md", WALK) if "import-torch" in s]
    for step in import_lines + shell_lines("README.md", int8):
        out, _ = paste(step, work, psram_board.port)
        if "check-model" in step:
            assert "PASS" in out, out
