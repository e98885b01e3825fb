"""The device Attention layer against the NumPy reference on 64 configurations: the host
makes the configurations and the reference's results, tests/board/case_attention.py compares
on the --board target."""

import functools

import numpy as np

from board_cases import board_test, fixture_text
from checks import config_id
from tinyattn_host.reference import attention_backward, attention_forward
from tinyattn_host.reference.training import Rng

PARAMS = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")


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


def attention_id(c):
    """E16-H4-S5-kv7-B3-bias-mask-causal-dropout-checkpoint (kv: a cross-attention's keys)."""
    return config_id(E=c["E"], H=c["H"], S=c["S"], kv=c["S_kv"] if c["S_kv"] != c["S"] else None,
                     B=c["B"], bias=c["bias"], mask=c["mask"], causal=c["causal"],
                     dropout=c["dropout"] > 0, checkpoint=c["checkpoint"])


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


def shifts(E):
    """Each input is k / 2^shift, k uniform in [-2048, 2048) (float32-exact on every port):
    x, G and kv with a standard deviation about 1, the weights about 1/sqrt(E), the biases
    about 0.1."""
    return {"x": 10, "W": {4: 11, 8: 12, 16: 12, 64: 13}[E], "b": 13}


def grid(rng, rows, cols, shift):
    """What tests/board/case_attention.py's grid draws from the same Rng: float32-exact."""
    k = np.array([(rng.next32() >> 20) - 2048 for _ in range(rows * cols)], dtype=np.float64)
    return k.reshape(rows, cols) / 2.0**shift


def make_inputs(c):
    """The inputs the device draws (x, G, the parameters, kv: in this order), and the mask."""
    E, B, S, S_kv, sh = c["E"], c["B"], c["S"], c["S_kv"], c["shifts"]
    rng = Rng(1000 + c["seed"])
    inputs = {"x": grid(rng, B * S, E, sh["x"]), "G": grid(rng, B * S, E, sh["x"])}
    for name in PARAMS:
        if name.startswith("W"):
            inputs[name] = grid(rng, E, E, sh["W"])
        elif c["bias"]:
            inputs[name] = grid(rng, 1, E, sh["b"]).reshape(E)
    if S_kv != S:
        inputs["kv"] = grid(rng, B * S_kv, E, sh["x"])
    if c["mask"]:
        lengths = np.random.default_rng(1000 + c["seed"]).integers(1, S_kv + 1, size=B)
        mask = (np.arange(S_kv)[None, :] < lengths[:, None]).astype(np.float64)
        if B > 1 and S_kv > 1:
            mask[-1, 0] = 0.0  # a padded key that is not at the end
        inputs["mask"] = mask
    return inputs


def keep_threshold(p, real):
    """tinyattn.rng.keep_threshold(p) on a port whose floats are `real` (np.float32, np.float64)."""
    low, high = 0, 1 << 32
    while low < high:
        middle = (low + high) // 2
        if real(middle) / real(2.0**32) >= real(p):
            high = middle
        else:
            low = middle + 1
    return low


def keep_mask(c):
    """The device layer's dropout keep-mask (B*H*S, S_kv): its dropout Rng is seeded with the
    first draw of Rng(seed), then each block (b, h) draws S*S_kv bytes in order."""
    rng = Rng(Rng(c["seed"]).next32())
    draws = np.array([rng.next32() for _ in range(c["B"] * c["H"] * c["S"] * c["S_kv"])])
    keep = draws >= keep_threshold(c["dropout"], np.float64)
    # the same decisions with float32 (a board, a real ulab) as with float64 (the stand-in)
    assert np.array_equal(keep, draws >= keep_threshold(c["dropout"], np.float32)), attention_id(c)
    return keep.reshape(-1, c["S_kv"]).astype(np.uint8)


def reference(c, inputs, keep=None):
    p = {name: inputs.get(name) for name in PARAMS}
    kv = inputs.get("kv")
    y, cache = attention_forward(
        inputs["x"], p, c["H"], c["S"], mask=inputs.get("mask"), causal=c["causal"],
        kv=kv, kv_len=c["S_kv"] if kv is not None else None, keep=keep,
        dropout=c["dropout"])
    return y, attention_backward(inputs["G"], p, cache)


@functools.cache
def make_fixtures(part=None):
    """cfgNN (the configuration, mask, expected names and shapes), cfgNN.f32 (the reference's
    y, dx, dkv and parameter gradients as little-endian float32), cfgNN.keep (the dropout keep-mask); of
    every configuration, or of those with NN % PARTS == part."""
    fixtures = {}
    for i, c in enumerate(CONFIGS):
        if part is not None and i % PARTS != part:
            continue
        c = dict(c, id=attention_id(c), shifts=shifts(c["E"]))
        inputs = make_inputs(c)
        keep = keep_mask(c) if c["dropout"] > 0 else None
        y, grads = reference(c, inputs, keep)
        want = {"y": y, "dx": grads["dx"]}
        if "kv" in inputs:
            want["dkv"] = grads["dkv"]
        want.update(("d" + n, grads["d" + n]) for n in PARAMS if n in inputs)
        name = "cfg%02d" % i
        fixture = {"config": c, "expected": [[k, list(v.shape)] for k, v in want.items()]}
        if c["mask"]:
            fixture["mask"] = inputs["mask"]
        fixtures[name] = fixture
        fixtures[name + ".f32"] = b"".join(v.astype("<f4").tobytes() for v in want.values())
        if keep is not None:
            fixtures[name + ".keep"] = keep.tobytes()
    return fixtures


def test_fixtures_stay_small():
    """They are copied over serial to a real board, a part at a time."""
    parts = [make_fixtures(part) for part in range(PARTS)]
    names = sorted(name for fixtures in parts for name in fixtures if "." not in name)
    assert names == ["cfg%02d" % i for i in range(len(CONFIGS))]  # every one, once
    for fixtures in parts:
        size = sum(len(v) if isinstance(v, bytes) else len(fixture_text(v))
                   for v in fixtures.values())
        assert size < 800_000, size


# The configurations in two runs of the case module (so that pytest -n 2 shares them out).
PARTS = 2
test_attention_even_configurations_on_board = board_test(
    "case_attention", lambda: make_fixtures(0))
test_attention_odd_configurations_on_board = board_test(
    "case_attention", lambda: make_fixtures(1))
