"""Every layer kind, declared once: its constructor's arguments and their checks, its
parameters (names, shapes), the modules of its float and int8 classes.

Plain Python (no ulab, no micropython). One declaration serves everything: a layer's
constructor checks its arguments with it (Layer.arguments) and its config() repeats them, store
and the link check a config entry with it before anything is allocated, layer.build finds the
class, the int8 path its int8 class, tinyattn.X the public name; the host loads this very file
(tinyattn_host.device_modules.device_module("nn/spec")). docs/layer-kinds.md adds a kind step by step.
"""

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import checks  # noqa: F401
from .arguments import (choice, decoder_heads, dim, flag, fraction, heads_divide,
                        kv_heads_divide, optional_dim, positive)

REQUIRED = "<required>"
"""The default of an argument that has none (a config entry or a call must give it)."""

KINDS = {}
"""Every layer kind a config may name -> its declaration (declare fills it)."""


NAME, MODULE, ARGS, PARAMS, CHECK, SEEDED, INT8, FLOW, TAKES_MASK, STREAM = range(10)
"""The fields of a declaration, a tuple (a tuple takes less heap than an object):
NAME: its class's name, the first item of its config entries; MODULE: the module that defines
the class (".layers": tinyattn.nn.layers); ARGS: name, check, default of each constructor
argument in order, one flat tuple (check(name, value) -> the value, ValueError naming it);
PARAMS(*args) -> [(name, shape)] of its
parameters, or None; CHECK(*args): what the arguments' own checks cannot say, or None;
SEEDED: the constructor takes seed=; INT8: "module.Class" of its int8 form (".layers.QDense":
in tinyattn.int8; int8/layers.py the contract, int8/classes.py its schema and conversion),
or None; FLOW: what the layer does to the shapes of the
rows it gets, (step, argument index) pairs that flow.py follows ("features": its input rows
have that many features; "out": its output rows have that many; "tokens": it works on
sequences of that many tokens, an argument None says nothing; "split": Tokens; "pool": a
sequence becomes one row); TAKES_MASK: its forward(x, training, mask) takes a padding mask
(B, S) of 0/1 (takes_mask(layer)); STREAM: its role in a stream, one token at a time
(nn/stream.py, int8/stream.py): "skip" (a frame is one token already), "row" (its forward on the
one row), "position" (adds row t of its table), "cache" (a causal encoder layer: a key/value
cache of the last W tokens), "pool" (the mean of its last W input rows), or None (a stream
cannot run it). Modules are imported on first use, so a model pays the heap of the kinds it
uses only."""


def declare(name, module, args=(), params=None, check=None, seeded=False, int8=None, flow=(),
            takes_mask=False, stream=None):
    """Declare a layer kind (the fields above) and register it in KINDS; returns it."""
    KINDS[name] = kind = (name, module, args, params, check, seeded, int8, flow, takes_mask,
                          stream)
    return kind


def role(name, field):
    """Field `field` of kind `name`'s declaration; None for a kind not declared."""
    kind = KINDS.get(name)
    return None if kind is None else kind[field]


def takes_mask(layer):
    """Whether a layer (of a declared kind) takes a padding mask in its forward."""
    return bool(role(type(layer).__name__, TAKES_MASK))


def kind_of(name):
    """The declaration of a config's kind name; ValueError naming the known ones for another."""
    kind = KINDS.get(name) if isinstance(name, str) else None
    if kind is None:
        raise ValueError("unknown layer kind %r in the model config (known: %s)"
                         % (name, ", ".join(sorted(KINDS))))
    return kind


def arguments(kind, args, named=None):
    """The arguments of a constructor call (args, then `named` by name) or of a config entry
    of the declared `kind`, completed with the defaults and checked; ValueError naming the
    problem."""
    declared = kind[ARGS]
    if 3 * len(args) > len(declared):
        raise ValueError(usage(kind))
    values = list(args)
    for i in range(3 * len(args), len(declared), 3):
        name, default = declared[i], declared[i + 2]
        value = named.pop(name, default) if named else default
        if value is REQUIRED:
            raise ValueError(usage(kind))
        values.append(value)
    if named:
        raise ValueError("%s has no argument %s (or it was given twice)"
                         % (kind[NAME], ", ".join(sorted(named))))
    for i in range(len(values)):
        values[i] = declared[3 * i + 1](declared[3 * i], values[i])
    if kind[CHECK] is not None:
        kind[CHECK](*values)
    return values


def usage(kind):
    args = kind[ARGS]
    return "must be [%r%s]" % (kind[NAME], "".join(", " + args[i] for i in range(0, len(args), 3)))


def module_of(name, package):
    """A declaration's module name: ".x" is package + ".x" (tinyattn.nn or tinyattn.int8)."""
    return package + name if name[0] == "." else name


def layer_shapes(spec):
    """[(name, shape)] of one config entry [kind, *args]; ValueError when it is not valid."""
    if not isinstance(spec, (list, tuple)) or not spec:
        raise ValueError("a layer config must be [kind, *args], got %r" % (spec,))
    kind = kind_of(spec[0])
    values = arguments(kind, spec[1:])
    return kind[PARAMS](*values) if kind[PARAMS] is not None else []


def model_shapes(config):
    """[(name, shape)] of the parameters a Sequential of `config` has, named as its
    collect_params() names them; ValueError naming the config entry that is not valid."""
    if not isinstance(config, (list, tuple)) or not config:
        raise ValueError("the model config must be a non-empty list of layer entries, got %r"
                         % (config,))
    shapes = []
    for i, spec in enumerate(config):
        try:
            for name, shape in layer_shapes(spec):
                shapes.append(("%d.%s" % (i, name), shape))
        except (TypeError, ValueError) as err:
            raise ValueError("config entry %d: %r: %s" % (i, spec, err))
    return shapes


# ---- the kinds ---------------------------------------------------------------------------
def _dense(n_in, n_out, use_bias):
    return [("W", (n_out, n_in))] + ([("b", (n_out,))] if use_bias else [])


def _attention(E, H, S, use_bias, dropout=0.0, checkpoint=False, num_kv_heads=None):
    """Wq, Wo (E, E); Wk, Wv (E_kv, E), E_kv = num_kv_heads * E/H (E without it); biases."""
    E_kv = E // H * (num_kv_heads or H)
    rows = {"q": E, "k": E_kv, "v": E_kv, "o": E}
    return [("W" + n, (rows[n], E)) for n in "qkvo"] + (
        [("b" + n, (rows[n],)) for n in "qkvo"] if use_bias else [])


def _attention_check(E, H, S, use_bias, dropout, checkpoint, num_kv_heads=None):
    heads_divide(E, H)
    kv_heads_divide(H, num_kv_heads)


def _norm(E, eps):
    return [("gamma", (E,)), ("beta", (E,))]


def _activation_kind(name, value):
    """Activation's kind; "gelu", its name before "gelu_tanh", loads as the tanh form."""
    return _ACTIVATION(name, "gelu_tanh" if value == "gelu" else value)


def _encoder(E, H, F, dropout, act, norm_first, eps, S, causal, num_kv_heads=None):
    """Its parts' parameters, named "<part>.<name>" as collect_params() names them."""
    parts = (("self_attn", _attention(E, H, S, True, num_kv_heads=num_kv_heads)),
             ("linear1", _dense(E, F, True)),
             ("linear2", _dense(F, E, True)), ("norm1", _norm(E, eps)), ("norm2", _norm(E, eps)))
    return [(part + "." + name, shape) for part, shapes in parts for name, shape in shapes]


def _encoder_check(E, H, F, dropout, act, norm_first, eps, S, causal, num_kv_heads=None):
    heads_divide(E, H)
    kv_heads_divide(H, num_kv_heads)


def _swiglu(E, F):
    return [("w1", (F, E)), ("w2", (E, F)), ("w3", (F, E))]


def _decoder(E, H, H_kv, F, S, eps, rope, theta):
    """Llama's block, named as Meta's checkpoints name it (attention.wq, feed_forward.w1)."""
    D = E // H
    parts = (("attention_norm", [("gamma", (E,))]),
             ("attention", [("wq", (H * D, E)), ("wk", (H_kv * D, E)), ("wv", (H_kv * D, E)),
                            ("wo", (E, H * D))]),
             ("ffn_norm", [("gamma", (E,))]), ("feed_forward", _swiglu(E, F)))
    return [(part + "." + name, shape) for part, shapes in parts for name, shape in shapes]


ROPE_STYLES = ("pairs", "half")  # llama2.c's (2i, 2i+1) pairs; Hugging Face's (i, i + D/2)
ACTIVATIONS = ("relu", "gelu_tanh", "tanh", "sigmoid")  # Activation's kinds
_ACTIVATION = choice(ACTIVATIONS)
ENCODER_ACTIVATIONS = ("relu", "gelu")  # TransformerEncoderLayer's (gelu: the erf form)
EPS = 1e-5  # LayerNorm's default eps, as PyTorch's

declare("Dense", ".layers",
        ("in_features", dim, REQUIRED, "out_features", dim, REQUIRED, "use_bias", flag, True),
        _dense, seeded=True, int8=".layers.QDense", flow=(("features", 0), ("out", 1)), stream="row")
declare("Activation", ".layers", ("kind", _activation_kind, REQUIRED),
        int8=".layers.QActivation", stream="row")
declare("Tokens", ".layers", ("seq_len", dim, REQUIRED), int8=".layers.QTokens",
        flow=(("split", 0),), stream="skip")
declare("SelfAttention", ".layers",
        ("embed_dim", dim, REQUIRED, "num_heads", dim, REQUIRED, "seq_len", dim, REQUIRED,
         "use_bias", flag, True, "dropout", fraction, 0.0, "checkpoint", flag, False,
         "num_kv_heads", optional_dim, None),
        _attention, _attention_check, seeded=True, int8=".attention.QAttention",
        flow=(("features", 0), ("tokens", 2)), takes_mask=True)
declare("GlobalAvgPool", ".layers", ("seq_len", dim, REQUIRED), int8=".layers.QGlobalAvgPool",
        flow=(("tokens", 0), ("pool", 0)), takes_mask=True, stream="pool")
declare("LayerNorm", ".norm", ("normalized_shape", dim, REQUIRED, "eps", positive, EPS),
        _norm, int8=".norm.QLayerNorm", flow=(("features", 0),), stream="row")
declare("PositionalEmbedding", ".positional",
        ("seq_len", dim, REQUIRED, "embed_dim", dim, REQUIRED),
        lambda S, E: [("P", (S, E))], seeded=True, int8=".norm.QPositional",
        flow=(("tokens", 0), ("features", 1)), stream="position")
declare("Gelu", ".gelu", int8=".layers.QActivation", stream="row")
declare("TransformerEncoderLayer", ".encoder",
        ("d_model", dim, REQUIRED, "nhead", dim, REQUIRED, "dim_feedforward", dim, REQUIRED,
         "dropout", fraction, 0.0, "activation", choice(ENCODER_ACTIVATIONS), "relu",
         "norm_first", flag, False, "layer_norm_eps", positive, EPS,
         "seq_len", optional_dim, None, "causal", flag, False,
         "num_kv_heads", optional_dim, None),
        _encoder, _encoder_check, seeded=True, int8=".encoder.QTransformerEncoderLayer",
        flow=(("features", 0), ("tokens", 7)), takes_mask=True, stream="cache")
declare("Embedding", ".embedding", ("num_embeddings", dim, REQUIRED, "embedding_dim", dim, REQUIRED),
        lambda V, E: [("W", (V, E))], seeded=True, int8=".lm.QEmbedding", flow=(("out", 1),))
declare("RMSNorm", ".rmsnorm", ("dim", dim, REQUIRED, "eps", positive, EPS),
        lambda E, eps: [("gamma", (E,))], int8=".decoder.QRMSNorm", flow=(("features", 0),))
declare("SwiGLU", ".swiglu", ("dim", dim, REQUIRED, "hidden_dim", dim, REQUIRED), _swiglu,
        seeded=True, flow=(("features", 0),))
declare("DecoderBlock", ".decoder",
        ("dim", dim, REQUIRED, "n_heads", dim, REQUIRED, "n_kv_heads", dim, REQUIRED,
         "hidden_dim", dim, REQUIRED, "seq_len", dim, REQUIRED, "eps", positive, EPS,
         "rope", choice(ROPE_STYLES), "pairs", "theta", positive, 10000.0),
        _decoder, decoder_heads, seeded=True, int8=".decoder.QDecoderBlock",
        flow=(("features", 0),))
declare("Classifier", ".embedding", ("dim", dim, REQUIRED, "vocab_size", dim, REQUIRED,
                                     "tied", flag, False),
        lambda E, V, tied: [] if tied else [("W", (V, E))], seeded=True,
        int8=".lm.QClassifier", flow=(("features", 0), ("out", 1)))
