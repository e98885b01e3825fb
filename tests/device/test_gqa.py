"""Grouped-query attention in the layers (issue 35): Attention(64, 8, num_kv_heads=2) forward
and backward against the NumPy reference; a causal GQA encoder in a Sequential (logits, every
gradient); its Stream against the full causal forward, with a cache a quarter of the
num_kv_heads=8 one (tests/board/case_gqa.py)."""

import numpy as np

from board_cases import board_test
from checks import f32
from stream_models import noisy
from tinyattn_host.digits import init_params
from tinyattn_host.reference import attention_backward, attention_forward
from tinyattn_host.reference.sequential import sequential_backward, sequential_forward

E, H, H_KV, B, S = 64, 8, 2, 2, 6
PARAMS = ("Wq", "Wk", "Wv", "Wo", "bq", "bk", "bv", "bo")
S_MODEL, F = 5, 3
ENCODER = [["Tokens", S_MODEL], ["Dense", F, 16, True], ["PositionalEmbedding", S_MODEL, 16],
           ["TransformerEncoderLayer", 16, 4, 24, 0.0, "gelu", True, 1e-5, S_MODEL, True, 1],
           ["GlobalAvgPool", S_MODEL], ["Dense", 16, 3, True]]
"""A pooled causal classifier whose encoder has one key/value head for its 4 query heads."""
W = 8
STREAM = [["Dense", F, E, True], ["PositionalEmbedding", W, E],
          ["TransformerEncoderLayer", E, H, 128, 0.0, "relu", False, 1e-5, W, True, H_KV]]
"""Attention(64, 8, num_kv_heads=2) inside a causal encoder, an output per token."""


def attention_fixture(rng):
    E_kv = E // H * H_KV
    p = {n: f32(rng.standard_normal((E_kv if n in ("Wk", "Wv") else E, E)) / 8)
         for n in PARAMS if n[0] == "W"}
    p.update({n: f32(0.1 * rng.standard_normal(E_kv if n in ("bk", "bv") else E))
              for n in PARAMS if n[0] == "b"})
    x, G = f32(rng.standard_normal((B * S, E))), f32(rng.standard_normal((B * S, E)))
    mask = np.array([[1, 1, 1, 1, 0, 0], [0, 1, 1, 1, 1, 1]], dtype=np.float64)
    y, cache = attention_forward(x, p, H, S, mask=mask, causal=True, num_kv_heads=H_KV)
    g = attention_backward(G, p, cache)
    want = {"y": y, "dx": g["dx"]}
    want.update(("d" + n, g["d" + n]) for n in PARAMS)
    return dict(p, x=x, G=G, mask=mask, **{"want_" + k: v for k, v in want.items()})


def encoder_fixture(rng):
    params = noisy(init_params(ENCODER, 35), rng)
    x = f32(rng.standard_normal((3, S_MODEL * F)))
    G = f32(rng.standard_normal((3, 3)))
    y, caches = sequential_forward(ENCODER, params, x)
    dx, grads = sequential_backward(ENCODER, params, caches, G)
    return dict(params, config=ENCODER, x=x, G=G, y=y, dx=dx,
                **{"d" + k: v for k, v in grads.items()})


def stream_fixture(rng):
    params = noisy(init_params(STREAM, 36), rng)
    x = f32(rng.standard_normal((W, F)))
    y, _ = sequential_forward(STREAM, params, x)  # causal: row t is the stream's token t
    return dict(params, config=STREAM, x=x, want=y)


def test_the_layers_have_grouped_heads():
    assert dict(init_params(STREAM, 1))["2.self_attn.Wk"].shape == (E // H * H_KV, E)
    assert init_params(ENCODER, 1)["3.self_attn.Wv"].shape == (4, 16)


def make_fixtures():
    rng = np.random.default_rng(35)
    return {"attention": attention_fixture(rng), "encoder": encoder_fixture(rng),
            "stream": stream_fixture(rng)}


test_gqa_on_board = board_test("case_gqa", make_fixtures)


def test_pytorch_import_refuses_grouped_heads():
    """nn.MultiheadAttention has no grouped-query heads: its import stays as it is and says so."""
    import pytest

    from tinyattn_host.interop import statedict

    entry = {"prefix": "attn", "layer": ["SelfAttention", 8, 4, 3, True, 0.0, False, 2]}
    with pytest.raises(statedict.StateDictError, match="grouped-query heads"):
        statedict.import_state_dict({}, [entry])
    same = {"prefix": "attn", "layer": ["SelfAttention", 8, 4, 3, True, 0.0, False, 4]}
    assert [key for key, _, _ in statedict._links(same)][0] == "attn.in_proj_weight"
