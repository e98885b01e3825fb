"""The keys' and values' sources of an Attention call that has kv=, key= or value=, checked.

Imported only by such calls, so self-attention pays none of its heap."""

from .checks import require_2d, require_rows
from .sources import attention_sources


def key_value(x, B, E, kv, kv_len, key, value):
    """(key, value, roles, kv_len) for queries x of B sequences (nn/sources.py's roles);
    ValueError naming what does not fit."""
    key, value, roles = attention_sources(x, kv, key, value)
    if roles == (0, 0):
        return key, value, roles, x.shape[0] // B
    name = "kv" if kv is not None else "key"
    rows, _ = require_2d(name, key, E)
    if kv_len is None and rows % B:
        raise ValueError("%s has %d rows: not one sequence of keys for each of the %d of x"
                         % (name, rows, B))
    kv_len = rows // B if kv_len is None else kv_len
    if require_rows(name, rows, kv_len) != B:
        raise ValueError("%s holds %d sequences of %d, x holds %d"
                         % (name, rows // kv_len, kv_len, B))
    if getattr(value, "shape", None) != key.shape:
        raise ValueError("value must have the key's shape %r, got %r"
                         % (key.shape, getattr(value, "shape", None)))
    return key, value, roles, kv_len
