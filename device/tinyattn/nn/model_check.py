"""A float model's config checked against its arrays, before anything is allocated: the one
check of every way a float model arrives (store.load, the link's LOAD_MODEL, the host's
check-model and export-torch) and of what store.save writes.

Plain Python (no ulab, no micropython), shared with the host. Every problem is a ValueError
naming the config entry, the array or the layer whose sizes disagree.
"""

from .flow import follow
from .spec import model_shapes


def check_model(config, shapes):
    """ValueError unless `shapes` ({name: shape}; anything other than a tuple for an array
    that is not float32) are exactly the parameters of `config` and its layers fit together
    (flow.follow: each takes the rows the one before it gives)."""
    wanted = model_shapes(config)
    names = sorted(name for name, _ in wanted)
    if not isinstance(shapes, dict) or sorted(shapes) != names:
        raise ValueError("the model needs arrays %s, got %s"
                         % (names, sorted(shapes) if isinstance(shapes, dict) else shapes))
    for name, shape in wanted:
        if shapes[name] != shape:
            raise ValueError("array %s must be float32 of shape %r, got %r"
                             % (name, shape, shapes[name]))
    follow(config)
