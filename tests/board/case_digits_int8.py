"""The digits model trained by the reference, quantized (tests/device/test_digits_int8.py):
the host's int8 model (quantized as the device does, calibrated on the train rows) bit for
bit with the integer reference on every layer of every test row, and within 1 point of the
float model's test accuracy; the device's own quantization (calibrated on the first train
rows) near the host's model of the same rows, and within 1 point of the float accuracy."""

import array
import gc

import check

ROWS_OF_HEAP_CHECK = 16


def load_model(name):
    from tinyattn.int8 import load

    return load(check.path(name))


def read(name):
    with open(check.path(name), "rb") as f:
        return f.read()


def run_host_model():
    """The host's int8 model on the quantized test rows: its trace and the fixture."""
    qm = load_model("int8.bin")
    xq = array.array("b", read("xq.bin"))
    spec = check.fixture("trace")
    trace = []
    qm.forward_int(xq, spec["rows"], spec["cols"], trace=trace)
    return trace, spec


def classes(logits, rows, cols):
    out = []
    for row in range(rows):
        values = list(logits[row * cols:(row + 1) * cols])
        out.append(values.index(max(values)))
    return out


def accuracy(predicted, labels):
    return sum(1 for p, y in zip(predicted, labels) if p == y) / len(labels)


def check_accuracy(int8_accuracy, float_accuracy, what, rows):
    print("digits test accuracy: float %.4f, int8 %.4f (%d rows, %s)"
          % (float_accuracy, int8_accuracy, rows, what))
    assert abs(int8_accuracy - float_accuracy) <= 0.01, \
        "%s: int8 accuracy %g, float %g" % (what, int8_accuracy, float_accuracy)


def test_every_layer_matches_the_reference_on_every_test_row():
    trace, spec = run_host_model()
    check.equal(len(trace), len(spec["layers"]), "layers traced")
    for i, ((buf, r, k), (typecode, want_r, want_k)) in enumerate(zip(trace, spec["layers"])):
        check.equal([r, k], [want_r, want_k], "layer %d rows and columns" % i)
        want = read("layer%d.bin" % i)
        if bytes(buf) != want:  # then say where
            check.equal(buf, array.array(typecode, want), "layer %d" % i)
    check.equal(classes(*trace[-1]), spec["classes"], "classes of the int32 logits")


def test_int8_keeps_the_float_accuracy():
    trace, spec = run_host_model()
    predicted = classes(*trace[-1])
    check_accuracy(accuracy(predicted, spec["y"]), spec["float_accuracy"],
                   "the host's int8 model", len(predicted))


def test_forward_int_returns_the_heap():
    qm = load_model("int8.bin")
    cols = check.fixture("trace")["cols"]
    xq = array.array("b", read("xq.bin")[:ROWS_OF_HEAP_CHECK * cols])
    check.heap_returns(lambda: qm.forward_int(xq, ROWS_OF_HEAP_CHECK, cols), what="forward_int")


def test_quantized_on_the_device_keeps_the_float_accuracy():
    from tinyattn import Sequential, predict
    from tinyattn.datasets.digits import load_digits
    from tinyattn.int8 import quantize

    f = check.fixture("float_model")
    model = Sequential.from_config(f["config"], seed=3)
    for name, param, _ in model.collect_params():
        param[:] = f[name]
    float_accuracy, rows = f["accuracy"], f["calib_rows"]
    f = None
    train, test = load_digits(check.path("digits.csv"), seed=42)
    calib = train.X[:rows, :].copy()
    train = None
    gc.collect()
    qm = quantize(model, calib)
    calib = None
    check.near_model(qm, load_model("int8_calib.bin"), "digits calibrated on %d rows" % rows)
    check_accuracy(accuracy(predict(qm, test.X), test.y), float_accuracy,
                   "quantized on the device", len(test))
