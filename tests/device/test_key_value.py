"""Separate key and value on the device (Attention.forward(x, S, key=, value=)) against the
reference, which tests/host/test_reference_key_value.py holds to PyTorch's
nn.MultiheadAttention: the output, the gradient of each distinct input and of every weight;
the old kv= unchanged; bad sources refused (tests/board/case_key_value.py)."""

import numpy as np

from board_cases import board_test
from checks import f32
from tinyattn_host.reference.attention import (attention_backward, attention_forward,
                                               input_grads)

E, H, S, S_KV, B = 8, 2, 5, 3, 2
CASES = {"separate": ("key", "value"), "key_is_x": ("x", "value"), "value_is_key": ("key", "key")}


def make_fixtures():
    rng = np.random.default_rng(2124)
    fixtures = {}
    for name, (k, v) in CASES.items():
        p = {n: f32(rng.standard_normal((E, E)) * 0.4) for n in ("Wq", "Wk", "Wv", "Wo")}
        p.update({n: f32(rng.standard_normal(E) * 0.2) for n in ("bq", "bk", "bv", "bo")})
        rows = B * (S if k == "x" else S_KV)
        arrays = {"x": f32(rng.standard_normal((B * S, E))),
                  "key": f32(rng.standard_normal((rows, E))),
                  "value": f32(rng.standard_normal((rows, E)))}
        mask = np.ones((B, rows // B))
        mask[0, -1] = 0.0
        G = f32(rng.standard_normal((B * S, E)))
        x = arrays["x"]
        y, cache = attention_forward(x, p, H, S, mask=mask, key=arrays[k], value=arrays[v])
        g = attention_backward(G, p, cache)
        fixtures[name] = dict(p, x=x, key=arrays[k], value=arrays[v], mask=mask, G=G, y=y,
                              sources=[k, v], inputs=len(input_grads(g)),
                              **{"d%d" % i: d for i, d in enumerate(input_grads(g))},
                              **{"d" + n: g["d" + n] for n in p})
    return fixtures


test_key_value_on_board = board_test("case_key_value", make_fixtures)
