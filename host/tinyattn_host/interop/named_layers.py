"""A layers.json entry's "layer" in either form, as the positional config the device reads.

Named:      {"kind": "TransformerEncoderLayer", "d_model": 32, "nhead": 4, "dim_feedforward": 64}
Positional: ["TransformerEncoderLayer", 32, 4, 64]

The names are the layer constructor's own (device/tinyattn/nn/spec.py's ARGS); a name left
out takes the constructor's default. An unknown or missing field is named in one line. One name
differs: Activation's argument is itself called `kind`, so it is "activation" here
({"kind": "Activation", "activation": "relu"}), the entry's "kind" being the layer kind.
"""

from ..device_modules import device_module


class LayerEntryError(ValueError):
    """A named layer entry that no constructor call makes; the message names the field."""


RENAMED = {"kind": "activation"}
"""A constructor argument whose name is the entry's own "kind" field -> its name here."""


def field_names(kind_name):
    """The named form's field names of layer kind `kind_name`, in the constructor's order."""
    spec = device_module("nn/spec")
    return [RENAMED.get(n, n) for n in spec.kind_of(kind_name)[spec.ARGS][0::3]]


def positional(layer):
    """[kind, *args] of a "layer" given by name (a dict) or by position (returned as is)."""
    if not isinstance(layer, dict):
        return layer
    spec = device_module("nn/spec")
    if "kind" not in layer:
        raise LayerEntryError("layer %s has no \"kind\" field (known kinds: %s)"
                              % (_show(layer), ", ".join(sorted(spec.KINDS))))
    kind_name = layer["kind"]
    try:
        declared = spec.kind_of(kind_name)[spec.ARGS]
    except ValueError as err:
        raise LayerEntryError(str(err).replace(" in the model config", "")) from None
    names = field_names(kind_name)
    unknown = sorted(set(layer) - set(names) - {"kind"})
    if unknown:
        raise LayerEntryError("%s has no field %s (its fields: %s)"
                              % (kind_name, ", ".join(map(repr, unknown)), ", ".join(names)))
    values = [kind_name]
    for name, default in zip(names, declared[2::3]):
        value = layer.get(name, default)
        if value is spec.REQUIRED:
            raise LayerEntryError("%s needs field %r (its fields: %s)"
                                  % (kind_name, name, ", ".join(names)))
        values.append(value)
    while values[-1] is None:  # as a layer's config(): trailing arguments at None left out
        values.pop()
    return values


def named(config_entry):
    """{"kind": ..., name: value, ...} of a positional config entry (every argument named)."""
    kind_name, args = config_entry[0], list(config_entry[1:])
    layer = {"kind": kind_name}
    layer.update(zip(field_names(kind_name), args))
    return layer


def _show(layer):
    text = repr(layer)
    return text if len(text) <= 80 else text[:77] + "..."
