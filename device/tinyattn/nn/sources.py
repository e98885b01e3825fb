"""Where an attention call takes its keys and values from: PyTorch's (query, key, value).

Plain Python (no ulab): the device's Attention and the host reference decide alike
(tinyattn_host.reference.attention loads this very file). The distinct inputs of a call are
[x] (self-attention: key = value = x), [x, kv] (one source for keys and values, the old
`kv=`), or x and a separate key and value; `roles` says which of them each one is.
"""


def attention_sources(x, kv=None, key=None, value=None):
    """(key source, value source, (key role, value role)): a role is the index of that
    source among the call's distinct inputs [x, ...]. A source that *is* x (or is the key)
    shares its gradient; ValueError for kv with key or value, or a value without a key."""
    if kv is not None:
        if key is not None or value is not None:
            raise ValueError("give kv= (the keys' and values' one source) or key= and value=, "
                             "not both")
        key = value = kv
    elif value is not None and key is None:
        raise ValueError("value= needs key= too (PyTorch's query, key, value)")
    if key is None:
        return x, x, (0, 0)
    if value is None:
        value = key
    key_role = 0 if key is x else 1
    if value is x:
        value_role = 0
    elif value is key:
        value_role = key_role
    else:
        value_role = key_role + 1
    return key, value, (key_role, value_role)
