"""Checks the int8 model cases share (digits, vowels): every traced layer bit for bit with the
host's files, classes, accuracies within a point. Apart from check.py, which every case
compiles on the device: these cost heap only where used."""

import check


def int8_classes(logits, rows, cols):
    """The index of the largest of each row of a flat (rows, cols) buffer of logits."""
    out = []
    for row in range(rows):
        values = list(logits[row * cols:(row + 1) * cols])
        out.append(values.index(max(values)))
    return out


def accuracy(predicted, labels):
    """The fraction of predictions equal to their label."""
    return sum(1 for p, y in zip(predicted, labels) if p == y) / len(labels)


def within_a_point(int8_accuracy, float_accuracy, what, rows):
    """Print both accuracies; assert they differ by 1 point at most."""
    print("test accuracy: float %.4f, int8 %.4f (%d rows, %s)"
          % (float_accuracy, int8_accuracy, rows, what))
    assert abs(int8_accuracy - float_accuracy) <= 0.01, \
        "%s: int8 accuracy %g, float %g" % (what, int8_accuracy, float_accuracy)


def layers_match(trace, spec, read):
    """Every traced int8 layer output equal to the host's file layer<i>.bin (read(name) gives
    its bytes), its rows and columns those of spec["layers"]; then the classes."""
    import array

    check.equal(len(trace), len(spec["layers"]), "layers traced")
    for i, ((buf, r, k), (typecode, want_r, want_k)) in enumerate(zip(trace, spec["layers"])):
        check.equal([r, k], [want_r, want_k], "layer %d rows and columns" % i)
        want = read("layer%d.bin" % i)
        if bytes(buf) != want:  # then say where
            check.equal(buf, array.array(typecode, want), "layer %d" % i)
    check.equal(int8_classes(*trace[-1]), spec["classes"], "classes of the int32 logits")


def load_int8(name):
    """The int8 model file `name` of the current module's fixtures."""
    from tinyattn.int8 import load

    return load(check.path(name))


def host_trace(masked=False):
    """The host's int8 model (int8.bin) on the quantized test rows (xq.bin; with masked, the
    padding mask keep.bin too): its trace of every layer, and the fixture "trace"."""
    import array

    qm = load_int8("int8.bin")
    xq = array.array("b", read_bytes("xq.bin"))
    keep = bytearray(read_bytes("keep.bin")) if masked else None
    spec = check.fixture("trace")
    trace = []
    qm.forward_int(xq, spec["rows"], spec["cols"], trace=trace, keep=keep)
    return trace, spec


def host_layers_match(masked=False):
    """The host's int8 model on every test row: every layer bit for bit with its file."""
    trace, spec = host_trace(masked)
    layers_match(trace, spec, read_bytes)


def host_keeps_the_float_accuracy(masked=False):
    """The host's int8 model's test accuracy within a point of the float model's."""
    trace, spec = host_trace(masked)
    predicted = int8_classes(*trace[-1])
    within_a_point(accuracy(predicted, spec["y"]), spec["float_accuracy"],
                   "the host's int8 model", len(predicted))


def float_model():
    """The float model of the fixture "float_model" (its config, seed 3, its parameters),
    and the fixture (drop it before quantizing: it holds every parameter again)."""
    from tinyattn import Sequential

    f = check.fixture("float_model")
    model = Sequential.from_config(f["config"], seed=3)
    for name, param, _ in model.collect_params():
        param[:] = f[name]
    return model, f


def read_bytes(name):
    """The bytes of raw fixture file `name` of the current module."""
    with open(check.path(name), "rb") as f:
        return f.read()

