"""The int8 attention layer with grouped K/V heads against the integer reference, bit for bit,
and its stream (tests/device/test_qattention_gqa.py makes the fixtures)."""

import array

import check
from int8_near import near_spec
from tinyattn.int8 import load
from tinyattn.int8.attention_convert import SelfAttention
from tinyattn.int8.attention_schema import SelfAttention as Schema
from tinyattn.int8.stream import QStream

TRACED = (("Q", "Q"), ("K", "K"), ("V", "V"), ("scores", "scores"), ("probs", "probs"),
          ("ctx", "ctx"), ("acc", "y"))


def test_gqa_layer_matches_reference_bit_for_bit():
    qm, f = load(check.path("gqa.bin")), check.fixture("layer")
    layer = qm.layers[0]
    xq = array.array("b", f["xq"])
    for case in f["cases"]:
        trace = {}
        keep = None if case["keep"] is None else bytearray(case["keep"])
        layer.forward_int(xq, 36, 64, trace=trace, keep=keep, causal=case["causal"])
        for got, want in TRACED:
            check.equal(trace[got], case[want], "%s (causal %s, keep %s)"
                        % (got, case["causal"], keep is not None))
    check.equal([layer.num_heads, layer.num_kv_heads, len(layer.K), len(layer.VT)],
                [8, 2, 36 * 16, 36 * 16], "heads, K/V heads, K and V^T bytes")


def test_gqa_layer_float_forward_is_near_the_float_layer():
    qm, f = load(check.path("gqa.bin")), check.fixture("layer")
    layer = qm.layers[0]
    for causal, want in ((False, f["y_plain"]), (True, f["y_causal"])):
        check.close(layer.forward(f["x"], causal=causal), want, rtol=0.06,
                    what="int8 against float (causal %s)" % causal)


class _FloatGqa:
    """What attention_convert.SelfAttention.from_float reads of a float Attention(64, 8,
    num_kv_heads=2)."""

    embed_dim, num_heads, num_kv_heads, head_dim = 64, 8, 2, 8

    def __init__(self, f):
        for n in "qkvo":
            setattr(self, "W" + n, f["W" + n])
            setattr(self, "b" + n, f["b" + n])


def test_from_float_with_kv_heads_matches_the_hosts_description():
    f = check.fixture("layer")
    spec = f["spec"]
    q = SelfAttention.from_float(_FloatGqa(f), f["stats"], spec["scales"]["x"],
                                 spec["scales"]["y"], 12)
    near_spec(Schema.spec(q), spec, "from_float")
    check.equal(len(q.weights["k"]), 16 * 64, "Wk bytes")


def test_gqa_streams_match_reference_and_their_cache_shrinks():
    sizes = {}
    for H_kv in (4, 2, 1):
        qm, f = load(check.path("stream%d.bin" % H_kv)), check.fixture("stream%d" % H_kv)
        s = QStream(qm, f["W"])
        n = f["out"]
        for t in range(len(f["xq"]) // 3):
            got = s.step_int(array.array("b", f["xq"][3 * t:3 * t + 3]))[0]
            check.equal(got, f["want"][t * n:(t + 1) * n], "H_kv %d, token %d" % (H_kv, t))
        sizes[H_kv] = s.cache_bytes()
        check.equal(sizes[H_kv], f["cache"], "H_kv %d cache bytes" % H_kv)
    W = f["W"]
    check.equal((sizes[1] - W) * 4, sizes[4] - W, "K and V bytes of H_kv 1: a quarter of 4's")
    print("int8 stream cache bytes (E 8, W %d): H_kv 4: %d, 2: %d, 1: %d"
          % (W, sizes[4], sizes[2], sizes[1]))


def test_a_description_whose_kv_heads_do_not_divide_the_heads_is_refused():
    from tinyattn.int8.fields import check_layer_spec

    spec = dict(check.fixture("layer")["spec"], H_kv=3)
    text = check.message(ValueError, check_layer_spec, "layers[0]", spec, Schema)
    assert "'H_kv' (3) must divide 'H' (8)" in text, text
    spec["H_kv"] = 0
    text = check.message(ValueError, check_layer_spec, "layers[0]", spec, Schema)
    assert "field 'H_kv' must be an int" in text, text
