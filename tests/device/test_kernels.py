"""The viper kernels against the NumPy integer reference, bit for bit
(tests/board/case_kernels.py on the board).

Each kernel is driven through its public header API (kernels.linear_header / bind_linear /
linear, attend_header / bind_attend / attend, kernels_pool.pool_header / bind_pool / pool,
lookup) with blocks inside larger buffers, every output layout the int8 layers use, masks, and
the inputs that drive every int32 intermediate to its bound. Here: the configurations and the
reference's outputs (the fixtures), and the host-only checks on them.
"""

from functools import lru_cache

import numpy as np

from board_cases import board_test
from tinyattn_host.reference import int8 as ref


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



def pool_config(seed):
    rng = np.random.default_rng(seed)
    groups, tokens, cols = (int(v) for v in rng.integers(1, [6, 9, 17]))
    x = _int8(rng, (groups * tokens, cols))
    return dict(groups=groups, tokens=tokens, cols=cols, x=x.ravel().tolist(),
                mult=ref.fixed_point(float(rng.uniform(0.02, 2.0)) / tokens, 128),
                table=_int8(rng, 256).tolist())


def pool_reference(c):
    x = np.array(c["x"]).reshape(c["groups"] * c["tokens"], c["cols"])
    return dict(pool=ref.requantize(ref.sum_tokens(x, c["tokens"]), c["mult"]).ravel(),
                lookup=ref.lookup(x, c["table"]).ravel())


WORST_CASES = [(64, 64, 2 ** 30), (512, 256, 2 ** 20)]  # depth (= head_dim), keys, bias_max


def worst_linear(depth, bias_max):
    x, w, bias = ref.worst_case_matmul_inputs(2, 4, depth, bias_max)
    w = np.maximum(w, -127)  # weights are [-127, 127]
    return dict(rows=2, cols=4, depth=depth, offset_binary=False, src_off=0, src_row=depth,
                x=x.ravel().tolist(), w=w.ravel().tolist(), bias=bias.tolist(), mult=None,
                lo=-128, hi=127, add=0, dst_off=0, dst_row=4, dst_col=1, group=0,
                group_stride=0, dst_len=8)


def worst_attend(keys, head_dim):
    """Q = -128, K alternating -128 / 127 by key (scores +-head_dim 2^14), V = -128: the
    device makes these buffers from S and D (case_kernels.test_worst_case_inputs...)."""
    S, D = keys, head_dim
    q = np.full((S, D), -128)
    k = np.where((np.arange(S) % 2 == 0)[:, None], -128, 127) * np.ones((1, D), dtype=int)
    return dict(S=S, B=1, H=1, D=D, causal=False, keep=None, q=q.ravel(), k=k.ravel(),
                v=np.full(S * D, -128), score_mult=ref.fixed_point(1e-4, ref.EXP_LIMIT),
                ctx_mult=ref.fixed_point(1.0 / 32768, 128))


def periodic(values):
    """{"pattern": the shortest p items whose repetition makes `values`, "n": the count}:
    how the device gets a 256 x 256 block of scores without 65,536 numbers."""
    values = np.asarray(values).ravel()
    n = values.size
    for p in range(1, n + 1):
        if n % p == 0 and np.array_equal(values, np.tile(values[:p], n // p)):
            return {"pattern": values[:p].tolist(), "n": n}


@lru_cache(maxsize=None)
def worst_case(index):
    depth, keys, bias_max = WORST_CASES[index]
    ref.worst_case_bounds(depth=depth, bias_max=bias_max, head_dim=depth, keys=keys)
    linear, attend = worst_linear(depth, bias_max), worst_attend(keys, depth)
    return linear, linear_reference(linear), attend, attend_reference(attend)


def test_worst_cases_reach_the_bounds():
    """The reference's outputs for the extreme inputs reach every int32 bound (the device
    matches them item for item on the board)."""
    for index, (depth, keys, bias_max) in enumerate(WORST_CASES):
        _, dst, _, out = worst_case(index)
        assert np.abs(dst).max() == depth * 128 * 127 + bias_max
        assert np.abs(out["scores"]).max() == depth * 128 * 128


def make_fixtures():
    fixtures = {}
    for seed, c in enumerate(LINEAR_CONFIGS):
        fixtures["linear%02d" % seed] = {"seed": seed, "c": c,
                                         "dst": linear_reference(c).tolist()}
    for seed, c in enumerate(ATTEND_CONFIGS):
        want = attend_reference(c)
        fixtures["attend%02d" % seed] = dict({"seed": seed, "c": c},
                                             **{k: v.tolist() for k, v in want.items()})
    for seed in range(6):
        c = pool_config(seed)
        fixtures["pool%02d" % seed] = dict({"c": c}, **{k: v.tolist()
                                                         for k, v in pool_reference(c).items()})
    for index in range(len(WORST_CASES)):
        linear, dst, attend, out = worst_case(index)
        shape = {k: attend[k] for k in ("S", "B", "H", "D", "causal", "keep", "score_mult",
                                          "ctx_mult")}
        fixtures["worst%d" % index] = dict({"linear": linear, "dst": dst.tolist(),
                                            "attend": shape},
                                           **{k: periodic(v) for k, v in out.items()})
    fixtures["tables"] = {"hi": ref.EXP_HI.tolist(), "lo": ref.EXP_LO.tolist(),
                          "limit": ref.EXP_LIMIT}
    return fixtures


test_kernels_on_board = board_test("case_kernels", make_fixtures)
