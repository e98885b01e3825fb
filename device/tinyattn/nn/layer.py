"""The contract of a float layer, and building a layer from its config entry.

Every layer has `forward(x, training=False)` and `backward(grad_out)` (the gradient of its
input; gradients of parameters accumulate, +=), `collect_params()` -> [(name, param, grad)],
`zero_grad()`, `config()` -> [kind, *constructor arguments] and `clear_caches()`, which drops
what forward kept for backward. `Layer` gives the defaults, and the memory rule of every kind:

- `forward(x, training=False)` keeps nothing: only `training=True` keeps what backward needs.
- Temporaries as large as a weight are not made: a product is done a block of rows of at
  most BLOCK_BYTES at a time (row_blocks).
- Gradient buffers are made on first need: by the first training forward (`grads_first`,
  before its caches: the buffers then sit whole low in the heap, and backward allocates none
  in a heap the caches have cut into pieces), backward, zero_grad or collect_params() (which
  an optimizer takes). A model that is only run (loaded, then forward) has none, so it holds
  its weights only. `collect_params(grads=False)` names the parameters without making them.

The kinds, their arguments and parameters are declared in spec.py (imported on first use, so
`import tinyattn` does not pay for it).
"""


class Layer:
    """Defaults: no parameters, nothing cached; config() from the checked arguments."""

    PARAMS = ()  # the names of its parameter attributes (None for an absent bias); "d" + name
    # is the attribute of each one's gradient

    def arguments(self, args, named=None):
        """The constructor's arguments checked by its kind's declaration (spec.KINDS, by the
        class's name) and completed with the defaults; kept for config()."""
        from .spec import arguments, kind_of

        self.args = arguments(kind_of(type(self).__name__), args, named)
        return self.args

    def config(self):
        """[kind, *arguments]: the config entry that builds this layer again. Trailing
        arguments at None (declared last, such as num_kv_heads) are left out: the entry is
        the one a model without them had."""
        args = list(self.args)
        while args and args[-1] is None:
            args.pop()
        return [type(self).__name__] + args

    def collect_params(self, grads=True):
        """The (name, param, grad) groups an optimizer updates, in PARAMS order; the gradient
        buffers (zeros) are made now if they are not yet. grads=False: none is made, and grad
        is None where there is none yet."""
        groups = []
        for name in self.PARAMS:
            param = getattr(self, name)
            if param is not None:
                grad = getattr(self, "d" + name, None)
                if grad is None and grads:
                    from ulab import numpy as np

                    grad = np.zeros(param.shape)
                    setattr(self, "d" + name, grad)
                groups.append((name, param, grad))
        return groups

    def grads_first(self, training):
        """A forward's first step: when `training`, the gradient buffers not made yet are
        made now, before the forward keeps anything (a fresh layer's first forward + backward
        then fits where a training loop's does)."""
        if training and self.PARAMS and getattr(self, "d" + self.PARAMS[0], None) is None:
            self.collect_params()

    def zero_grad(self):
        """Set every gradient to zero."""
        for _, _, grad in self.collect_params():
            grad[:] = 0.0

    def clear_caches(self):
        """Drop what the last forward kept for backward."""


def layer_class(kind):
    """The class of a config kind (its module imported now); ValueError for an unknown one."""
    from .spec import MODULE, kind_of, module_of

    module = module_of(kind_of(kind)[MODULE], "tinyattn.nn")
    return getattr(__import__(module, None, None, [kind]), kind)


def build(spec, rng):
    """The layer of one config entry [kind, *args]; a seeded one takes seed=rng.next32()."""
    from .spec import SEEDED, kind_of

    if not isinstance(spec, (list, tuple)) or not spec or not isinstance(spec[0], str):
        raise ValueError("a layer config must be [kind, *args], got %r" % (spec,))
    cls = layer_class(spec[0])
    if kind_of(spec[0])[SEEDED]:
        return cls(*spec[1:], seed=rng.next32())
    return cls(*spec[1:])


BLOCK_BYTES = 2048  # the largest temporary a blocked product makes (a block of rows)


def row_blocks(rows, cols):
    """(r0, r1) ranges over `rows` rows of `cols` floats, each block BLOCK_BYTES at most."""
    step = max(1, BLOCK_BYTES // (4 * cols))
    for r0 in range(0, rows, step):
        yield r0, min(r0 + step, rows)
