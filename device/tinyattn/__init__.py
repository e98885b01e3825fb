"""tinyattn: multi-head self-attention that trains and runs on MicroPython with ulab."""

__version__ = "0.1.0"

from .attention import Attention, padding_mask  # noqa: E402,F401

# Every other public name, and the submodule it comes from. Imported on first use (module
# __getattr__), so `import tinyattn` costs the heap of the Attention layer only. Keywords, not
# string keys: keywords are interned, and MicroPython's dir() and Tab completion find a name
# only by asking __getattr__ for every name the interpreter has interned.
# `demo` comes from iris_demo: a module named demo would take the function's place.
LAZY = dict(
    Dense="layers", Activation="layers", Tokens="layers", SelfAttention="layers",
    GlobalAvgPool="layers", Sequential="layers",
    cross_entropy="losses", SGD="optim", Adam="optim",
    Dataset="data", load_iris="data",
    iris_model="model", train_step="model", train="model", evaluate="model", predict="model",
    save="store", load="store", demo="iris_demo",
    LayerNorm="layernorm", PositionalEmbedding="positional", Gelu="gelu",
    TransformerEncoderLayer="encoder",
)
_submodules = None


def __getattr__(name):
    """A name of LAZY, or a submodule (`from tinyattn import bench`: MicroPython asks here
    first); AttributeError for any other name, which imports nothing."""
    module = LAZY.get(name)
    if module is not None:
        value = getattr(__import__("tinyattn." + module, None, None, [name]), name)
    elif name in _files():
        value = __import__("tinyattn." + name, None, None, [name])
    else:
        raise AttributeError("module 'tinyattn' has no attribute '%s'" % name)
    globals()[name] = value
    return value


def _files():
    """The submodule names: the package folder's .py and .mpy files (read once)."""
    global _submodules
    if _submodules is None:
        import os

        try:
            _submodules = {f.rsplit(".", 1)[0] for f in os.listdir(__path__)
                           if f.endswith((".py", ".mpy")) and not f.startswith("_")}
        except (OSError, NameError):  # a frozen package: `import tinyattn.x` still works
            _submodules = set()
    return _submodules
