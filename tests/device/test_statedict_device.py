"""A PyTorch-layout state_dict (NumPy-made) imported, run and fine-tuned on the device, and
exported back: the device against the reference fed PyTorch's arrays by hand-written names.

tests/board/case_statedict.py loads the host's import, checks its logits and one SGD step
against the reference, saves it and checks the file it wrote (kind, config, every array's
name, shape, float32 type and value). Exporting a file in the layout the device writes is
checked here, on the host."""

import numpy as np

from board_cases import board_test
from checks import rel
from torch_layout import description, model_state, tinyattn_params
from tinyattn_host import modelfile
from tinyattn_host.reference.sequential import sequential_forward
from tinyattn_host.reference.training import SGD, train_step
from tinyattn_host.interop.statedict import export_npz, import_npz, param_shapes

SHAPE = dict(S=4, F_in=3, E=8, F=16, classes=3, layers=2)
TOL = 1e-4
HEAD = "%d.W" % (3 + SHAPE["layers"] + 1)  # head.weight under tinyattn's names


def fine_tuned(tmp_path):
    """The state_dict, its description, the imported model file, the batch, and the reference
    before and after one SGD step (tinyattn names, by hand)."""
    rng = np.random.default_rng(77)
    state = model_state(rng=rng, **SHAPE)
    layers = description(H=2, activation="gelu", **SHAPE)
    np.savez(tmp_path / "torch.npz", **state)
    import_npz(tmp_path / "torch.npz", layers, tmp_path / "model.bin")
    x = rng.standard_normal((5, 12)).astype(np.float32).astype(np.float64)
    labels = [0, 2, 1, 1, 0]
    config = [e["layer"] for e in layers]
    params = tinyattn_params(state, SHAPE["layers"])
    logits, _ = sequential_forward(config, params, x)
    tuned = {k: v.copy() for k, v in params.items()}
    loss = train_step(config, tuned, SGD(lr=0.1), x, np.array(labels))
    return state, layers, config, x, labels, logits, loss, params, tuned


def make_fixtures():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        state, layers, config, x, labels, logits, loss, params, tuned = fine_tuned(Path(tmp))
        model = (Path(tmp) / "model.bin").read_bytes()
    shapes = {}
    for i, spec in enumerate(config):
        shapes.update({"%d.%s" % (i, n): list(s) for n, s in param_shapes(spec).items()})
    assert sorted(shapes) == sorted(params)
    expected = dict(config=config, x=x, labels=labels, logits=logits, loss=float(loss),
                    shapes=shapes, head=HEAD)
    expected.update({"after." + n: v for n, v in tuned.items()})
    return {"expected": expected, "model.bin": model}


test_statedict_on_board = board_test("case_statedict", make_fixtures)


def test_a_file_saved_on_the_device_exports_back(tmp_path):
    """The fine-tuned model in the layout store.save writes (kind sequential, meta {"config"}
    only, float32 arrays in collect_params order) exports to the state_dict's keys, shapes
    and dtype, and back to tinyattn's names gives the same arrays."""
    state, layers, config, x, labels, logits, loss, params, tuned = fine_tuned(tmp_path)
    modelfile.write_model(tmp_path / "tuned.bin", "sequential", {"config": config},
                          {n: v.astype(np.float32) for n, v in tuned.items()})
    exported = export_npz(tmp_path / "tuned.bin", tmp_path / "tuned.npz", layers)
    assert sorted(exported) == sorted(state)
    assert all(exported[k].shape == v.shape and exported[k].dtype == np.float32
               for k, v in state.items())
    assert not np.array_equal(exported["head.weight"], state["head.weight"])  # it did train
    got = tinyattn_params(exported, SHAPE["layers"])  # back to tinyattn names, by hand
    for name, value in tuned.items():  # the reference after its SGD step
        assert rel(got[name], value) < TOL, name
