"""Issue 39's refusals on the device: int8 files whose fields disagree with their arrays or
the kernels' bounds refused at load in one line naming the file and the field; save refusing
what load would; LOAD_QMODEL refusing an int8 output without its scale (BENCH then answers);
a refused STREAM leaving the stream as it was; Stream of a non-model and a .ts file with a
byte that is not UTF-8 each a clear ValueError."""

import array
import json

import check
from tinyattn import Dense, Sequential, save
from tinyattn.int8.convert import quantize
from tinyattn.int8.model_load import load as int8_load
from tinyattn.link import records
from tinyattn.link.server import Session
from tinyattn.link.wire import BENCH, ERRORS, LOAD_QMODEL, STREAM
from tinyattn.nn.stream import Stream
from tinyattn.link.wire import FILE_QUANTIZED as QUANTIZED
from tinyattn.store import read_file, write_file
from ulab import numpy as np

CONFIG = [["Dense", 8, 16], ["Activation", "tanh"], ["Tokens", 2], ["SelfAttention", 8, 2, 2],
          ["GlobalAvgPool", 2], ["Dense", 8, 3]]


def _rows(n, cols, seed=0):
    return np.array([[((i * 7 + j * 3 + seed) % 11) / 5.0 - 1.0 for j in range(cols)]
                     for i in range(n)])


def _quantized():
    model = Sequential.from_config(CONFIG, seed=3)
    return model, quantize(model, _rows(6, 8))


def _saved():
    """(layers as JSON gives them, {name: [buffer, code, shape]}) of a saved int8 model."""
    _, q = _quantized()
    q.save(check.path("good.bin"))
    _, meta, stored = read_file(check.path("good.bin"))
    return meta["layers"], dict((name, [value, repr(value[:0])[7], shape])  # array('b')
                                for name, shape, value in stored)


def _refused(change, *words):
    layers, arrays = _saved()
    change(layers, arrays)
    path = check.path("bad.bin")
    write_file(path, QUANTIZED, {"layers": layers},
               [(name, e[0], e[1], e[2]) for name, e in sorted(arrays.items())])
    text = check.raises(ValueError, int8_load, path)
    for word in (path,) + words:
        if word not in text:
            raise AssertionError("%r not in %r" % (word, text))
    assert "\n" not in text, "more than one line: %r" % text


def _set(i, field, value, sub=None):
    def change(layers, arrays):
        (layers[i] if sub is None else layers[i][sub])[field] = value
    return change


def test_an_int8_file_of_every_issue_case_is_refused_at_load_in_one_line():
    _refused(_set(3, "H", 0), "layers[3]", "'H'", "int in 1..")
    _refused(_set(2, "seq_len", 0), "layers[2]", "'seq_len'")
    _refused(_set(0, "s_x", "a"), "layers[0]", "'s_x'", "finite number > 0")
    _refused(_set(0, "s_x", -1.0), "layers[0]", "'s_x'", "finite number > 0")
    _refused(_set(3, "H", 3), "layers[3]", "'E' (8) must be a multiple of 'H' (3)")
    _refused(_set(3, "bias", ["q", "z"]), "layers[3]", "'bias'", "'z'")
    _refused(_set(1, "name", "swish"), "layers[1]", "'name'", "tanh")
    _refused(_set(0, "mult", [16384, 14]), "layers[0]", "'mult'")
    _refused(_set(0, "mult", None), "layers[0]", "only the last layer")
    _refused(_set(0, "in", 40), "array 0.W", "(16, 40)")
    _refused(_set(4, "by_count", [[16384, 14, 0, 129]]), "layers[4]", "'by_count'")
    _refused(_set(3, "seq_len", None), "layers[3]", "'seq_len'")
    _refused(_set(5, "mult", [16384, 14, 0, 129]), "layers[5]", "'s_y'")

    def short_table(layers, arrays):
        arrays["1.table"] = [array.array("b", bytes(255)), "b", (255,)]
    _refused(short_table, "array 1.table", "(256,)")

    def extra(layers, arrays):
        arrays["6.W"] = [array.array("b", bytes(4)), "b", (2, 2)]
    _refused(extra, "6.W", "not part of the int8 model")

    def wq(layers, arrays):
        arrays["3.Wq"] = [array.array("b", bytes(32)), "b", (4, 8)]
    _refused(wq, "array 3.Wq", "(8, 8)")

    def unsigned(layers, arrays):
        arrays["0.W"][1] = "B"
    _refused(unsigned, "array 0.W", "'b'")

    def no_bias(layers, arrays):
        del arrays["3.bq"]
    _refused(no_bias, "layers[3]", "3.bq")

    def misfit(layers, arrays):  # the layers' sizes do not follow: 8 features into in 4
        layers[5]["in"] = 4
        arrays["5.W"] = [array.array("b", bytes(12)), "b", (3, 4)]
    _refused(misfit, "do not fit together", "layer 5 (Dense)")


def test_a_good_int8_file_loads_and_answers_as_saved():
    _, q = _quantized()
    q.save(check.path("good.bin"))
    check.equal(int8_load(check.path("good.bin")).forward(_rows(4, 8, 1)), q.forward(_rows(4, 8, 1)),
                "the loaded model's output")


def test_save_refuses_what_load_would_and_writes_nothing():
    path = check.path("refused.bin")
    text = check.raises(ValueError, save, Sequential([Dense(4, 8), Dense(5, 3)]), path)
    assert path in text and "not saved" in text and "layer 1 (Dense)" in text, text
    _, q = _quantized()
    q.layers[0].mult = None  # an int32 output mid-model
    text = check.raises(ValueError, q.save, path)
    assert path in text and "only the last layer" in text, text
    for name in (path, path + ".tmp"):
        try:
            open(name).close()
        except OSError:
            continue
        raise AssertionError("%s was written" % name)


class Port:
    """Stands for the serial port: keeps each answer as (error name or None, head)."""

    def __init__(self):
        self.answers = []

    def error(self, seq, code, message):
        self.answers.append((ERRORS.get(code, code), message))

    def send_parts(self, kind, seq, size, parts):
        self.answers.append((None, records.decode(b"".join(bytes(p) for p in parts))[0]))


def _ask(session, kind, head, arrays=()):
    port = Port()
    session.answer(port, kind, 1, records.encode(head, arrays))
    return port.answers[-1]


def test_load_qmodel_of_an_int8_output_without_its_scale_is_refused_and_bench_answers():
    model, q = _quantized()
    session = Session()
    session.model, session.qmodel = model, q
    layers = json.loads(json.dumps(q.description()["layers"]))
    layers[5]["mult"] = [16384, 14, 0, 129]  # s_y stays null
    name, message = _ask(session, LOAD_QMODEL, {"layers": layers}, q.named_arrays())
    check.equal(name, "BAD_VALUE", "LOAD_QMODEL's answer: %s" % message)
    assert "layers[5]" in message and "'s_y'" in message, message
    assert session.qmodel is q, "a refused LOAD_QMODEL replaced the int8 model"
    name, head = _ask(session, BENCH, {"batch": 3, "repeat": 3})
    check.equal(name, None, "BENCH's answer: %r" % (head,))
    assert "int8_us" in head, head


STREAM_CONFIG = [["Dense", 3, 8], ["TransformerEncoderLayer", 8, 2, 16, 0.0, "relu", False,
                                    1e-5, None, True], ["Dense", 8, 2]]


def test_a_refused_stream_request_leaves_the_stream_as_it_was():
    session = Session()
    session.model = Sequential.from_config(STREAM_CONFIG, seed=5)
    good = [("x", _rows(1, 3, t)) for t in range(6)]
    for t in range(3):
        check.equal(_ask(session, STREAM, {"window": 4}, [good[t]])[1]["t"], t, "token %d" % t)
    for head, x in (({"window": 4, "reset": True}, _rows(1, 5)),
                    ({"window": 3, "reset": True}, _rows(2, 4)),
                    ({"window": 2}, _rows(2, 3)), ({"window": 4}, np.zeros(3))):
        name, message = _ask(session, STREAM, head, [("x", x)])
        check.equal(name, "BAD_VALUE", "a bad token: %s" % message)
    name, head = _ask(session, STREAM, {"window": 4}, [good[3]])
    check.equal((name, head.get("t")), (None, 3), "the next good token")


def test_a_stream_of_what_is_not_a_model_is_a_clear_value_error():
    for model in (None, Dense(4, 3), [Dense(4, 3)]):
        text = check.raises(ValueError, Stream, model, 4)
        assert "model must be a Sequential" in text, text
    stream = Stream(Sequential.from_config(STREAM_CONFIG, seed=5), 4)
    text = check.raises(ValueError, stream.step, _rows(1, 5))
    assert "3 features" in text, text
    check.equal(stream.t, 0, "t after a refused token")


def test_a_ts_file_with_a_byte_that_is_not_utf8_is_named():
    from tinyattn.datasets.sequences import load_ts

    path = check.path("latin1.ts")
    with open(path, "wb") as f:
        f.write(b"@problemName x\n@classLabel true a b\n@data\n1.0,2.0:a\n1.0,\xe9:b\n")
    text = check.raises(ValueError, load_ts, path)
    assert "not UTF-8" in text and "line" in text, text
