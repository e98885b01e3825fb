"""Every command of `python -m tinyattn_host` meets a failure with one line on stderr, no
traceback, and its documented exit status (errors.py: 1 a bad file or a device that refused,
2 a bad command line or a board problem)."""

import subprocess
import sys

import numpy as np
import pytest

from tinyattn_host import modelfile, protocol
from tinyattn_host.__main__ import COMMANDS, main
from tinyattn_host.board import board as board_module
from tinyattn_host.board.deploy import DeployError
from tinyattn_host.checks import model_check
from tinyattn_host.checks.run_check import IRIS_CONFIG, random_model
from tinyattn_host.link_requests import Requests

NO_PORT = "/dev/ttyNONE"
NO_INTERPRETER = {"MICROPYTHON": "/nonexistent/micropython"}

# command: (its arguments, environment, exit status, the start of the line on stderr)
FAILURES = {
    "run": (["--port", NO_PORT], {}, 2, "error: no such port: /dev/ttyNONE"),
    "demo": (["--port", NO_PORT], {}, 2, "error: no such port: /dev/ttyNONE"),
    "deploy": (["--port", NO_PORT], {}, 2, "error: no such port: /dev/ttyNONE"),
    "repl": (["--port", NO_PORT], {}, 2, "error: no such port: /dev/ttyNONE"),
    "flash": (["--firmware", "/nonexistent.bin"], {}, 2, "error: no such firmware file"),
    "bench": (["--quick"], NO_INTERPRETER, 2, "error: MICROPYTHON=/nonexistent/micropython: "
                                              "no such interpreter"),
    "virtual-board": ([], NO_INTERPRETER, 2, "error: MICROPYTHON=/nonexistent/micropython: "),
    "devs": (["--verbose"], {}, 2, "error: python -m tinyattn_host: unrecognized arguments"),
    "chipcost": (["/nonexistent.py"], {}, 1, "error: no such source file: /nonexistent.py"),
    "emulate": ([], {"QEMU_XTENSA": "/nonexistent/qemu"}, 1,
                "error: no /nonexistent/qemu: apt-get install qemu-system-misc"),
    "emulate-pie": ([], {"QEMU_XTENSA_S3": "/nonexistent/qemu"}, 1,
                    "error: QEMU_XTENSA_S3=/nonexistent/qemu is not an executable"),
    "digits": (["extra"], {}, 2, "error: python -m tinyattn_host: unrecognized arguments"),
    "vowels": (["extra"], {}, 2, "error: python -m tinyattn_host: unrecognized arguments"),
    "mip-package": (["extra"], {}, 2, "error: python -m tinyattn_host: unrecognized arguments"),
    "import-torch": (["{tmp}/none.npz", "{tmp}/layers.json", "-o", "{tmp}/m.bin"], {}, 1,
                     "error: {tmp}/none.npz: No such file or directory"),
    "export-torch": (["{tmp}/bad.bin", "-o", "{tmp}/out.npz"], {}, 1,
                     "error: {tmp}/bad.bin is not a tinyattn model file"),
    "quantize": (["{tmp}/bad.bin", "{tmp}/x.npy", "-o", "{tmp}/q.bin"], {}, 1,
                 "error: {tmp}/bad.bin is not a tinyattn model file"),
    "info": (["{tmp}/bad.bin"], {}, 1, "error: {tmp}/bad.bin is not a tinyattn model file"),
    "check-model": (["{tmp}/bad.bin", "{tmp}/x.npy"], {}, 1,
                    "error: {tmp}/bad.bin is not a tinyattn model file"),
    "import-llama2c": (["{tmp}/bad.bin", "-o", "{tmp}/m.bin"], {}, 1,
                       "error: {tmp}/bad.bin is 11 bytes: too short for llama2.c's"),
    "export-llama2c": (["{tmp}/bad.bin", "-o", "{tmp}/out.bin"], {}, 1,
                       "error: {tmp}/bad.bin is not a tinyattn model file"),
    "generate": (["{tmp}/bad.bin", "--tokenizer", "{tmp}/layers.json"], {}, 1,
                 "error: {tmp}/bad.bin is not a tinyattn model file"),
    "finetune": (["{tmp}/bad.bin", "{tmp}/layers.json", "-o", "{tmp}/t.bin", "--tokenizer",
                  "{tmp}/layers.json"], {}, 1, "error: {tmp}/bad.bin is not a tinyattn model file"),
}


def one_line(err):
    assert "Traceback" not in err and err.count("\n") == 1, err
    return err


def test_every_command_has_a_failure_here():
    assert set(FAILURES) == set(COMMANDS)


@pytest.mark.parametrize("command", FAILURES)
def test_a_command_fails_with_one_line(command, tmp_path, monkeypatch):
    args, env, status, start = FAILURES[command]
    (tmp_path / "bad.bin").write_bytes(b"not a model")
    (tmp_path / "layers.json").write_text("[]")
    np.save(tmp_path / "x.npy", np.zeros((2, 4), dtype=np.float32))
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", command,
                           *(a.format(tmp=tmp_path) for a in args)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == status, done.stdout + done.stderr
    assert one_line(done.stderr).startswith(start.format(tmp=tmp_path)), done.stderr
    assert "Traceback" not in done.stdout


def test_a_deploy_that_fails_inside_board_open_is_one_line(monkeypatch, capsys):
    def failing_open(self):
        raise DeployError("the device imported tinyattn 0.0.9 from /lib/tinyattn/__init__.mpy, "
                          "this is 0.1.0")
    monkeypatch.setattr(board_module.Board, "_open", failing_open)
    assert main(["run", "--port", "virtual"]) == 2
    assert one_line(capsys.readouterr().err).startswith(
        "error: the device imported tinyattn 0.0.9")


class RefusingBoard(Requests):
    """A Board whose device refuses every request, as it refuses a model it cannot load (its
    link's typed requests, load_model among them, all go through its request)."""

    progress = None

    def __init__(self, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        pass

    def start_link(self):
        return self

    def hello(self):
        return {"free": 8 << 20}  # HELLO answers; the model is refused

    def request(self, kind, head, arrays=None, timeout=None):
        raise protocol.ErrorReply(7, "config entry 0: Dense wants 2 sizes")


def test_a_device_that_refuses_the_model_is_one_line(monkeypatch, capsys, tmp_path):
    params = {k: v.astype(np.float32) for k, v in random_model(0).items()}
    modelfile.write_model(tmp_path / "m.bin", "sequential", {"config": IRIS_CONFIG}, params)
    np.save(tmp_path / "x.npy", np.zeros((2, 4), dtype=np.float32))
    monkeypatch.setattr(model_check, "Board", RefusingBoard)
    assert main(["check-model", str(tmp_path / "m.bin"), str(tmp_path / "x.npy")]) == 1
    assert one_line(capsys.readouterr().err) == (
        "error: BAD_VALUE: config entry 0: Dense wants 2 sizes\n")


@pytest.mark.parametrize("option, line", [
    (["--rows", "-3"], "error: --rows must be at least 1, got -3"),
    (["--epochs", "0"], "error: --epochs must be at least 1, got 0"),
    (["--dropout", "1.5"], "error: --dropout must be in [0, 1), got 1.5"),
    (["--lr", "0"], "error: --lr must be above 0, got 0"),
])
def test_vowels_fine_tune_options_are_refused_before_training(option, line):
    """Each refused in one line, exit 2, before the host's training (a --rows of -3 used to end
    in a ZeroDivisionError on the device after it)."""
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", "vowels",
                           "--finetune-on-device", *option],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stdout + done.stderr
    assert one_line(done.stderr).strip() == line, done.stderr
    assert done.stdout == "", done.stdout  # no training started
