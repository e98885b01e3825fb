"""tinyattn: multi-head self-attention that trains and runs on MicroPython with ulab."""

__version__ = "0.1.0"

from .attention import Attention, padding_mask  # noqa: E402,F401

# The rest is imported on first use (module __getattr__), so `import tinyattn` costs the heap
# of the Attention layer only. `tinyattn.demo()` comes from iris_demo: a module named demo
# would take the function's place in the package once imported.
_LAZY = {
    "Dense": "layers", "Activation": "layers", "Tokens": "layers",
    "SelfAttention": "layers", "GlobalAvgPool": "layers", "Sequential": "layers",
    "cross_entropy": "losses", "SGD": "optim", "Adam": "optim",
    "Dataset": "data", "load_iris": "data",
    "iris_model": "model", "train_step": "model", "train": "model", "evaluate": "model",
    "predict": "model", "save": "store", "load": "store", "demo": "iris_demo",
    "LayerNorm": "layernorm", "PositionalEmbedding": "positional", "Gelu": "gelu",
    "TransformerEncoderLayer": "encoder",
}


def __getattr__(name):
    """Import the submodule that defines `name` (see _LAZY) and return it."""
    module = _LAZY.get(name)
    if module is None:  # `from . import submodule` asks here first
        try:
            return __import__("tinyattn." + name, None, None, [name])
        except ImportError:
            raise AttributeError("module 'tinyattn' has no attribute %r" % name)
    value = getattr(__import__("tinyattn." + module, None, None, [name]), name)
    globals()[name] = value
    return value
