"""A PyTorch-layout state_dict (NumPy-made) imported, run and fine-tuned on the device, and
exported back: the device against the reference fed PyTorch's arrays by hand-written names."""

import numpy as np

from device_runner import run_device
from torch_layout import description, model_state, tinyattn_params
from tinyattn_host.reference.layers import sequential_forward
from tinyattn_host.reference.training import SGD, train_step
from tinyattn_host.statedict import export_npz, import_npz

SHAPE = dict(S=4, F_in=3, E=8, F=16, classes=3, layers=2)
TOL = 1e-4


def rel(got, want):
    return np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30)


def test_import_run_fine_tune_export(tmp_path):
    rng = np.random.default_rng(77)
    state = model_state(rng=rng, **SHAPE)
    layers = description(H=2, activation="gelu", **SHAPE)
    np.savez(tmp_path / "torch.npz", **state)
    import_npz(tmp_path / "torch.npz", layers, tmp_path / "model.bin")
    x = rng.standard_normal((5, 12)).astype(np.float32).astype(np.float64)
    labels = [0, 2, 1, 1, 0]
    out = run_device(f"""
from tinyattn import load, save, SGD, train_step
m = load({str(tmp_path / "model.bin")!r})
OUT['logits'] = m.forward(IN['x'])
opt = SGD(m.collect_params(), lr=0.1)
OUT['loss'] = train_step(m, opt, IN['x'], IN['labels'])
save(m, {str(tmp_path / "tuned.bin")!r})
""", dict(x=x, labels=labels))
    config = [e["layer"] for e in layers]
    params = tinyattn_params(state, SHAPE["layers"])
    logits, _ = sequential_forward(config, params, x)
    assert rel(out["logits"], logits) < TOL
    loss = train_step(config, params, SGD(lr=0.1), x, np.array(labels))
    assert abs(out["loss"] - loss) <= TOL * loss
    tuned = export_npz(tmp_path / "tuned.bin", tmp_path / "tuned.npz", layers)
    assert sorted(tuned) == sorted(state)
    assert all(tuned[k].shape == v.shape and tuned[k].dtype == np.float32 for k, v in state.items())
    assert not np.array_equal(tuned["head.weight"], state["head.weight"])  # it did train
    got = tinyattn_params(tuned, SHAPE["layers"])  # back to tinyattn names, by hand
    for name, value in params.items():  # the reference after its SGD step
        assert rel(got[name], value) < TOL, name
