"""A fuzz of the model loaders (issue 39): files with a valid CRC-32 whose fields, arrays
(names, typecodes, shapes), layers and kind are changed at random (seeded, a bounded count)
from good float and int8 models. On the device (tests/board/case_load_fuzz.py) `load` and
`int8.load` of each either refuse it with one ValueError line naming the file, or give a
model whose forward runs."""

import copy
import json

import numpy as np

from board_cases import board_test
from tinyattn_host import modelfile
from tinyattn_host.device_modules import device_module
from tinyattn_host.quantize import quantize

SEED, PER_BASE = 39, 100
CONFIGS = (
    [["Dense", 4, 8, True], ["Activation", "tanh"], ["Dense", 8, 3, False]],
    [["Tokens", 4], ["Dense", 2, 8, True], ["PositionalEmbedding", 4, 8],
     ["TransformerEncoderLayer", 8, 2, 16, 0.0, "gelu", True, 1e-5, 4, False],
     ["SelfAttention", 8, 2, 4], ["GlobalAvgPool", 4], ["Dense", 8, 3]],
    [["Dense", 6, 8], ["Tokens", 2], ["LayerNorm", 4, 1e-5], ["SelfAttention", 4, 1, 2, False],
     ["Gelu"], ["GlobalAvgPool", 2], ["Dense", 4, 2]],
)
VALUES = (0, 1, 2, 3, -1, 4, 8, 16, 255, 256, 32768, 2 ** 31, 2 ** 40, 1e-45, 1e-30, 1e38, 1e39,
          -1.0, 0.5, 1.5, float("nan"), float("inf"), "a", "", "relu", "swish", None, True,
          False, [], {}, [1, 2], [16384, 14, 0, 129], [0, 0, 0, 0], [[16384, 14, 0, 129]],
          ["q", "z"], ["q", "k", "v", "o"])
DTYPES = (np.float32, np.int8, np.uint8, np.int16, np.int32)


def base_models():
    """(kind, meta, {name: array}) of every config, float and its int8 model."""
    spec = device_module("nn/spec")
    rng = np.random.default_rng(SEED)
    out = []
    for config in CONFIGS:
        params = {name: rng.uniform(-0.5, 0.5, shape).astype(np.float32)
                  for name, shape in spec.model_shapes(config)}
        out.append(("sequential", {"config": config}, params))
        width = device_module("nn/flow").follow(config)[0]
        specs, arrays = quantize(config, params, rng.uniform(-1, 1, (8, width)))
        out.append(("quantized", {"layers": specs}, arrays))
    return out


def _places(value, path=()):
    """Every place (path) inside a JSON value."""
    yield path
    items = value.items() if isinstance(value, dict) else \
        enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        yield from _places(item, path + (key,))


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_mult(value):
    return isinstance(value, list) and len(value) == 4 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in value)


def _at(value, path):
    for key in path:
        value = value[key]
    return value


def mutate(kind, meta, arrays, rng):
    """One random change of the meta, the arrays, the layers or the kind."""
    op = rng.choice(["value", "value", "value", "delete", "add", "shape", "dtype", "drop",
                     "extra", "rename", "layers", "kind", "scale", "scale", "mult", "mult"])
    places = [p for p in _places(meta) if len(p) >= 2]
    if op == "scale":  # a valid file with other numbers: its forward must run
        found = [p for p in places if isinstance(p[-1], str) and
                 (p[-1].startswith("s_") or p[-2] == "scales") and _number(_at(meta, p))]
        if found:
            path = found[rng.integers(len(found))]
            _at(meta, path[:-1])[path[-1]] *= float(10.0 ** rng.uniform(-4, 4))
    elif op == "mult":
        found = [p for p in places if _is_mult(_at(meta, p))]
        if found:
            p = int(rng.integers(0, 17))
            _at(meta, found[rng.integers(len(found))])[:] = [
                int(rng.integers(0, 2 ** 15)), int(rng.integers(0, 31)), p,
                int(rng.integers(1, min(2 ** (15 + p), 2 ** 31)))]
    elif op in ("value", "delete", "add") and places:
        path = places[rng.integers(len(places))]
        parent = _at(meta, path[:-1])
        old = parent[path[-1]]
        if op == "value" and _number(old) and rng.random() < 0.5:  # a near value: may load
            parent[path[-1]] = type(old)(old * 2 if rng.random() < 0.5 else old // 2 if
                                         isinstance(old, int) else old / 3)
        elif op == "value":
            parent[path[-1]] = copy.deepcopy(VALUES[rng.integers(len(VALUES))])
        elif op == "delete":
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent["extra"] = 1
        else:
            parent.append(copy.deepcopy(parent[-1]) if parent else 1)
    elif op in ("shape", "dtype", "drop", "rename") and arrays:
        name = sorted(arrays)[rng.integers(len(arrays))]
        value = arrays.pop(name)
        if op == "shape":
            shape = tuple(int(d) for d in rng.integers(1, 10, rng.integers(1, 3)))
            if rng.random() < 0.5 and value.ndim == 2:
                shape = value.shape[::-1]
            arrays[name] = rng.integers(-100, 100, shape).astype(value.dtype)
        elif op == "dtype":
            arrays[name] = value.astype(DTYPES[rng.integers(len(DTYPES))])
        elif op == "rename":
            arrays[name.replace(".", ".x", 1) if rng.random() < 0.5 else "9." + name] = value
    elif op == "extra":
        arrays["%d.W" % rng.integers(12)] = np.zeros((2, 2), DTYPES[rng.integers(len(DTYPES))])
    elif op == "layers":
        layers = meta.get("config", meta.get("layers"))
        if isinstance(layers, list) and len(layers) > 1:
            i, j = (int(v) for v in rng.integers(len(layers), size=2))
            if rng.random() < 0.5:
                layers[i], layers[j] = layers[j], layers[i]
            else:
                layers.insert(i, copy.deepcopy(layers[j]))
    else:
        kind = "quantized" if kind == "sequential" else "sequential"
    return kind, meta, arrays


def crafted(tmp_path):
    """{file name: bytes} of the mutants of every base model, and their names."""
    rng = np.random.default_rng(SEED)
    files = {}
    for b, (kind, meta, arrays) in enumerate(base_models()):
        for n in range(PER_BASE):
            k, m, a = kind, json.loads(json.dumps(meta)), dict(arrays)
            for _ in range(1 + rng.integers(3)):
                k, m, a = mutate(k, m, a, rng)
            path = tmp_path / ("m%d_%d.bin" % (b, n))
            modelfile.write_model(path, k, m, a)
            files[path.name] = path.read_bytes()
    return files


def fixtures():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as tmp:
        files = crafted(Path(tmp))
    return dict(files, fuzz={"names": sorted(files)})


def test_the_mutants_are_not_all_refused_by_the_host_for_the_same_reason(tmp_path):
    """The fuzz reaches the loaders' checks: its files have a good CRC and differ."""
    files = crafted(tmp_path)
    assert len(files) == PER_BASE * 2 * len(CONFIGS)
    assert len(set(files.values())) > 0.8 * len(files)
    for name, data in list(files.items())[:20]:
        (tmp_path / name).write_bytes(data)
        modelfile.read_model(tmp_path / name)  # a well-formed file: the loaders decide


test_load_fuzz_on_board = board_test("case_load_fuzz", fixtures, heap="2m")
