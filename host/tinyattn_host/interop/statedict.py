"""PyTorch state_dicts to and from tinyattn model files, with NumPy alone (no torch).

A PyTorch model is saved as a .npz of its state_dict, keyed by PyTorch's own names:

    import numpy as np
    np.savez("model.npz", **{k: v.detach().cpu().numpy() for k, v in model.state_dict().items()})

A description says which prefix of those names is which tinyattn layer, in model order: a
list of {"prefix": ..., "layer": <tinyattn layer config>} ("prefix" is left out for layers
without parameters). The names each kind takes:

    Dense                    <prefix>.weight (out, in), <prefix>.bias       (nn.Linear)
    LayerNorm                <prefix>.weight, <prefix>.bias                 (nn.LayerNorm)
    PositionalEmbedding      <prefix> itself, (S, E); "shape": [1, S, E] in the entry when
                             PyTorch's parameter has that shape
    SelfAttention            <prefix>.in_proj_weight (3E, E) = [Wq; Wk; Wv],
                             <prefix>.in_proj_bias (3E,), <prefix>.out_proj.weight,
                             <prefix>.out_proj.bias                          (nn.MultiheadAttention)
    TransformerEncoderLayer  <prefix>.self_attn.* (as above), <prefix>.linear1.*,
                             <prefix>.linear2.*, <prefix>.norm1.*, <prefix>.norm2.*

"prefix": "" takes a bare module's own names (a state_dict of nn.TransformerEncoderLayer or
nn.MultiheadAttention alone). Before anything is written, the shapes are followed from the
input width through every layer (device/tinyattn/nn/flow.py). Every key of the state_dict
must be used and every name found, with PyTorch's shape and finite values, or StateDictError
says which is not. Arrays become float32 (a float32 state_dict goes through import and export
bit for bit).
"""

import numpy as np

from .. import modelfile
from ..device_modules import device_module
from ..errors import InputError
from ..reference import kinds, sequential  # noqa: F401  (sequential: every kind declared)
from .arrayfiles import read_json, read_state_dict

SEQUENTIAL = modelfile.SEQUENTIAL


class StateDictError(InputError):
    """A state_dict and a description do not fit together; the message says where."""


def param_shapes(spec):
    """{tinyattn parameter name: shape} of one layer config, in collect_params() order: the
    device's own table (reference/kinds.py reads device/tinyattn/nn/spec.py)."""
    try:
        return kinds.param_shapes(spec)
    except (TypeError, ValueError) as err:
        raise StateDictError("layer %r in the description: %s" % (spec, err)) from None


def _links(entry):
    """[(torch key, [tinyattn names, stacked along axis 0], torch shape)] of one entry: the
    PyTorch names its kind declares (reference/kinds.py), for the parameters it has. The
    empty prefix takes a bare module's own names (not for a kind whose parameter is the
    prefix itself, as PositionalEmbedding's)."""
    spec = entry["layer"]
    prefix = entry.get("prefix")
    shapes = param_shapes(spec)
    if not shapes:
        return []
    torch = kinds.kind(spec[0]).torch
    if _grouped(spec):
        raise StateDictError("layer %r has grouped-query heads (num_kv_heads): PyTorch's "
                             "nn.MultiheadAttention has none" % (spec,))
    if not isinstance(prefix, str) or (prefix == "" and "" in torch):
        raise StateDictError("layer %r has parameters: its entry needs a \"prefix\"%s"
                             % (spec, "" if "" in torch else " (\"\" for a bare state_dict)"))
    links = []
    for suffix, names in torch.items():
        names = [n for n in names if n in shapes]
        if not names:
            continue
        key = ".".join(part for part in (prefix, suffix) if part)
        shape = (sum(shapes[n][0] for n in names),) + shapes[names[0]][1:]
        if not suffix and "shape" in entry:  # the prefix itself: PyTorch's shape may differ
            shape = _same_values(key, tuple(entry["shape"]), shape)
        links.append((key, names, shape))
    return links


def _grouped(spec):
    """Whether a layer config has fewer key/value heads than query heads."""
    spec_module = kinds.device_spec()
    kind = spec_module.kind_of(spec[0])
    names = list(kind[spec_module.ARGS][::3])
    if "num_kv_heads" not in names:
        return False
    values = spec_module.arguments(kind, list(spec[1:]))
    heads = values[names.index("num_kv_heads")]
    return heads is not None and heads != values[1]


def _same_values(key, torch_shape, shape):
    """torch_shape, when it holds the values of `shape` (ones added or left out)."""
    if int(np.prod(torch_shape)) != int(np.prod(shape)) or \
            [d for d in torch_shape if d != 1] != [d for d in shape if d != 1]:
        raise StateDictError("%s: shape %r does not hold %r" % (key, torch_shape, shape))
    return torch_shape


def import_state_dict(state, layers):
    """(config, params) of a tinyattn Sequential from a state_dict and its description.

    state: {PyTorch name: array}; layers: the description (see the module docstring).
    params: {"<layer index>.<name>": float32 array}, as the device's collect_params names them.
    """
    config, params, used = [], {}, set()
    check_flow([entry["layer"] for entry in _checked(layers)])
    for i, entry in enumerate(layers):
        spec = entry["layer"]
        shapes = param_shapes(spec)
        config.append(list(spec))
        for key, names, torch_shape in _links(entry):
            if key not in state:
                raise StateDictError("the state_dict has no %r (layer %d, %s)" % (key, i, spec[0]))
            value = np.asarray(state[key])
            if value.shape != torch_shape:
                raise StateDictError("%s has shape %s, layer %d (%s) needs %s"
                                     % (key, value.shape, i, spec[0], torch_shape))
            if value.dtype.kind not in "fiu":
                raise StateDictError("%s holds %s values, not real numbers (layer %d, %s)"
                                     % (key, value.dtype, i, spec[0]))
            if not np.isfinite(value).all():
                raise StateDictError("%s holds NaN or infinity (layer %d, %s)"
                                     % (key, i, spec[0]))
            rows = sum(shapes[n][0] for n in names)  # (1, S, E) becomes (S, E)
            value = value.astype(np.float32).reshape((rows,) + shapes[names[0]][1:])
            row = 0
            for name in names:
                rows = shapes[name][0]
                params["%d.%s" % (i, name)] = value[row:row + rows].reshape(shapes[name])
                row += rows
            used.add(key)
    unused = sorted(set(state) - used)
    if unused:
        raise StateDictError("state_dict keys no layer of the description takes: %s" % unused)
    return config, params


def export_state_dict(config, params, layers):
    """{PyTorch name: float32 array} from a model's config and params (the inverse of
    import_state_dict with the same description, whose layers must match `config`)."""
    layers = _checked(layers)
    if [list(e["layer"]) for e in layers] != [list(s) for s in config]:
        raise StateDictError("the description's layers %s are not the model's %s"
                             % ([e["layer"] for e in layers], config))
    state = {}
    for i, entry in enumerate(layers):
        for key, names, torch_shape in _links(entry):
            parts = []
            for name in names:
                full = "%d.%s" % (i, name)
                if full not in params:
                    raise StateDictError("the model has no parameter %s" % full)
                parts.append(np.asarray(params[full], dtype=np.float32))
            state[key] = np.concatenate(parts).reshape(torch_shape)
    return state


def check_flow(config):
    """The model's input width, after its shapes were followed through every layer
    (device/tinyattn/flow.py); StateDictError naming the first layer that disagrees."""
    for i, spec in enumerate(config):
        param_shapes(spec)  # each entry's own arguments first
    try:
        return device_module("nn/flow").follow(config)[0]
    except (TypeError, ValueError, IndexError) as err:
        raise StateDictError("the description: %s" % err) from None


def _checked(layers):
    if not isinstance(layers, list) or not all(isinstance(e, dict) and "layer" in e
                                               for e in layers):
        raise StateDictError('the description must be a list of {"prefix": ..., "layer": '
                             '[kind, ...]} entries, one a layer in model order')
    return layers


def import_npz(npz_path, layers, model_path):
    """Write the model file `model_path` from a .npz state_dict; returns the config."""
    state = read_state_dict(npz_path)
    config, params = import_state_dict(state, layers)
    modelfile.write_model(model_path, SEQUENTIAL, {"config": config, "torch": layers}, params)
    return config


def export_npz(model_path, npz_path, layers=None):
    """Write a .npz state_dict from a model file (saved by import_npz, or by the device's
    save()); `layers` defaults to the description import_npz kept in the file."""
    kind, meta, arrays = modelfile.read_model(model_path)
    if kind != SEQUENTIAL:
        raise StateDictError("%s holds a %r model, not a %r one" % (model_path, kind, SEQUENTIAL))
    if layers is None:
        layers = meta.get("torch")
        if layers is None:
            raise StateDictError("%s keeps no description (saved on the device?): give the "
                                 "layers description" % model_path)
    state = export_state_dict(meta["config"], arrays, layers)
    np.savez(npz_path, **state)
    return state


def read_description(path):
    """The description from a JSON file (a syntax error names the file and line)."""
    return read_json(path)
