"""`python -m tinyattn_host quantize`: issue 34's sensor model (tests/fixtures/sensor, made by
PyTorch) imported and quantized on the PC, its int8 file's size and outputs against torch's;
the same file whatever the batch size; a padding mask; every bad file or command line one
`error:` line with its exit status, and no output written."""

import os

import numpy as np
import pytest

from tinyattn_host import modelfile
from tinyattn_host.__main__ import main
from tinyattn_host.checks.run_check import IRIS_CONFIG, random_model
from tinyattn_host.interop.statedict import param_shapes
from tinyattn_host.quantize import in_scale, out_scale, quantize_tensor
from tinyattn_host.quantize.files import quantize_file
from tinyattn_host.reference.kinds import full_entry
from tinyattn_host.reference.sequential import int8_forward, int8_layers, sequential_forward

SENSOR = os.path.join(os.path.dirname(__file__), "..", "fixtures", "sensor")


def sensor(name):
    return os.path.join(SENSOR, name)


@pytest.fixture(scope="module")
def sensor_files(tmp_path_factory):
    """(float file, int8 file) of the sensor model: import-torch, then quantize on 1,000 rows."""
    tmp = tmp_path_factory.mktemp("sensor")
    float_file, int8_file = str(tmp / "sensor.bin"), str(tmp / "sensor-int8.bin")
    assert main(["import-torch", sensor("model.npz"), sensor("layers.json"),
                 "-o", float_file]) == 0
    assert main(["quantize", float_file, sensor("calib1000.npy"), "-o", int8_file]) == 0
    return float_file, int8_file


def int8_outputs(int8_file, x, mask=None):
    """The int8 reference's float outputs of an int8 model file for float rows x."""
    _, meta, arrays = modelfile.read_model(int8_file)
    specs = meta["layers"]
    xq = quantize_tensor(x, in_scale(specs)).astype(np.int64)
    y = int8_forward(xq, int8_layers(specs, arrays), mask)[-1]
    return y * out_scale(specs[-1])


def test_the_sensor_int8_file_is_at_most_35_percent_of_the_float_file(sensor_files, capsys):
    float_file, int8_file = sensor_files
    ratio = os.path.getsize(int8_file) / os.path.getsize(float_file)
    assert ratio <= 0.35, "%.1f%%" % (100 * ratio)
    kind, meta, _ = modelfile.read_model(int8_file)
    assert kind == modelfile.QUANTIZED
    assert [s["kind"] for s in meta["layers"]] == [
        "Tokens", "Dense", "PositionalEmbedding"] + ["TransformerEncoderLayer"] * 3 + [
        "GlobalAvgPool", "Dense"]


def test_the_sensor_int8_model_gives_torchs_outputs_at_int8_precision(sensor_files):
    x = np.load(sensor("inputs.npy")).astype(np.float64)
    want = np.load(sensor("out.npy")).astype(np.float64)
    got = int8_outputs(sensor_files[1], x)
    error = np.abs(got - want).max() / np.abs(want).max()
    assert error < 0.05, error  # int8 through three encoder layers: a few percent
    assert (got.argmax(1) == want.argmax(1)).mean() >= 0.9


def test_the_file_is_the_same_whatever_the_batch_size(sensor_files, tmp_path):
    float_file, int8_file = sensor_files
    for batch in (1, 7, 1000):
        out = str(tmp_path / ("b%d.bin" % batch))
        assert main(["quantize", float_file, sensor("calib1000.npy"), "-o", out,
                     "--batch-size", str(batch)]) == 0
        assert open(out, "rb").read() == open(int8_file, "rb").read(), batch


def test_a_file_that_leaves_out_default_arguments_gives_the_same_int8_file(sensor_files,
                                                                           tmp_path):
    """A config entry may leave out trailing arguments that have defaults, as a constructor
    call may (the board loads such a file): the host's reference fills them in."""
    _, meta, arrays = modelfile.read_model(sensor_files[0])
    short = [e[:9] if e[0] == "TransformerEncoderLayer" else e for e in meta["config"]]
    assert short != meta["config"]
    assert [full_entry(e) for e in short] == [full_entry(e) for e in meta["config"]]
    modelfile.write_model(tmp_path / "short.bin", modelfile.SEQUENTIAL,
                          dict(meta, config=short), arrays)
    out = str(tmp_path / "short-int8.bin")
    assert main(["quantize", str(tmp_path / "short.bin"), sensor("calib1000.npy"),
                 "-o", out]) == 0
    assert open(out, "rb").read() == open(sensor_files[1], "rb").read()


def test_progress_is_reported_a_batch_at_a_time(sensor_files, tmp_path):
    seen = []
    quantize_file(sensor_files[0], sensor("calib1000.npy"), str(tmp_path / "q.bin"),
                  batch_size=100, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(done, 1000) for done in range(100, 1001, 100)]


def masked_model(tmp_path):
    """A float file of a model that takes a padding mask: tokens of 3 features, S = 5."""
    config = [["Tokens", 5], ["Dense", 3, 8, True],
              ["TransformerEncoderLayer", 8, 2, 16, 0.0, "relu", False, 1e-5, 5, False],
              ["GlobalAvgPool", 5], ["Dense", 8, 2, True]]
    rng = np.random.default_rng(7)
    params = {}
    for i, spec in enumerate(config):
        for name, shape in param_shapes(spec).items():
            value = rng.standard_normal(shape) * 0.4 + (1.0 if name.endswith("gamma") else 0.0)
            params["%d.%s" % (i, name)] = value.astype(np.float32)
    path = str(tmp_path / "masked.bin")
    modelfile.write_model(path, modelfile.SEQUENTIAL, {"config": config}, params)
    x = rng.standard_normal((12, 15)).astype(np.float32)
    lengths = rng.integers(1, 6, size=12)
    x.reshape(12, 5, 3)[np.arange(5)[None, :] >= lengths[:, None]] = 2.5  # padding
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "lengths.npy", lengths)
    return path, x, lengths


def test_a_mask_keeps_the_padding_out_of_the_scales(tmp_path):
    path, x, lengths = masked_model(tmp_path)
    masked, unmasked = str(tmp_path / "m.bin"), str(tmp_path / "u.bin")
    assert main(["quantize", path, str(tmp_path / "x.npy"), "-o", masked,
                 "--mask", str(tmp_path / "lengths.npy")]) == 0
    assert main(["quantize", path, str(tmp_path / "x.npy"), "-o", unmasked]) == 0
    _, meta, _ = modelfile.read_model(masked)
    _, meta_u, _ = modelfile.read_model(unmasked)
    mask = (np.arange(5)[None, :] < lengths[:, None]).astype(np.float64)
    _, meta_f, arrays = modelfile.read_model(path)
    config, params = meta_f["config"], {k: v.astype(np.float64) for k, v in arrays.items()}
    # the input scale is every row's, padding too (the board's calibration takes max |x| over
    # all rows); the pool's output scale is max |mean over the kept tokens|, a step up (32
    # steps an octave), / 127
    assert meta["layers"][0]["s_x"] == meta_u["layers"][0]["s_x"]
    pooled, _ = sequential_forward(config[:4], params, x.astype(np.float64), mask)
    top = np.abs(pooled).max()
    step = 2.0 ** np.floor(np.log2(top)) / 32
    assert np.float32(meta["layers"][3]["s_y"]) == np.float32(np.ceil(top / step) * step / 127)
    assert meta["layers"][3]["s_y"] != meta_u["layers"][3]["s_y"]
    want, _ = sequential_forward(config, params, x, mask)
    got = int8_outputs(masked, x.astype(np.float64), mask)
    assert np.abs(got - want).max() / np.abs(want).max() < 0.05


def iris_file(tmp_path):
    path = str(tmp_path / "iris.bin")
    modelfile.write_model(path, modelfile.SEQUENTIAL, {"config": IRIS_CONFIG},
                          {k: np.asarray(v, np.float32) for k, v in random_model(1).items()})
    return path


def bad_rows(tmp_path):
    """{name: (write the calibration file at path, the words its error line holds)}."""
    def npy(value):
        return lambda path: np.save(path, value, allow_pickle=False)

    nan = np.ones((4, 4), np.float32)
    nan[2, 1] = np.nan
    inf = np.ones((4, 4))
    inf[0, 0] = 1e300  # finite in float64, infinity as the float32 a board holds
    return {
        "wrong width": (npy(np.ones((4, 5), np.float32)), "rows of 5 features; the model "
                                                          "takes rows of 4"),
        "NaN": (npy(nan), "holds NaN or infinity"),
        "infinity as float32": (npy(inf), "holds NaN or infinity"),
        "empty": (npy(np.zeros((0, 4), np.float32)), "holds no rows"),
        "1-D": (npy(np.ones(4, np.float32)), "an array of 1 dimensions"),
        "3-D": (npy(np.ones((2, 2, 4), np.float32)), "an array of 3 dimensions"),
        "strings": (npy(np.array([["a", "b", "c", "d"]])), "values, not numbers"),
        "text": (lambda path: open(path, "w").write("1,2,3,4\n"), "is not a .npy array"),
        "npz": (lambda path: np.savez(open(path, "wb"), x=np.ones((4, 4))), "is a .npz"),
        "empty file": (lambda path: open(path, "w").close(), "is empty (0 bytes)"),
        "missing": (lambda path: None, "No such file or directory"),
    }


@pytest.mark.parametrize("case", list(bad_rows(None)))
def test_a_bad_calibration_file_is_one_error_line(case, tmp_path, capsys):
    write, words = bad_rows(tmp_path)[case]
    rows, out = str(tmp_path / "calib.npy"), tmp_path / "out.bin"
    write(rows)
    out.write_bytes(b"the old file")
    assert main(["quantize", iris_file(tmp_path), rows, "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and words in err, err
    assert out.read_bytes() == b"the old file"  # nothing written, nothing half-written
    assert not os.path.exists(str(out) + ".tmp")


@pytest.mark.parametrize("lengths, words", [
    (np.array([1, 2, 3]), "one integer length a sample (12)"),
    (np.full(12, 6), "each must be 1 to 5"),
    (np.zeros(12, np.int64), "each must be 1 to 5"),
    (np.full(12, 2.0), "one integer length a sample"),
])
def test_bad_lengths_are_one_error_line(lengths, words, tmp_path, capsys):
    path, _, _ = masked_model(tmp_path)
    np.save(tmp_path / "bad.npy", lengths)
    assert main(["quantize", path, str(tmp_path / "x.npy"), "-o", str(tmp_path / "q.bin"),
                 "--mask", str(tmp_path / "bad.npy")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and words in err, err


def test_a_mask_for_a_model_without_one_is_refused(tmp_path, capsys):
    path = str(tmp_path / "dense.bin")
    modelfile.write_model(path, modelfile.SEQUENTIAL, {"config": [["Dense", 4, 3, True]]},
                          {"0.W": np.ones((3, 4), np.float32), "0.b": np.zeros(3, np.float32)})
    np.save(tmp_path / "x.npy", np.ones((4, 4), np.float32))
    np.save(tmp_path / "lengths.npy", np.ones(4, np.int64))
    assert main(["quantize", path, str(tmp_path / "x.npy"), "-o",
                 str(tmp_path / "q.bin"), "--mask", str(tmp_path / "lengths.npy")]) == 1
    assert "no layer that takes a padding mask" in capsys.readouterr().err


def test_an_int8_file_is_not_quantized_again(sensor_files, tmp_path, capsys):
    assert main(["quantize", sensor_files[1], sensor("calib1000.npy"), "-o",
                 str(tmp_path / "q.bin")]) == 1
    assert "holds a 'quantized' model; quantize takes a float model file" in \
        capsys.readouterr().err


@pytest.mark.parametrize("args, words", [
    (["-o", "{tmp}/nofolder/q.bin"], "no such folder"),
    (["-o", "{tmp}"], "is a folder"),
    (["-o", "{tmp}/q.bin", "--batch-size", "0"], "--batch-size must be at least 1"),
    (["-o", "{tmp}/q.bin", "--batch-size", "x"], "invalid int value"),
    ([], "the following arguments are required: -o/--out"),
])
def test_a_bad_command_line_is_exit_2_before_any_file_is_read(args, words, tmp_path, capsys):
    # the model and rows do not exist: the command line is refused before they are read
    status = main(["quantize", str(tmp_path / "none.bin"), str(tmp_path / "none.npy")]
                  + [a.format(tmp=tmp_path) for a in args])
    err = capsys.readouterr().err
    assert status == 2 and err.startswith("error: ") and err.count("\n") == 1, err
    assert words in err, err


def test_an_unwritable_output_is_refused_before_any_work(tmp_path, capsys):
    folder = tmp_path / "locked"
    folder.mkdir()
    folder.chmod(0o500)
    try:
        if os.access(folder, os.W_OK):
            pytest.skip("running as a user who writes anywhere (root)")
        status = main(["quantize", str(tmp_path / "none.bin"), str(tmp_path / "none.npy"),
                       "-o", str(folder / "q.bin")])
    finally:
        folder.chmod(0o700)
    assert status == 2 and "cannot write there" in capsys.readouterr().err


def test_import_torch_int8_writes_quantizes_file_at_once(sensor_files, tmp_path, capsys):
    out = str(tmp_path / "direct.bin")
    assert main(["import-torch", sensor("model.npz"), sensor("layers.json"), "-o", out,
                 "--int8", sensor("calib1000.npy"), "--batch-size", "50"]) == 0
    assert open(out, "rb").read() == open(sensor_files[1], "rb").read()
    assert main(["import-torch", sensor("model.npz"), sensor("layers.json"), "-o", out,
                 "--int8", sensor("out.npy")]) == 1
    assert "has rows of 4 features; the model takes rows of 120" in capsys.readouterr().err
    assert main(["import-torch", sensor("model.npz"), sensor("layers.json"), "-o", out,
                 "--batch-size", "4"]) == 2
    assert "--batch-size and --mask are --int8's" in capsys.readouterr().err
