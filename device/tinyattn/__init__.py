"""tinyattn: multi-head self-attention that trains and runs on MicroPython with ulab."""

__version__ = "0.1.0"

from .attention import Attention, padding_mask  # noqa: E402,F401

# Every other public name, and the submodule it comes from. Imported on first use (module
# __getattr__), so `import tinyattn` costs the heap of the Attention layer only. No other name
# imports anything: MicroPython's dir() and Tab completion ask __getattr__ for every name it
# has interned (keywords, not string keys: keywords are interned, so dir() finds them all).
# Submodules are attributes once imported: `import tinyattn.bench` (`from tinyattn import
# bench` and `from . import bench` raise AttributeError while it is not).
# `demo` comes from iris_demo: a module named demo would take the function's place.
LAZY = dict(
    Dense="layers", Activation="layers", Tokens="layers", SelfAttention="layers",
    GlobalAvgPool="layers", Sequential="layers",
    cross_entropy="losses", SGD="optim", Adam="optim",
    Dataset="data", load_iris="data",
    iris_model="model", train_step="model", train="model", evaluate="model", predict="model",
    save="store", load="store", demo="iris_demo",
)


def __getattr__(name):
    """A name of LAZY, imported from its submodule; AttributeError for any other name."""
    module = LAZY.get(name)
    if module is None:
        raise AttributeError("module 'tinyattn' has no attribute '%s'" % name)
    value = getattr(__import__("tinyattn." + module, None, None, [name]), name)
    globals()[name] = value
    return value
