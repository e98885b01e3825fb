"""Three failures a new user met, each one line in the house style (issue 38): a missing
model file named as other missing files are, a port that is no serial port said so (not
pyserial's termios tuple), a board-saved model exported without its layers description
pointed at --layers."""

import subprocess
import sys

import numpy as np

from tinyattn_host import modelfile
from tinyattn_host.interop.statedict import import_state_dict

from test_statedict import LAYERS, RNG, SHAPE, model_state


def command(*args):
    done = subprocess.run([sys.executable, "-m", "tinyattn_host", *map(str, args)], text=True,
                          capture_output=True, timeout=120)
    assert done.stderr.count("\n") == 1 and "Traceback" not in done.stderr, done.stderr
    return done.returncode, done.stderr.strip()


def test_a_missing_model_file_is_named(tmp_path):
    np.save(tmp_path / "x.npy", np.zeros((2, 4), np.float32))
    missing = tmp_path / "nothere.bin"
    want = (1, "error: %s: No such file or directory" % missing)
    assert command("export-torch", missing, "-o", tmp_path / "out.npz") == want
    assert command("check-model", missing, tmp_path / "x.npy", "--port", "/dev/null") == want


def test_a_port_that_is_no_serial_port_says_so(tmp_path):
    plain = tmp_path / "plain"
    plain.write_bytes(b"")
    for port in ("/dev/null", plain):
        status, line = command("deploy", "--port", port)
        assert status == 2
        assert line == ("error: %s is not a serial port (it has no terminal settings): give "
                        "the board's, e.g. /dev/ttyACM0 (make devs lists the candidates)" % port)


def test_export_of_a_board_saved_model_names_layers(tmp_path):
    config, params = import_state_dict(model_state(rng=RNG, **SHAPE), LAYERS)
    modelfile.write_model(tmp_path / "device.bin", "sequential", {"config": config}, params)
    status, line = command("export-torch", tmp_path / "device.bin", "-o", tmp_path / "out.npz")
    assert status == 1 and line.endswith("give the one it was imported with, --layers layers.json")
