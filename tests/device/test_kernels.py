"""The viper kernels against the NumPy integer reference, bit for bit, on the virtual board."""

import numpy as np
import pytest

from device_runner import run_device
from tinyattn_host.reference import integer as ref
from tinyattn_host.unixport import MicroPythonError

KERNEL_CASE = """
import array
from tinyattn import kernels as K
c = IN['c']
def i32(values):
    return array.array('i', values)
x, w = array.array('b', c['x']), array.array('b', c['w'])
acc = i32([0] * c['acc_len'])
bias = None if c['bias'] is None else i32(c['bias'])
K.matmul_xwt(x, w, acc, c['rows'], c['cols'], c['depth'], bias=bias, x_off=c['x_off'],
             x_stride=c['x_stride'], w_off=c['w_off'], w_stride=c['w_stride'],
             out_off=c['acc_off'], out_stride=c['acc_stride'])
q = array.array('b', bytes(c['q_len']))
K.requantize(acc, q, c['rows'], c['cols'], c['mult'], lo=c['lo'], hi=c['hi'],
             src_off=c['acc_off'], src_stride=c['acc_stride'], dst_off=c['q_off'],
             dst_stride=c['q_stride'])
scores = i32(c['scores'])
probs = array.array('H', bytes(2 * len(c['scores'])))
keep = None if c['keep'] is None else bytearray(c['keep'])
K.softmax(scores, probs, c['s_rows'], c['s_cols'], c['score_mult'], keep=keep,
          keep_off=c['keep_off'], causal=c['causal'])
v = array.array('b', c['v'])
pv = i32([0] * (c['s_rows'] * c['v_depth']))
K.probs_v(probs, v, pv, c['s_rows'], c['s_cols'], c['v_depth'], v_off=c['v_off'],
          v_stride=c['v_stride'])
table, y = array.array('b', c['table']), array.array('b', bytes(len(c['x'])))
K.lookup(x, y, len(c['x']), table)
sums = i32([0] * (c['groups'] * c['pool_cols']))
K.sum_tokens(w, sums, c['groups'], c['tokens'], c['pool_cols'])
OUT.update(acc=list(acc), q=list(q), probs=list(probs), pv=list(pv), y=list(y),
           sums=list(sums))
"""


def _int8(rng, n):
    return rng.integers(-128, 128, size=n).tolist()


def make_config(seed):
    """Random shapes, blocks inside larger buffers, multipliers over many magnitudes."""
    rng = np.random.default_rng(seed)
    rows, cols, depth = (int(v) for v in rng.integers(1, [12, 12, 70]))
    if seed % 7 == 0:
        depth = 64  # a full-width projection of E = 64
    c = dict(rows=rows, cols=cols, depth=depth)
    for name, n_rows, n_cols in (("x", rows, depth), ("w", cols, depth)):
        stride = n_cols + int(rng.integers(0, 5))
        off = int(rng.integers(0, 7))
        c[name + "_off"], c[name + "_stride"] = off, stride
        c[name] = _int8(rng, off + (n_rows - 1) * stride + n_cols + int(rng.integers(0, 3)))
    for name in ("acc", "q"):
        stride, off = cols + int(rng.integers(0, 4)), int(rng.integers(0, 5))
        c[name + "_off"], c[name + "_stride"] = off, stride
        c[name + "_len"] = off + (rows - 1) * stride + cols + 2
    c["bias"] = (rng.integers(-(2 ** 20), 2 ** 20, size=cols).tolist()
                 if seed % 3 else None)
    c["mult"] = ref.fixed_point(float(10 ** rng.uniform(-6, 1)), 128)
    c["lo"], c["hi"] = (0, 127) if seed % 5 == 1 else (-128, 127)

    s_rows, s_cols = (int(v) for v in rng.integers(1, [20, 40]))
    head_dim = int(rng.choice([1, 2, 4, 16, 64]))
    extreme = head_dim * 128 * 128
    spread = int(rng.choice([16, 1024, extreme]))
    c.update(s_rows=s_rows, s_cols=s_cols, causal=bool(seed % 4 == 2))
    c["scores"] = rng.integers(-min(spread, extreme), min(spread, extreme) + 1,
                               size=s_rows * s_cols).tolist()
    c["score_mult"] = ref.fixed_point(float(10 ** rng.uniform(-4, 2)), ref.EXP_LIMIT)
    if seed % 3 == 1:
        c["keep_off"] = int(rng.integers(0, 4))
        keep = (rng.random(c["keep_off"] + s_cols + 1) < 0.6).astype(int)
        if seed % 9 == 4:
            keep[:] = 0  # every key masked: the row attends to all
        c["keep"] = keep.tolist()
    else:
        c["keep"], c["keep_off"] = None, 0
    c["v_depth"] = int(rng.integers(1, 9))
    c["v_off"], c["v_stride"] = int(rng.integers(0, 5)), c["v_depth"] + int(rng.integers(0, 4))
    c["v"] = _int8(rng, c["v_off"] + (s_cols - 1) * c["v_stride"] + c["v_depth"])
    c["table"] = _int8(rng, 256)
    groups, tokens = int(rng.integers(1, 5)), int(rng.integers(1, 5))
    c["pool_cols"] = max(1, len(c["w"]) // (groups * tokens))
    c.update(groups=groups, tokens=tokens)
    return c


def block(flat, off, stride, rows, cols):
    flat = np.asarray(flat)
    return np.stack([flat[off + i * stride: off + i * stride + cols] for i in range(rows)])


def put(flat, off, stride, values):
    for i, row in enumerate(values):
        flat[off + i * stride: off + i * stride + len(row)] = row


def reference(c):
    r, k, d = c["rows"], c["cols"], c["depth"]
    x = block(c["x"], c["x_off"], c["x_stride"], r, d)
    w = block(c["w"], c["w_off"], c["w_stride"], k, d)
    acc_block = ref.matmul_xwt(x, w, None if c["bias"] is None else np.array(c["bias"]))
    acc = np.zeros(c["acc_len"], dtype=np.int64)
    put(acc, c["acc_off"], c["acc_stride"], acc_block)
    q = np.zeros(c["q_len"], dtype=np.int64)
    put(q, c["q_off"], c["q_stride"], ref.requantize(acc_block, c["mult"], c["lo"], c["hi"]))
    scores = np.array(c["scores"]).reshape(c["s_rows"], c["s_cols"])
    keep = None if c["keep"] is None else \
        np.array(c["keep"][c["keep_off"]:c["keep_off"] + c["s_cols"]])
    probs = ref.softmax(scores, c["score_mult"], keep, c["causal"])
    v = block(c["v"], c["v_off"], c["v_stride"], c["s_cols"], c["v_depth"])
    pv = ref.probs_v(probs, v)
    y = ref.lookup(np.array(c["x"]), np.array(c["table"]))
    n = c["groups"] * c["tokens"] * c["pool_cols"]
    sums = ref.sum_tokens(np.array(c["w"][:n]).reshape(-1, c["pool_cols"]), c["tokens"])
    return dict(acc=acc, q=q, probs=probs.ravel(), pv=pv.ravel(), y=y, sums=sums.ravel())


CONFIGS = [make_config(seed) for seed in range(36)]


def test_configurations_vary():
    assert len(CONFIGS) >= 30
    assert {c["bias"] is None for c in CONFIGS} == {True, False}
    assert {c["causal"] for c in CONFIGS} == {True, False}
    assert any(c["keep"] is not None and not any(c["keep"]) for c in CONFIGS)
    assert {c["lo"] for c in CONFIGS} == {0, -128}
    assert len({c["mult"][1] for c in CONFIGS}) > 5 and len({c["mult"][2] for c in CONFIGS}) > 3


@pytest.mark.parametrize("seed", range(len(CONFIGS)))
def test_kernels_match_reference_bit_for_bit(seed):
    c = CONFIGS[seed]
    out = run_device(KERNEL_CASE, {"c": c})
    want = reference(c)
    for name, values in want.items():
        np.testing.assert_array_equal(np.array(out[name]), values, err_msg=name)


WORST_CASE = """
import array
from tinyattn import kernels as K
c = IN['c']
rows, cols, depth = c['rows'], c['cols'], c['depth']
acc = array.array('i', bytes(4 * rows * cols))
K.matmul_xwt(array.array('b', c['x']), array.array('b', c['w']), acc, rows, cols, depth,
             bias=array.array('i', c['bias']))
q = array.array('b', bytes(rows * cols))
K.requantize(acc, q, rows, cols, c['mult'])
scores = array.array('i', c['scores'])
probs = array.array('H', bytes(2 * len(c['scores'])))
K.softmax(scores, probs, c['keys'], c['keys'], c['score_mult'])
v = array.array('b', [-128] * (c['keys'] * 4))
pv = array.array('i', bytes(4 * c['keys'] * 4))
K.probs_v(probs, v, pv, c['keys'], c['keys'], 4)
OUT.update(acc=list(acc), q=list(q), probs=list(probs), pv=list(pv))
"""


@pytest.mark.parametrize("depth,keys,bias_max", [(64, 64, 2 ** 30), (512, 256, 2 ** 20)])
def test_worst_case_inputs_match_reference(depth, keys, bias_max):
    """The extreme inputs that drive each int32 intermediate to its bound."""
    ref.worst_case_bounds(depth=depth, bias_max=bias_max, head_dim=depth, keys=keys)
    x, w, bias = ref.worst_case_matmul_inputs(2, 4, depth, bias_max)
    scores = ref.worst_case_score_rows(keys, keys, depth)
    c = dict(rows=2, cols=4, depth=depth, keys=keys, x=x.ravel().tolist(),
             w=w.ravel().tolist(), bias=bias.tolist(), scores=scores.ravel().tolist(),
             mult=ref.fixed_point(1e-6, 128), score_mult=ref.fixed_point(1e-4, ref.EXP_LIMIT))
    out = run_device(WORST_CASE, {"c": c})
    acc = ref.matmul_xwt(x, w, bias)
    assert np.abs(acc).max() == depth * 128 * 128 + bias_max
    probs = ref.softmax(scores, c["score_mult"])
    v = np.full((keys, 4), -128)
    np.testing.assert_array_equal(out["acc"], acc.ravel())
    np.testing.assert_array_equal(out["q"], ref.requantize(acc, c["mult"]).ravel())
    np.testing.assert_array_equal(out["probs"], probs.ravel())
    np.testing.assert_array_equal(out["pv"], ref.probs_v(probs, v).ravel())


BAD_CALL = """
import array
from tinyattn import kernels as K
b8 = lambda n: array.array('b', bytes(n))
i32 = lambda n: array.array('i', bytes(4 * n))
calls = {
    'short_x': lambda: K.matmul_xwt(b8(5), b8(6), i32(4), 2, 2, 3),
    'short_w_block': lambda: K.matmul_xwt(b8(6), b8(6), i32(4), 2, 2, 3, w_off=1),
    'short_out': lambda: K.matmul_xwt(b8(6), b8(6), i32(3), 2, 2, 3),
    'out_not_int32': lambda: K.matmul_xwt(b8(6), b8(6), bytearray(16), 2, 2, 3),
    'short_bias': lambda: K.matmul_xwt(b8(6), b8(6), i32(4), 2, 2, 3, bias=i32(1)),
    'stride_too_small': lambda: K.matmul_xwt(b8(9), b8(6), i32(4), 2, 2, 3, x_stride=2),
    'negative_offset': lambda: K.matmul_xwt(b8(9), b8(6), i32(4), 2, 2, 3, x_off=-1),
    'not_a_buffer': lambda: K.matmul_xwt([0] * 6, b8(6), i32(4), 2, 2, 3),
    'requant_short_dst': lambda: K.requantize(i32(4), b8(3), 2, 2, (16384, 20, 0, 100)),
    'requant_bad_mult': lambda: K.requantize(i32(4), b8(4), 2, 2, (40000, 20, 0, 100)),
    'requant_bad_cap': lambda: K.requantize(i32(4), b8(4), 2, 2, (16384, 20, 0, 40000)),
    'softmax_short_probs': lambda: K.softmax(i32(6), array.array('H', bytes(10)), 2, 3,
                                             (16384, 14, 0, 3000)),
    'softmax_probs_int32': lambda: K.softmax(i32(6), i32(6), 2, 3, (16384, 14, 0, 3000)),
    'softmax_short_keep': lambda: K.softmax(i32(6), array.array('H', bytes(12)), 2, 3,
                                            (16384, 14, 0, 3000), keep=bytearray(3),
                                            keep_off=1),
    'probs_v_short_v': lambda: K.probs_v(array.array('H', bytes(8)), b8(7), i32(8), 2, 2, 4),
    'lookup_short_table': lambda: K.lookup(b8(4), b8(4), 4, b8(255)),
    'sum_tokens_short_out': lambda: K.sum_tokens(b8(12), i32(5), 2, 2, 3),
}
OUT['errors'] = devio.value_errors(calls)
"""


def test_bad_buffers_raise_value_error_before_the_loops():
    errors = run_device(BAD_CALL)["errors"]
    for name, message in errors.items():
        assert message != "no error", name
    assert "holds 5 items, the shape needs 6" in errors["short_x"]
    assert "4-byte items" in errors["out_not_int32"]
    assert "stride 2 is shorter" in errors["stride_too_small"]
    assert "must be a buffer" in errors["not_a_buffer"]
    assert "fixed_point" in errors["requant_bad_mult"]


def test_exp_tables_and_word_size():
    out = run_device("""
from tinyattn import kernels as K
OUT.update(hi=list(K.EXP_HI), lo=list(K.EXP_LO), limit=K.EXP_LIMIT, ext=K.EXT)
""")
    assert out["hi"] == ref.EXP_HI.tolist() and out["lo"] == ref.EXP_LO.tolist()
    assert out["limit"] == ref.EXP_LIMIT
    assert out["ext"] == 32  # the unix port's viper ints are 64-bit; the board's are 32 (EXT 0)


def test_kernels_modules_reject_float_buffers_cleanly():
    with pytest.raises(MicroPythonError, match="ValueError"):
        run_device("""
from tinyattn import kernels as K
K.matmul_xwt(np.zeros((2, 3)), np.zeros((2, 3)), np.zeros((2, 2)), 2, 2, 3)
""")
