"""The int8 file made on the PC (tinyattn_host.quantize, `python -m tinyattn_host quantize`) is
the file the board's own `tinyattn.int8.quantize(model, rows).save(path)` writes, byte for byte
(tests/board/case_quantize_bytes.py), for Iris, PyTorch's encoder models (tests/fixtures:
issue 34's sensor model, a pre-norm GELU one) and a model with a padding mask, calibrated in
batches; and the sensor model's int8 file runs on the board bit for bit with the integer
reference.

A board's floats are float32: the host makes its file in float32 arithmetic. The case runs
where the unix port has a real ulab (MICROPYTHON=/work/mpbuild/bin/micropython-i686 ...): the
stand-in's port computes in doubles."""

from pathlib import Path

import numpy as np

from board_cases import board_test
from tinyattn_host import modelfile
from tinyattn_host.device_modules import device_module
from tinyattn_host.checks.run_check import IRIS_CONFIG, random_model
from tinyattn_host.interop.statedict import import_npz, param_shapes
from tinyattn_host.quantize import in_scale, model_bytes, quantize, quantize_tensor
from tinyattn_host.quantize.files import mask_of, read_float_model
from tinyattn_host.reference.sequential import int8_forward, int8_layers

FIXTURES = Path(__file__).parent.parent / "fixtures"
SENSOR_ROWS = 256  # of calib1000.npy: the board parses them from text


def _file_bytes(config, params):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.bin"
        modelfile.write_model(path, modelfile.SEQUENTIAL, {"config": config}, params)
        return path.read_bytes()


def model_case(name, config, params, x, batch_size, lengths=None):
    """{name: fixture, name.bin: the float file, name-int8.bin: the host's int8 file}."""
    params = {k: np.asarray(v, np.float32) for k, v in params.items()}
    x = np.asarray(x, np.float32)
    rows = device_module("nn/flow").follow(config)[1]  # input rows a sample
    mask = None if lengths is None else mask_of(lengths, len(x) // rows, config, "lengths")
    specs, arrays = quantize(config, {k: v.astype(np.float64) for k, v in params.items()},
                             x.astype(np.float64), mask, rows, batch_size)
    fixture = {"x": x, "batch_size": batch_size}
    if mask is not None:
        fixture["mask"] = mask
    return {name: fixture, name + ".bin": _file_bytes(config, params),
            name + "-int8.bin": model_bytes(specs, arrays)}


def torch_model(folder, npz, layers):
    """(config, params) of a PyTorch fixture, as import-torch writes its file."""
    import json
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.bin"
        import_npz(folder / npz, json.loads((folder / layers).read_text()), path)
        return read_float_model(path)


def masked_model():
    """Tokens of 3 features, S = 6, an encoder layer, the mean of the kept tokens."""
    config = [["Tokens", 6], ["Dense", 3, 16, True], ["PositionalEmbedding", 6, 16],
              ["TransformerEncoderLayer", 16, 4, 32, 0.0, "relu", False, 1e-5, 6, False],
              ["GlobalAvgPool", 6], ["Dense", 16, 5, True]]
    rng = np.random.default_rng(34)
    params = {}
    for i, spec in enumerate(config):
        for name, shape in param_shapes(spec).items():
            value = rng.standard_normal(shape) * (0.3 if len(shape) == 2 else 0.1)
            params["%d.%s" % (i, name)] = value + (1.0 if name.endswith("gamma") else 0.0)
    x = rng.standard_normal((40, 18))
    lengths = rng.integers(1, 7, size=40)
    x.reshape(40, 6, 3)[np.arange(6)[None, :] >= lengths[:, None]] = 0.0
    return config, params, x, lengths


def sensor_run():
    """The sensor model's int8 file (the host's), 8 input rows, their int8 form and the
    reference's int32 logits."""
    config, params = torch_model(FIXTURES / "sensor", "model.npz", "layers.json")
    calibration = np.load(FIXTURES / "sensor" / "calib1000.npy").astype(np.float64)
    specs, arrays = quantize(config, params, calibration, batch_size=16)
    x = np.load(FIXTURES / "sensor" / "inputs.npy")[:8]
    xq = quantize_tensor(x, in_scale(specs))
    y = int8_forward(xq.astype(np.int64), int8_layers(specs, arrays))[-1]
    return {"sensor": {"x": x, "xq": xq.ravel().tolist(), "y": y.ravel().tolist()},
            "sensor-int8.bin": model_bytes(specs, arrays)}


def fixtures():
    out = {}
    iris_x = np.random.default_rng(1).standard_normal((48, 4))
    out.update(model_case("model_iris", IRIS_CONFIG, random_model(3), iris_x, 16))
    sensor = torch_model(FIXTURES / "sensor", "model.npz", "layers.json")
    calibration = np.load(FIXTURES / "sensor" / "calib1000.npy")[:SENSOR_ROWS]
    out.update(model_case("model_sensor", *sensor, calibration, 16))
    gelu = torch_model(FIXTURES / "torch" / "gelu", "model.npz", "layers.json")
    out.update(model_case("model_torch_gelu", *gelu, np.load(FIXTURES / "torch" / "inputs.npy"), 7))
    config, params, x, lengths = masked_model()
    out.update(model_case("model_masked", config, params, x, 16, lengths))
    out.update(sensor_run())
    return out


test_quantize_bytes_on_board = board_test(
    "case_quantize_bytes", fixtures, heap="16m",
    needs_ulab="the board's floats are float32: the stand-in's port computes in doubles")
