"""`python -m tinyattn_host info MODEL.bin`: the sensor model's float and int8 files (issue
34's model, tests/fixtures/sensor): layers, parameters (PyTorch's count, from the fixture's
manifest), the bytes of the arrays and the file's size; a bad file is one error line."""

import json
import os

import numpy as np

from tinyattn_host.__main__ import main

SENSOR = os.path.join(os.path.dirname(__file__), "..", "fixtures", "sensor")


def test_info_of_the_sensor_float_and_int8_files(tmp_path, capsys):
    manifest = json.load(open(os.path.join(SENSOR, "manifest.json")))
    shapes = manifest["state_dict"].values()
    parameters = int(sum(np.prod(s) for s in shapes))
    float_file, int8_file = str(tmp_path / "f.bin"), str(tmp_path / "q.bin")
    assert main(["import-torch", os.path.join(SENSOR, "model.npz"),
                 os.path.join(SENSOR, "layers.json"), "-o", int8_file,
                 "--int8", os.path.join(SENSOR, "calib1000.npy")]) == 0
    assert main(["import-torch", os.path.join(SENSOR, "model.npz"),
                 os.path.join(SENSOR, "layers.json"), "-o", float_file]) == 0
    capsys.readouterr()
    assert main(["info", float_file]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "%s: a float model (float32 arrays), 8 layers, %s bytes" % (
        float_file, "{:,}".format(os.path.getsize(float_file)))
    assert out[-1] == "%s parameters, %s bytes of arrays (98%% of the file); input rows of " \
                      "120 numbers" % ("{:,}".format(parameters), "{:,}".format(4 * parameters))
    assert "TransformerEncoderLayer 24 3 96" in out[4] and "7,224 parameters" in out[4]
    assert main(["info", int8_file]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(int8_file + ": an int8 model (int8 weights, int32 biases), 8 layers")
    # weights, positional table and gammas one byte each; biases and betas four
    one_d = sum(int(np.prod(s)) for k, s in manifest["state_dict"].items() if len(s) == 1)
    gammas = 24 * 2 * 3
    int8_bytes = parameters + 3 * (one_d - gammas)
    assert out[-1].startswith("%s parameters, %s bytes of arrays" % (
        "{:,}".format(parameters), "{:,}".format(int8_bytes)))


def test_info_of_a_missing_file_is_one_error_line(tmp_path, capsys):
    assert main(["info", str(tmp_path / "none.bin")]) == 1
    assert capsys.readouterr().err == "error: %s: no such file\n" % (tmp_path / "none.bin")
