"""The host's table of layer kinds: each kind is declared once, in its own reference module
(layers.py, attention.py, encoder.py), with `declare`; everything on the host dispatches
through KINDS (sequential.py's forward, backward and int8 runs, interop/statedict.py's PyTorch
names). The parameter names and shapes are the device's own (device/tinyattn/nn/spec.py, read
by device_modules), never restated here.

A declaration gives, for a config entry `spec` = [kind, *args] and its parameters `p`
({name: array}, named as the device names them):

    forward(spec, p, x) -> (y, cache); forward(spec, p, x, mask) too for a kind whose
           device declaration takes a padding mask (takes_mask): mask (B, S) of 0/1
    backward(spec, p, cache, grad_out) -> (dx, {name: gradient})
    torch: {PyTorch name under the entry's prefix ("" for the prefix itself): [tinyattn
           names stacked along axis 0]}; empty for a kind without parameters
    int8: (layer(spec, arrays, prefix) -> layer dict, run(x, layer) -> output), the integer
          reference of the device's int8 layer of that kind (spec: its description());
          run(x, layer, mask) too where forward takes a mask;
          or int8_as: the int8 kind the device quantizes this one into (Gelu: "Activation")
    tied(spec): whether the layer takes the Embedding's weights (a language model's layer 0)
          instead of its own (a tied Classifier); False unless given
    int8_step: a language model's kinds instead (they run a position at a time): step(x,
          q, arrays, prefix, cache, pos) -> its int8 output (int8_lm.py's Int8LM; q its
          description, cache the layer's own: a block's keys and values)

and, of its int8 layer description `q` (the device's description(), int8 kinds only), what its
int8 class answers on the board:
    in_scale(q): the scale of its input (the layer's s_x unless given)
    out_scale(q): the scale of its output, out_scale() (s_y unless given; an int32 output's is
           its accumulator's)
    in_rows(q): the rows of one sample its input takes, where it is a model's first layer (1
           unless given)
    in_width(q, after): the width of its input rows, where it fixes it; after() is the width
           the layers after it take (None: not fixed); None (the default) when it does not

and, for the host quantizer (tinyattn_host/quantize, which imports this package: the roles
name its functions, "module.function", imported on first use by `quantizer`):
    quantize: its int8 class's quantize, (spec, p, stats, s_x, s_y, prefix) -> (the int8
           layer's description, its arrays); None: no int8 form of its own
    calibrate: (spec, p, x, mask) -> (y, {name: max |.|}) of its output ("out") and of what
           else its quantize takes (an attention's Q, K, V; an encoder layer's intermediates);
           None (the default): its forward, and max |.| of its output
"""

import importlib


from ..device_modules import device_module

KINDS = {}


class Kind:
    """One layer kind's host declaration (the module docstring says what each part is)."""

    def __init__(self, name, forward, backward, torch=None, int8=None, int8_as=None,
                 in_scale=None, out_scale=None, in_width=None, in_rows=None, quantize=None,
                 calibrate=None, int8_step=None, tied=None):
        self.name, self.forward, self.backward = name, forward, backward
        self.torch = dict(torch or {})
        self.int8, self.int8_as = int8, int8_as or (name if int8 else None)
        self.int8_step, self.tied = int8_step, tied or (lambda spec: False)
        self.in_scale = in_scale or (lambda q: q["s_x"])
        self.out_scale = out_scale or (lambda q: q["s_y"])
        self.in_width = in_width or (lambda q, after: None)
        self.in_rows = in_rows or (lambda q: 1)
        self.quantize, self.calibrate = quantize, calibrate


def declare(name, forward, backward, **roles):
    """Declare kind `name` (module docstring: torch, int8, int8_as, int8_step, tied, in_scale,
    out_scale, in_width, in_rows, quantize, calibrate by name); returns its Kind."""
    if name in KINDS:
        raise ValueError("layer kind %r is declared twice" % name)
    KINDS[name] = Kind(name, forward, backward, **roles)
    return KINDS[name]


def kind(name):
    """The Kind of a config or int8 spec kind; ValueError naming the known ones."""
    found = KINDS.get(name) if isinstance(name, str) else None
    if found is None:
        raise ValueError("unknown layer kind %r (known: %s)" % (name, ", ".join(sorted(KINDS))))
    return found


def quantizer(role):
    """The function a quantize or calibrate role names ("module.function" of
    tinyattn_host.quantize), imported now."""
    module, name = role.rsplit(".", 1)
    return getattr(importlib.import_module("..quantize." + module, __package__), name)


def device_spec():
    """The device's plain table of every kind's parameters (device/tinyattn/nn/spec.py)."""
    return device_module("nn/spec")


def full_entry(entry):
    """A config entry with its defaults filled in (the device's own nn/spec.py): a file may
    leave out trailing arguments, as a constructor call may."""
    spec = device_spec()
    return [entry[0]] + list(spec.arguments(spec.kind_of(entry[0]), list(entry[1:])))


def param_shapes(spec):
    """{parameter name: shape} of one config entry: the device's table."""
    return dict(device_spec().layer_shapes(spec))


def takes_mask(name):
    """Whether kind `name` takes a padding mask: the device's declaration says (spec.py)."""
    spec = device_spec()
    return bool(spec.role(name, spec.TAKES_MASK))


def stream_role(name):
    """Kind `name`'s role in a stream (the device's declaration, STREAM in spec.py): "skip",
    "row", "position", "cache", "pool", or None."""
    spec = device_spec()
    return spec.role(name, spec.STREAM)


def device_kinds():
    """Every layer kind the device knows."""
    return sorted(device_spec().KINDS)


def layer_params(params, index, spec):
    """{name: params["<index>.<name>"]} for the parameters the device gives layer `spec`."""
    return {n: params.get("%d.%s" % (index, n)) for n in param_shapes(spec)}
