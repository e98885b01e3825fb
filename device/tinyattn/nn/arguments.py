"""The checks of constructor arguments that the kinds' declarations (spec.py) name: each is
check(name, value) -> the value, and raises ValueError naming the argument. Plain Python."""

from .checks import is_int, is_number


def dim(name, value):
    """A size: an int >= 1."""
    if not is_int(value) or value < 1:
        raise ValueError("%s must be an int >= 1, got %r" % (name, value))
    return value


def optional_dim(name, value):
    """None, or a size."""
    return None if value is None else dim(name, value)


def flag(name, value):
    """A switch: True or False."""
    if not isinstance(value, bool):
        raise ValueError("%s must be True or False, got %r" % (name, value))
    return value


def fraction(name, value):
    """A probability that something is dropped: a number in [0, 1)."""
    if not is_number(value) or not 0.0 <= value < 1.0:
        raise ValueError("%s must be in [0, 1), got %r" % (name, value))
    return value


def positive(name, value):
    """A finite number > 0 (an int or a float)."""
    if not is_number(value) or not 0.0 < value < 1e38:
        raise ValueError("%s must be a finite number > 0, got %r" % (name, value))
    return value


def zero(name, value):
    """0.0 only: dropout where there is none (PyTorch's model.eval() has none either)."""
    if not is_number(value) or value != 0.0:
        raise ValueError("%s must be 0.0 (there is no dropout here), got %r" % (name, value))
    return value


def choice(options):
    """The check that a value is one of `options`."""
    def check(name, value):
        if value not in options:
            raise ValueError("%s must be one of %s, got %r" % (name, ", ".join(options), value))
        return value
    return check


def heads_divide(embed_dim, num_heads, *_):
    """Sizes whose heads split the embedding evenly (both named in the message)."""
    if not is_int(embed_dim) or not is_int(num_heads) or embed_dim < 1 or num_heads < 1:
        raise ValueError("embed_dim and num_heads must be ints >= 1, got embed_dim=%r, "
                         "num_heads=%r" % (embed_dim, num_heads))
    if embed_dim % num_heads:
        raise ValueError("embed_dim=%d is not divisible by num_heads=%d" % (embed_dim, num_heads))


def kv_heads_divide(num_heads, num_kv_heads):
    """The key/value heads of grouped-query attention: None (as many as num_heads) or an int
    >= 1 that divides num_heads; returns the count."""
    if num_kv_heads is None:
        return num_heads
    if not is_int(num_kv_heads) or num_kv_heads < 1 or num_heads % num_kv_heads:
        raise ValueError("num_kv_heads must be an int >= 1 that divides num_heads=%r, got %r"
                         % (num_heads, num_kv_heads))
    return num_kv_heads


def decoder_heads(embed_dim, num_heads, num_kv_heads, *_):
    """Heads that split the embedding into even head sizes, and key/value heads that divide
    the query heads (grouped-query attention)."""
    heads_divide(embed_dim, num_heads)
    if num_heads % num_kv_heads:
        raise ValueError("n_kv_heads=%d does not divide n_heads=%d" % (num_kv_heads, num_heads))
    if (embed_dim // num_heads) % 2:
        raise ValueError("the head size %d must be even (rotary positions turn pairs)"
                         % (embed_dim // num_heads))
