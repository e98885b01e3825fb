"""The device Attention layer against the NumPy reference, on the virtual board's interpreter."""

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host.reference import attention_backward, attention_forward

PARAMS = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")

DEVICE_CASE = """
from tinyattn import Attention
c = IN['config']
layer = Attention(c['E'], c['H'], use_bias=c['bias'], dropout=c['dropout'],
                  checkpoint=c['checkpoint'], seed=c['seed'])
for name, param, grad in layer.collect_params():
    param[:] = IN[name]
kv = IN.get('kv')
y = layer.forward(IN['x'], c['S'], mask=IN.get('mask'), causal=c['causal'], kv=kv,
                  kv_len=c['S_kv'] if kv is not None else None, training=c['dropout'] > 0)
grads = layer.backward(IN['G'])
if kv is not None:
    OUT['dx'], OUT['dkv'] = grads
else:
    OUT['dx'] = grads
OUT['y'] = y
for name, param, grad in layer.collect_params():
    OUT['d' + name] = grad
if c['dropout'] > 0:
    OUT['keep'] = layer.keep_mask()
"""


def make_configs():
    """At least 60 configurations covering every option; the big shapes a few times only."""
    rng = np.random.default_rng(2024)
    configs = []
    fixed = [  # (E, H, S, B): the corners of the grid
        (64, 4, 64, 1), (64, 8, 64, 3), (64, 1, 16, 3), (4, 4, 1, 1), (4, 2, 2, 3),
        (16, 8, 7, 3), (8, 1, 64, 1), (16, 2, 16, 1),
    ]
    shapes = fixed + [None] * 56
    for i, shape in enumerate(shapes):
        if shape is None:
            E = int(rng.choice([4, 8, 16, 64], p=[0.3, 0.35, 0.25, 0.1]))
            H = int(rng.choice([h for h in (1, 2, 4, 8) if E % h == 0]))
            S = int(rng.choice([1, 2, 7, 16] if E == 64 else [1, 2, 7, 16, 64],
                               p=None if E == 64 else [0.2, 0.25, 0.3, 0.2, 0.05]))
            B = int(rng.choice([1, 3]))
        else:
            E, H, S, B = shape
        cross = i % 5 == 3
        S_kv = int(rng.choice([s for s in (1, 2, 5, 7, 9) if s != S])) if cross else S
        configs.append(dict(
            E=E, H=H, S=S, B=B, S_kv=S_kv, seed=i,
            bias=bool(i % 3 != 1),
            mask=bool(i % 4 == 1 or i % 7 == 2),
            causal=bool(i % 4 == 2 and not cross) or (cross and i % 10 == 8),
            dropout=0.25 if i % 6 == 5 else 0.0,
            checkpoint=bool(i % 8 == 7),
        ))
    return configs


CONFIGS = make_configs()


def config_id(c):
    flags = "".join(f for f, on in (("b", c["bias"]), ("m", c["mask"]), ("c", c["causal"]),
                                     ("d", c["dropout"] > 0), ("k", c["checkpoint"])) if on)
    cross = f"x{c['S_kv']}" if c["S_kv"] != c["S"] else ""
    return f"E{c['E']}H{c['H']}S{c['S']}{cross}B{c['B']}-{flags or 'plain'}"


def test_configurations_cover_the_grid():
    assert len(CONFIGS) >= 60
    assert {c["E"] for c in CONFIGS} == {4, 8, 16, 64}
    assert {c["H"] for c in CONFIGS} == {1, 2, 4, 8}
    assert {c["S"] for c in CONFIGS} == {1, 2, 7, 16, 64}
    assert {c["B"] for c in CONFIGS} == {1, 3}
    for flag in ("bias", "mask", "causal", "checkpoint"):
        assert {c[flag] for c in CONFIGS} == {True, False}, flag
    assert any(c["dropout"] > 0 for c in CONFIGS)
    assert any(c["S_kv"] != c["S"] for c in CONFIGS)
    assert all(c["E"] % c["H"] == 0 for c in CONFIGS)


def make_inputs(c):
    rng = np.random.default_rng(1000 + c["seed"])
    E, B, S, S_kv = c["E"], c["B"], c["S"], c["S_kv"]
    f32 = lambda a: a.astype(np.float32).astype(np.float64)  # what the device can hold
    inputs = {"config": c, "x": f32(rng.standard_normal((B * S, E))),
              "G": f32(rng.standard_normal((B * S, E)))}
    for name in PARAMS:
        if name.startswith("W"):
            inputs[name] = f32(rng.standard_normal((E, E)) / np.sqrt(E))
        elif c["bias"]:
            inputs[name] = f32(0.1 * rng.standard_normal(E))
    if S_kv != S:
        inputs["kv"] = f32(rng.standard_normal((B * S_kv, E)))
    if c["mask"]:
        lengths = rng.integers(1, S_kv + 1, size=B)
        mask = (np.arange(S_kv)[None, :] < lengths[:, None]).astype(np.float64)
        if B > 1 and S_kv > 1:
            mask[-1, 0] = 0.0  # a padded key that is not at the end
        inputs["mask"] = mask
    return inputs


def reference(c, inputs, keep=None):
    p = {name: inputs.get(name) for name in PARAMS}
    kv = inputs.get("kv")
    y, cache = attention_forward(
        inputs["x"], p, c["H"], c["S"], mask=inputs.get("mask"), causal=c["causal"],
        kv=kv, kv_len=c["S_kv"] if kv is not None else None, keep=keep,
        dropout=c["dropout"])
    return y, attention_backward(inputs["G"], p, cache)


def rel_error(got, want, scale=None):
    """Frobenius norm of the error over that of the reference (or of `scale`)."""
    return np.linalg.norm(got - want) / max(np.linalg.norm(want if scale is None else scale),
                                            1e-30)


@pytest.mark.parametrize("c", CONFIGS, ids=config_id)
def test_device_matches_reference(c):
    inputs = make_inputs(c)
    out = run_device(DEVICE_CASE, inputs)
    keep = out.get("keep")
    if c["dropout"] > 0:
        assert keep.shape == (c["B"] * c["H"] * c["S"], c["S_kv"])
        assert set(np.unique(keep)) <= {0.0, 1.0}
    y, grads = reference(c, inputs, keep)
    assert np.max(np.abs(out["y"] - y)) <= 1e-4 * max(1.0, np.max(np.abs(y)))
    names = ["dx"] + (["dkv"] if "kv" in inputs else [])
    names += ["d" + n for n in PARAMS if n in inputs]
    for name in names:
        # dbk is exactly 0 (adding a constant to every score of a row leaves the softmax
        # unchanged): float32 leaves ~1e-8 there, so measure it on the scale of dbq.
        scale = grads["dbq"] if name == "dbk" else None
        assert rel_error(out[name], grads[name], scale) <= 1e-4, name
