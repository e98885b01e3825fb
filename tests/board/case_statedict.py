"""A model imported from a PyTorch state_dict on the host (statedict.import_npz) runs and
fine-tunes on the device like the reference, and the file the device saves holds every
parameter in the layout the host's export reads back."""

import json

import check
from tinyattn import SGD, load, save, store, train_step

TOL = 1e-4


def plain(value):
    return json.loads(json.dumps(value))


def test_import_run_fine_tune_export():
    f = check.fixture("expected")
    x, labels = f["x"], f["labels"]
    m = load(check.path("model.bin"))
    check.equal(plain(m.config()), f["config"], "config")
    check.rel_error_below(m.forward(x), f["logits"], TOL, what="logits")
    opt = SGD(m.collect_params(), lr=0.1)
    check.close(train_step(m, opt, x, labels), f["loss"], rtol=TOL, what="loss")
    save(m, check.path("tuned.bin"))  # a scratch file
    kind, meta, arrays = store.read_file(check.path("tuned.bin"))
    check.equal([kind], ["sequential"], "kind")
    check.equal(plain(meta["config"]), f["config"], "config saved")
    shapes = f["shapes"]
    check.equal(sorted(name for name, _, _ in arrays), sorted(shapes), "arrays saved")
    for name, shape, value in arrays:
        check.equal(shape, shapes[name], name + " shape")
        assert hasattr(value, "shape"), name + " is not stored as float32"
        check.rel_error_below(value, f["after." + name], TOL, what=name + " after the step")
    loaded = dict((name, p) for name, p, _ in load(check.path("model.bin")).collect_params())
    trained = dict((name, value) for name, _, value in arrays)
    head = f["head"]
    assert trained[head].tolist() != loaded[head].tolist(), "the head did not train"


def test_a_step_and_a_save_return_the_heap():
    f = check.fixture("expected")
    x, labels = f["x"], f["labels"]
    m = load(check.path("model.bin"))
    opt = SGD(m.collect_params(), lr=0.1)
    check.heap_returns(lambda: train_step(m, opt, x, labels), what="an SGD step")
    path = check.path("tuned.bin")
    check.heap_returns(lambda: (save(m, path), load(path)), what="a save and load")
