"""tinyattn: multi-head self-attention that trains and runs on MicroPython with ulab."""

__version__ = "0.1.0"

# Every public name, and the submodule it comes from. Imported on first use (module
# __getattr__), so `import tinyattn` costs almost nothing and an int8 model pays for no
# float layer. Keywords, not
# string keys: keywords are interned, and MicroPython's dir() and Tab completion find a name
# only by asking __getattr__ for every name the interpreter has interned. So the layer kinds
# are named here too, with their class's module, which dir() then imports without the kinds'
# declarations: their lines are written from nn/spec.py by the host (tinyattn_host/
# lazy_names.py says why not derived here; tests/host/test_lazy_names.py holds them equal); a
# kind declared at run time is found through the declarations.
# `demo` comes from iris_demo and `train` from training: a submodule named like a function
# would take the function's place (importing a submodule sets the package's attribute).


class _Names:
    """LAZY: name -> submodule (get, items, iteration, len); its repr, which help(tinyattn)
    prints, is one name a line. (A dict subclass would print as a dict there.)"""

    def __init__(self, **names):
        self.names = names
        self.files = None  # the submodule names, read once by submodules()

    def get(self, name, default=None):
        return self.names.get(name, default)

    def items(self):
        return self.names.items()

    def __iter__(self):
        return iter(self.names)

    def __len__(self):
        return len(self.names)

    def submodules(self):
        """The submodule names: the package folder's .py and .mpy files and its subpackage
        folders (read once)."""
        if self.files is None:
            import os

            try:
                self.files = {f.rsplit(".", 1)[0] for f in os.listdir(__path__)
                              if (f.endswith((".py", ".mpy")) or "." not in f)
                              and not f.startswith("_")}
            except (OSError, NameError):  # a frozen package: `import tinyattn.x` still works
                self.files = set()
        return self.files

    def __repr__(self):
        return "the public names, each imported on first use:" + "".join(
            "\n    %-24s tinyattn.%s" % (name, self.names[name]) for name in sorted(self.names))


LAZY = _Names(
    # the layer kinds (nn/spec.py), written by `python -m tinyattn_host.lazy_names`:
    Dense="nn.layers", Activation="nn.layers", Tokens="nn.layers", SelfAttention="nn.layers",
    GlobalAvgPool="nn.layers", LayerNorm="nn.norm", PositionalEmbedding="nn.positional",
    Gelu="nn.gelu", TransformerEncoderLayer="nn.encoder", Embedding="nn.embedding",
    RMSNorm="nn.rmsnorm", SwiGLU="nn.swiglu", DecoderBlock="nn.decoder", Classifier="nn.embedding",
    # (the layer kinds end)
    Attention="nn.attention",
    generate="lm.generate", generate_text="lm.generate", read_tokenizer="lm.tokenizer",
    finetune="lm.finetune",
    scaled_dot_product_attention="nn.sdpa", scaled_dot_product_attention_backward="nn.sdpa_grad",
    padding_mask="nn.masks", Sequential="nn.sequential", cross_entropy="nn.losses", SGD="nn.optim", Adam="nn.optim",
    Dataset="datasets.dataset", load_iris="datasets.dataset",
    iris_model="training", train_step="training", train="training", evaluate="training",
    predict="training", save="store", load="store", demo="iris_demo",
)
del _Names


class _Lookup:
    """The package's __getattr__ (MicroPython calls it with a name the package lacks): a
    callable whose repr, which help(tinyattn) prints, is one line, not a function's address."""

    def __call__(self, name):
        """A name of LAZY, a layer kind declared at run time, or a submodule (`from tinyattn
        import bench`: MicroPython asks here first); AttributeError for any other name, which
        imports nothing."""
        module = LAZY.get(name)
        spec = None if module else __import__("sys").modules.get("tinyattn.nn.spec")
        if spec is not None and name in spec.KINDS:
            from .nn.layer import layer_class

            value = layer_class(name)
        elif module is not None:
            value = getattr(__import__("tinyattn." + module, None, None, [name]), name)
        elif name in LAZY.submodules():
            value = __import__("tinyattn." + name, None, None, [name])
        else:
            raise AttributeError("module 'tinyattn' has no attribute '%s'" % name)
        globals()[name] = value
        return value

    def __repr__(self):
        return "(finds each name of LAZY, and each submodule, on first use)"


__getattr__ = _Lookup()
del _Lookup
