"""The viper kernels against the NumPy integer reference, bit for bit, on the unix port.

Each kernel is driven through its public header API (kernels.linear_header / bind_linear /
linear, attend_header / bind_attend / attend, pool_header / bind_pool / pool, lookup) with
blocks inside larger buffers, every output layout the int8 layers use, masks, and the inputs
that drive every int32 intermediate to its bound.
"""

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host.reference import integer as ref
from tinyattn_host.unixport import MicroPythonError

LINEAR_CASE = """
import array
from tinyattn import kernels as K
c = IN['c']
rows, cols, depth = c['rows'], c['cols'], c['depth']
w = bytearray(v + 128 for v in c['w'])  # offset binary
src = array.array('b', c['x']) if not c['offset_binary'] else bytearray(v + 128 for v in c['x'])
bias = None if c['bias'] is None else array.array('i', c['bias'])
h = K.linear_header(cols, depth, bias, c['mult'], c['lo'], c['hi'])
dst = array.array('i' if c['mult'] is None else 'b', bytes(c['dst_len'] * (4 if c['mult'] is None else 1)))
K.bind_linear(h, w, rows, src, dst, src_off=c['src_off'], src_row=c['src_row'],
              offset_binary=c['offset_binary'], dst_off=c['dst_off'], dst_row=c['dst_row'],
              dst_col=c['dst_col'], group=c['group'], group_stride=c['group_stride'],
              add=c['add'])
K.linear(h, w)
K.linear(h, w)  # a second run gives the same: nothing is left over from the first
OUT['dst'] = list(dst)
"""


def _int8(rng, shape, low=-128):
    return rng.integers(low, 128, size=shape)


def linear_config(seed):
    """Random sizes (depths around the unrolling), blocks inside larger buffers, int32 or
    int8 output, offset binary output, the grouped V^T layout, many multipliers."""
    rng = np.random.default_rng(seed)
    rows, cols = (int(v) for v in rng.integers(1, [12, 12]))
    depth = int(rng.choice([1, 3, 7, 8, 9, 16, 17, 64, int(rng.integers(1, 70))]))
    c = dict(rows=rows, cols=cols, depth=depth, offset_binary=seed % 5 == 3)
    c["src_off"], c["src_row"] = int(rng.integers(0, 5)), depth + int(rng.integers(0, 4))
    c["x"] = _int8(rng, c["src_off"] + (rows - 1) * c["src_row"] + depth + 2).tolist()
    c["w"] = _int8(rng, (cols, depth), -127).ravel().tolist()
    c["bias"] = rng.integers(-(2 ** 20), 2 ** 20, size=cols).tolist() if seed % 3 else None
    c["mult"] = None if seed % 4 == 0 else ref.fixed_point(float(10 ** rng.uniform(-6, 1)), 128)
    c["lo"], c["hi"] = (0, 127) if seed % 6 == 1 else (-128, 127)
    c["add"] = 128 if c["mult"] is not None and seed % 3 == 2 else 0
    if seed % 7 == 5:  # V^T: groups of S rows, rows 1 apart, columns S apart
        S = int(rng.integers(1, rows + 1))
        c.update(dst_off=int(rng.integers(0, 3)), dst_row=1, dst_col=S, group=S,
                 group_stride=cols * S)
    else:
        c.update(dst_off=int(rng.integers(0, 4)), dst_row=cols + int(rng.integers(0, 3)),
                 dst_col=1, group=0, group_stride=0)
    c["dst_len"] = int(c["dst_off"] + linear_positions(c).max() + 1 + rng.integers(0, 3))
    return c


def linear_positions(c):
    """The destination item of output (r, j) under the config's layout."""
    r = np.arange(c["rows"])[:, None]
    j = np.arange(c["cols"])[None, :]
    group = c["group"] or c["rows"]
    return (r // group) * c["group_stride"] + (r % group) * c["dst_row"] + j * c["dst_col"]


def linear_reference(c):
    x = np.array(c["x"])
    x = np.stack([x[c["src_off"] + i * c["src_row"]:][:c["depth"]] for i in range(c["rows"])])
    acc = ref.matmul_xwt(x, np.array(c["w"]).reshape(c["cols"], c["depth"]),
                         None if c["bias"] is None else np.array(c["bias"]))
    y = acc if c["mult"] is None else ref.requantize(acc, c["mult"], c["lo"], c["hi"])
    if c["add"]:
        y = (y.astype(np.int64) + 128) & 255
        y = np.where(y > 127, y - 256, y)  # the stored bytes, read back as int8
    dst = np.zeros(c["dst_len"], dtype=np.int64)
    dst[c["dst_off"] + linear_positions(c)] = y
    return dst


LINEAR_CONFIGS = [linear_config(seed) for seed in range(40)]


def test_linear_configurations_vary():
    cs = LINEAR_CONFIGS
    assert {c["mult"] is None for c in cs} == {True, False}
    assert {c["bias"] is None for c in cs} == {True, False}
    assert {c["add"] for c in cs} == {0, 128} and {c["group"] > 0 for c in cs} == {True, False}
    assert {c["offset_binary"] for c in cs} == {True, False} and {c["lo"] for c in cs} == {0, -128}
    assert {c["depth"] % 8 for c in cs} >= {0, 1, 7} and max(c["depth"] for c in cs) >= 64


@pytest.mark.parametrize("seed", range(len(LINEAR_CONFIGS)))
def test_linear_matches_reference_bit_for_bit(seed):
    c = LINEAR_CONFIGS[seed]
    out = run_device(LINEAR_CASE, {"c": c})
    np.testing.assert_array_equal(np.array(out["dst"]), linear_reference(c))


ATTEND_CASE = """
import array
from tinyattn import kernels as K
c = IN['c']
S, H, D, B = c['S'], c['H'], c['D'], c['B']
E, rows = H * D, B * c['S']
q = array.array('b', c['q'])
k = bytearray(v + 128 for v in c['k'])
vt = bytearray(rows * E)
for r in range(rows):  # V (rows, E) to V^T, offset binary: b E S + c S + j
    first = r - r % S
    for col in range(E):
        vt[first * E + col * S + r - first] = c['v'][r * E + col] + 128
ctx = array.array('b', bytes(rows * E))
scores = array.array('i', bytes(4 * rows * H * S))
probs = array.array('H', bytes(2 * rows * H * S))
h = K.attend_header(S, H, D, c['score_mult'], c['ctx_mult'])
K.bind_attend(h, rows, q, k, vt, ctx, scores, probs)
K.set_keep(h, None if c['keep'] is None else bytearray(c['keep']), c['causal'])
K.attend(h)
OUT.update(ctx=list(ctx), scores=list(scores), probs=list(probs))
"""


def attend_config(seed):
    rng = np.random.default_rng(1000 + seed)
    S, B = int(rng.choice([1, 2, 5, 8, 9, 16])), int(rng.integers(1, 4))
    H, D = int(rng.choice([1, 2, 4])), int(rng.choice([1, 4, 8, 9, 16]))
    rows, E = B * S, H * D
    c = dict(S=S, B=B, H=H, D=D, causal=seed % 4 == 2)
    spread = int(rng.choice([8, 40, 127]))
    c["q"], c["k"], c["v"] = (rng.integers(-spread, spread + 1, size=rows * E).tolist()
                              for _ in range(3))
    c["score_mult"] = ref.fixed_point(float(10 ** rng.uniform(-3, 1)), ref.EXP_LIMIT)
    c["ctx_mult"] = ref.fixed_point(float(10 ** rng.uniform(-5.5, -4)), 128)
    c["keep"] = None
    if seed % 3 == 1:
        keep = (rng.random(rows) < 0.6).astype(int)
        keep[:S] = 0 if seed % 2 else keep[:S]  # some sequences with every key masked
        c["keep"] = keep.tolist()
    return c


def attend_reference(c):
    S, H, D, B = c["S"], c["H"], c["D"], c["B"]
    E = H * D
    Q, K, V = (np.array(c[n]).reshape(B * S, E) for n in ("q", "k", "v"))
    scores = np.zeros((B * H * S, S), dtype=np.int64)
    probs = np.zeros((B * H * S, S), dtype=np.int64)
    ctx = np.zeros((B * S, E), dtype=np.int64)
    for b in range(B):
        rows = slice(b * S, (b + 1) * S)
        keep = None if c["keep"] is None else np.array(c["keep"][b * S:(b + 1) * S])
        for h in range(H):
            cols = slice(h * D, (h + 1) * D)
            block = slice((b * H + h) * S, (b * H + h + 1) * S)
            scores[block] = ref.matmul_xwt(Q[rows, cols], K[rows, cols])
            probs[block] = ref.softmax(scores[block], c["score_mult"], keep, c["causal"])
            ctx[rows, cols] = ref.requantize(ref.probs_v(probs[block], V[rows, cols]),
                                             c["ctx_mult"])
    return dict(scores=scores.ravel(), probs=probs.ravel(), ctx=ctx.ravel())


ATTEND_CONFIGS = [attend_config(seed) for seed in range(30)]


def test_attend_configurations_vary():
    cs = ATTEND_CONFIGS
    assert {c["causal"] for c in cs} == {True, False}
    assert any(c["keep"] is not None and not any(c["keep"][:c["S"]]) for c in cs)
    assert {c["D"] % 8 for c in cs} >= {0, 1, 4} and {c["S"] % 8 for c in cs} >= {0, 1, 5}


@pytest.mark.parametrize("seed", range(len(ATTEND_CONFIGS)))
def test_attend_matches_reference_bit_for_bit(seed):
    c = ATTEND_CONFIGS[seed]
    out = run_device(ATTEND_CASE, {"c": c})
    for name, values in attend_reference(c).items():
        np.testing.assert_array_equal(np.array(out[name]), values, err_msg=name)


POOL_AND_LOOKUP = """
import array
from tinyattn import kernels as K
c = IN['c']
src = array.array('b', c['x'])
dst = array.array('b', bytes(c['groups'] * c['cols']))
h = K.pool_header(c['tokens'], c['cols'], c['mult'])
K.bind_pool(h, c['groups'], src, dst)
K.pool(h)
y = array.array('b', bytes(len(src)))
K.lookup(src, y, len(src), array.array('b', c['table']))
OUT.update(pool=list(dst), lookup=list(y))
"""


@pytest.mark.parametrize("seed", range(6))
def test_pool_and_lookup_match_reference(seed):
    rng = np.random.default_rng(seed)
    groups, tokens, cols = (int(v) for v in rng.integers(1, [6, 9, 17]))
    x = _int8(rng, (groups * tokens, cols))
    c = dict(groups=groups, tokens=tokens, cols=cols, x=x.ravel().tolist(),
             mult=ref.fixed_point(float(rng.uniform(0.02, 2.0)) / tokens, 128),
             table=_int8(rng, 256).tolist())
    out = run_device(POOL_AND_LOOKUP, {"c": c})
    want = ref.requantize(ref.sum_tokens(x, tokens), c["mult"])
    np.testing.assert_array_equal(np.array(out["pool"]), want.ravel())
    np.testing.assert_array_equal(np.array(out["lookup"]), ref.lookup(x, c["table"]).ravel())


@pytest.mark.parametrize("depth,keys,bias_max", [(64, 64, 2 ** 30), (512, 256, 2 ** 20)])
def test_worst_case_inputs_match_reference(depth, keys, bias_max):
    """The extreme inputs that drive each int32 intermediate to its bound."""
    ref.worst_case_bounds(depth=depth, bias_max=bias_max, head_dim=depth, keys=keys)
    x, w, bias = ref.worst_case_matmul_inputs(2, 4, depth, bias_max)
    w = np.maximum(w, -127)  # weights are [-127, 127]
    c = dict(rows=2, cols=4, depth=depth, offset_binary=False, src_off=0, src_row=depth,
             x=x.ravel().tolist(), w=w.ravel().tolist(), bias=bias.tolist(), mult=None,
             lo=-128, hi=127, add=0, dst_off=0, dst_row=4, dst_col=1, group=0,
             group_stride=0, dst_len=8)
    out = run_device(LINEAR_CASE, {"c": c})
    want = linear_reference(c)
    assert np.abs(want).max() == depth * 128 * 127 + bias_max
    np.testing.assert_array_equal(np.array(out["dst"]), want)

    # attention: Q = -128, K alternating -128 / 127 (scores +-head_dim 2^14), V = -128
    S, D = keys, depth
    q = np.full((S, D), -128)
    k = np.where((np.arange(S) % 2 == 0)[:, None], -128, 127) * np.ones((1, D), dtype=int)
    a = dict(S=S, B=1, H=1, D=D, causal=False, keep=None, q=q.ravel().tolist(),
             k=k.ravel().tolist(), v=[-128] * (S * D),
             score_mult=ref.fixed_point(1e-4, ref.EXP_LIMIT),
             ctx_mult=ref.fixed_point(1.0 / 32768, 128))
    out = run_device(ATTEND_CASE, {"c": a})
    for name, values in attend_reference(a).items():
        np.testing.assert_array_equal(np.array(out[name]), values, err_msg=name)
    assert np.abs(np.array(out["scores"])).max() == D * 128 * 128


BAD_CALL = """
import array
from tinyattn import kernels as K
b8 = lambda n: array.array('b', bytes(n))
i32 = lambda n: array.array('i', bytes(4 * n))
h = K.linear_header(2, 3)
calls = {
    'short_src': lambda: K.bind_linear(h, b8(6), 2, b8(5), i32(4)),
    'short_w': lambda: K.bind_linear(h, b8(5), 2, b8(6), i32(4)),
    'short_dst': lambda: K.bind_linear(h, b8(6), 2, b8(6), i32(3)),
    'dst_not_int32': lambda: K.bind_linear(h, b8(6), 2, b8(6), bytearray(16)),
    'src_row_too_small': lambda: K.bind_linear(h, b8(6), 2, b8(9), i32(4), src_row=2),
    'negative_offset': lambda: K.bind_linear(h, b8(6), 2, b8(9), i32(4), src_off=-1),
    'not_a_buffer': lambda: K.bind_linear(h, b8(6), 2, [0] * 6, i32(4)),
    'short_bias': lambda: K.linear_header(2, 3, i32(1)),
    'bias_overflows': lambda: K.linear_header(2, 3, array.array('i', [2 ** 31 - 1, 0])),
    'bad_mult': lambda: K.linear_header(2, 3, None, (40000, 20, 0, 100)),
    'bad_cap': lambda: K.linear_header(2, 3, None, (16384, 20, 0, 40000)),
    'bad_bounds': lambda: K.linear_header(2, 3, None, (16384, 20, 0, 100), 5, 4),
    'zero_depth': lambda: K.linear_header(2, 0),
    'attend_rows_not_sequences': lambda: K.bind_attend(
        K.attend_header(3, 1, 2, (16384, 14, 0, 3000), (16384, 20, 0, 100)), 4, b8(8), b8(8),
        b8(8), b8(8)),
    'attend_short_k': lambda: K.bind_attend(
        K.attend_header(2, 1, 2, (16384, 14, 0, 3000), (16384, 20, 0, 100)), 4, b8(8), b8(7),
        b8(8), b8(8)),
    'pool_short_dst': lambda: K.bind_pool(K.pool_header(2, 3, (16384, 20, 0, 100)), 2, b8(12),
                                          b8(5)),
    'lookup_short_table': lambda: K.lookup(b8(4), b8(4), 4, b8(255)),
}
OUT['errors'] = devio.value_errors(calls)
"""


def test_bad_buffers_raise_value_error_before_the_kernels_run():
    errors = run_device(BAD_CALL)["errors"]
    for name, message in errors.items():
        assert message != "no error", name
    assert "holds 5 items, the shape needs 6" in errors["short_src"]
    assert "4-byte items" in errors["dst_not_int32"]
    assert "shorter than the depth" in errors["src_row_too_small"]
    assert "must be a buffer" in errors["not_a_buffer"]
    assert "fixed_point" in errors["bad_mult"]
    assert "overflow" in errors["bias_overflows"]
    assert "not whole sequences" in errors["attend_rows_not_sequences"]


def test_exp_tables_and_word_size():
    out = run_device("""
import sys
from tinyattn import kernels as K
OUT.update(hi=list(K.EXP_HI), lo=list(K.EXP_LO), limit=K.EXP_LIMIT, ext=K.EXT,
           bits=len(bin(sys.maxsize)) - 1)
""")
    assert out["hi"] == ref.EXP_HI.tolist() and out["lo"] == ref.EXP_LO.tolist()
    assert out["limit"] == ref.EXP_LIMIT
    # EXT sign-extends a 32-bit value in a viper int: 32 on a 64-bit port, 0 on a 32-bit one
    assert out["ext"] == (32 if out["bits"] > 32 else 0)


def test_kernels_reject_float_buffers_cleanly():
    with pytest.raises(MicroPythonError, match="ValueError"):
        run_device("""
from tinyattn import kernels as K
h = K.linear_header(2, 3)
K.bind_linear(h, np.zeros((2, 3)), 2, np.zeros((2, 3)), np.zeros((2, 2)))
""")
