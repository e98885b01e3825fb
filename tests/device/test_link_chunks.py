"""The link runs FORWARD, FORWARD_INT8, TRAIN_STEP and QUANTIZE in chunks of what fits (link/chunks.py):
in pieces the answers are the whole batch's (float and int8 outputs and attention maps bit
for bit, the int8 model byte for byte, a training step's loss and weights within float32
rounding), the reply says `at_once`, and a MemoryError halves the chunk. The pieces are forced
here (the session's chunk size set before a request), on the unix port; the halving in a real
heap is tests/device/test_heap_fit_device.py's."""

import json

import numpy as np

from tinyattn_host import protocol as P
from tinyattn_host.checks.run_check import IRIS_CONFIG, iris, random_model
from tinyattn_host.reference.training import SGD, train_step
from tinyattn_host.virtual import unixport

SCRIPT = """
import sys, json
from tinyattn.link import chunks, handlers, records, server

session = server.Session()
out = []
for kind, at_once, payload in json.load(open(sys.argv[1])):
    if kind == 0:  # in_chunks itself: a run that needs at most `at_once` samples at a time
        def run(n):
            if n > at_once:
                raise MemoryError
            return n
        try:
            out.append(list(chunks.in_chunks(session, "test", payload, run))
                       + [session.at_once.get("test")])
        except MemoryError:
            out.append(["MemoryError"])
        session.at_once.pop("test", None)
        continue
    if at_once:
        session.at_once.update(at_once)
    head, arrays = records.decode(bytes.fromhex(payload))
    size, parts = records.pieces(*handlers.HANDLERS[kind](session, head, arrays))
    out.append(b"".join(parts).hex())
with open(sys.argv[2], "w") as f:
    json.dump(out, f)
"""


def served(tmp_path, requests):
    """The replies (head, arrays) to [(type, {work: samples at once} or None, head, arrays)],
    handled in one session; a type 0 runs in_chunks with a `head`-sample limit."""
    script, inp, outp = tmp_path / "chunks.py", tmp_path / "in.json", tmp_path / "out.json"
    script.write_text(SCRIPT)
    inp.write_text(json.dumps([[kind, at_once, head if kind == 0 else
                                P.encode(head, arrays).hex()]
                               for kind, at_once, head, arrays in requests]))
    unixport.run_file(script, args=(str(inp), str(outp)))
    return [reply if isinstance(reply, list) else P.decode(bytes.fromhex(reply))
            for reply in json.loads(outp.read_text())]


def load():
    return (P.LOAD_MODEL, None, {"config": IRIS_CONFIG}, random_model(3))


def test_a_halved_chunk_is_kept_and_one_sample_that_does_not_fit_is_refused(tmp_path):
    # (limit, samples): 16 -> 8 -> 4 at a limit of 5; 7 -> 4 -> 2 at 3; all at once if they fit
    got = served(tmp_path, [(0, 5, 16, None), (0, 3, 7, None), (0, 9, 9, None),
                            (0, 0, 4, None)])
    assert got == [[4, 4, 4], [2, 2, 2], [9, 9, None], ["MemoryError"]]


def test_forward_in_pieces_is_the_whole_batchs_bit_for_bit(tmp_path):
    X = iris()[0][:10]  # 10 samples: pieces of 3, 3, 3 and 1
    calibration = (P.QUANTIZE, None, {}, {"x": iris()[0]})
    ask = {"attention": True, "int8": True}
    whole, pieces = served(tmp_path, [
        load(), calibration, (P.FORWARD, None, ask, {"x": X}),
        (P.FORWARD, {"forward": 3}, ask, {"x": X})])[2:]
    assert "at_once" not in whole[0] and pieces[0]["at_once"] == 3
    assert pieces[0]["rows"] == whole[0]["rows"] == 10
    for name in ("logits", "attention", "xq", "y"):
        assert pieces[1][name].shape == whole[1][name].shape, name
        np.testing.assert_array_equal(pieces[1][name], whole[1][name], err_msg=name)


def test_calibration_in_pieces_gives_the_same_int8_model(tmp_path):
    X = iris()[0][:37]
    whole, pieces = served(tmp_path, [load(), (P.QUANTIZE, None, {}, {"x": X}),
                                      (P.QUANTIZE, {"quantize": 5}, {}, {"x": X})])[1:]
    assert "at_once" not in whole[0] and pieces[0].pop("at_once") == 5
    assert pieces[0] == whole[0]
    assert sorted(pieces[1]) == sorted(whole[1])
    for name in whole[1]:
        np.testing.assert_array_equal(pieces[1][name], whole[1][name], err_msg=name)


def test_a_training_step_in_pieces_is_the_whole_batchs(tmp_path):
    X, y = iris()
    x, labels = X[:11], y[:11].astype(np.int32)  # pieces of 4, 4 and 3: weights 4/11, 3/11
    step = (P.TRAIN_STEP, None, {"optimizer": "sgd", "lr": 0.5}, {"x": x, "labels": labels})
    weights = (P.GET_WEIGHTS, None, None, ())
    got = served(tmp_path, [load(), step, weights, load(),
                            (step[0], {"train": 4}) + step[2:], weights])
    whole, whole_weights, pieces, pieces_weights = got[1], got[2], got[4], got[5]
    assert "at_once" not in whole[0] and pieces[0]["at_once"] == 4
    assert abs(pieces[0]["loss"] - whole[0]["loss"]) <= 1e-6 * abs(whole[0]["loss"])
    reference = dict(random_model(3))
    loss = train_step(IRIS_CONFIG, reference, SGD(lr=0.5), x, labels)
    assert abs(pieces[0]["loss"] - loss) <= 1e-5 * abs(loss)
    assert max(np.abs(reference[k] - random_model(3)[k]).max() for k in reference) > 1e-2
    for name, value in whole_weights[1].items():
        np.testing.assert_allclose(pieces_weights[1][name], value, rtol=0, atol=1e-6,
                                   err_msg=name)
        np.testing.assert_allclose(pieces_weights[1][name], reference[name], rtol=0,
                                   atol=1e-5, err_msg=name)


def test_an_int8_forward_in_pieces_is_the_whole_batchs_bit_for_bit(tmp_path):
    X = iris()[0]
    calibration = (P.QUANTIZE, None, {}, {"x": X})
    xq = np.clip(np.round(X[:10] * 40), -128, 127).astype(np.int8)
    whole, pieces = served(tmp_path, [load(), calibration, (P.FORWARD_INT8, None, {}, {"x": xq}),
                                      (P.FORWARD_INT8, {"forward_int8": 4}, {}, {"x": xq})])[2:]
    assert "at_once" not in whole[0] and pieces[0].pop("at_once") == 4
    assert pieces[0]["rows"] == whole[0]["rows"] == 10 and pieces[0]["cols"] == 3
    np.testing.assert_array_equal(pieces[1]["y"], whole[1]["y"])
    assert len(np.unique(whole[1]["y"])) > 3  # outputs that differ from row to row
