"""Attention with separate key and value against the reference (relative Frobenius error under
1e-4): the output, each distinct input's gradient, every weight's; kv= equals key = value."""

import check
from tinyattn import Attention

TOL = 1e-4
NAMES = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")


def layer_of(f):
    a = Attention(8, 2, seed=1)
    for n in NAMES:
        getattr(a, n)[:] = f[n]
    return a


def sources(f):
    x = f["x"]
    key = x if f["sources"][0] == "x" else f["key"]
    value = key if f["sources"][1] == "key" else f["value"]
    return x, key, value


def test_key_and_value_match_the_reference():
    for name in ("separate", "key_is_x", "value_is_key"):
        f = check.fixture(name)
        a = layer_of(f)
        x, key, value = sources(f)
        y = a.forward(x, 5, mask=f["mask"], key=key, value=value, training=True)
        check.rel_error_below(y, f["y"], TOL, what=name + " y")
        grads = a.backward(f["G"])
        grads = grads if isinstance(grads, tuple) else (grads,)
        check.equal(len(grads), f["inputs"], name + ": one gradient per distinct input")
        for i, g in enumerate(grads):
            check.rel_error_below(g, f["d%d" % i], TOL, what="%s input %d" % (name, i))
        for n in NAMES:
            scale = f["dbq"] if n == "bk" else f["d" + n]
            check.rel_error_below(getattr(a, "d" + n), f["d" + n], TOL, scale=scale,
                                  what="%s d%s" % (name, n))


def test_kv_is_key_equal_to_value():
    f = check.fixture("value_is_key")
    a, b = layer_of(f), layer_of(f)
    y1 = a.forward(f["x"], 5, mask=f["mask"], kv=f["key"], training=True)
    y2 = b.forward(f["x"], 5, mask=f["mask"], key=f["key"], value=f["key"], training=True)
    check.equal(y1, y2, "kv= and key = value")
    g1, g2 = a.backward(f["G"]), b.backward(f["G"])
    check.equal(g1[0], g2[0], "dx")
    check.equal(g1[1], g2[1], "dkv")


def test_bad_sources_get_a_clear_value_error():
    f = check.fixture("separate")
    a = layer_of(f)
    x, key, value = f["x"], f["key"], f["value"]
    cases = [
        (lambda: a.forward(x, 5, kv=key, key=key), "not both"),
        (lambda: a.forward(x, 5, value=value), "value= needs key="),
        (lambda: a.forward(x, 5, key=key, value=value[:4, :]), "value must have the key's shape"),
        (lambda: a.forward(x, 5, key=key[:5, :], value=value[:5, :]), "key has 5 rows"),
    ]
    for call, words in cases:
        message = check.raises(ValueError, call)
        assert words in message, "%r lacks %r" % (message, words)
