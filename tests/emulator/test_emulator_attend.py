"""The MAC16 attention core (device/tinyattn/int8/asm_attend.py) on the emulated chip, bit for
bit: the board cases' attention configurations and worst cases against the integer reference
(the context: the fast core traces nothing, so the scores and probabilities the cases also
check come from the viper run made first), more shapes against the viper kernel (odd S and D,
D = 16 and not, a probability of 1.0, score multipliers with p = 0 and p > 0, extreme inputs),
the self-test, and its loop bodies' alignment."""

import array
import random

import pytest

from emulated_cases import run_case, write_case
from emulator_tools import loop_body_starts
from tinyattn_host.emulator.device_glue import DEVICE_DIR, device_package

ASM = DEVICE_DIR / "tinyattn" / "int8" / "asm_attend.py"
FAST_CALLS = []


@pytest.fixture(scope="module")
def kernel_cases(tmp_path_factory):
    from test_kernels import make_fixtures

    return write_case(tmp_path_factory.mktemp("case_kernels"), "case_kernels", make_fixtures())


def fast_after_viper(emulator):
    """kernels_attend.attend(h) -> viper (its trace), then, when the call has no mask, the
    MAC16 core into the context zeroed (the context the case compares is the fast core's)."""
    import tinyattn.int8.kernels_attend as A
    from tinyattn.int8 import asm_attend, attend_layout

    viper, bind, contexts = A.attend, A.bind_attend, {}

    def bind_attend(h, rows, q, k, vt, ctx, *trace):
        contexts[id(h)] = ctx
        bind(h, rows, q, k, vt, ctx, *trace)

    def attend(h):
        viper(h)
        if h[A._A_USE_KEEP]:
            return
        ctx = contexts[id(h)]
        for i in range(len(ctx)):
            ctx[i] = 0
        traced, h[A._A_TRACE] = h[A._A_TRACE], 0
        mult = tuple(h[A._A_SM + i] for i in range(4))
        asm_attend.attend(h, attend_layout.work(h[A._A_T], h[A._A_D]),
                          attend_layout.exp_table(mult))
        FAST_CALLS.append(emulator.calls[-1])
        h[A._A_TRACE] = traced

    A.attend, A.bind_attend = attend, bind_attend


@pytest.mark.parametrize("name", ["test_attend_matches_reference_bit_for_bit",
                                  "test_worst_case_inputs_match_reference"])
def test_mac16_attend_matches_reference(emulator, kernel_cases, name):
    FAST_CALLS.clear()
    run_case(emulator, kernel_cases, "case_kernels", name, setup=fast_after_viper)
    assert len(FAST_CALLS) >= {"test_attend_matches_reference_bit_for_bit": 12}.get(name, 2)


# (sequences, S, H, D, score multiplier per score unit, inputs): "random", or "extreme":
# Q = -128, K -128 / 127 by key, V -128 or 127 by column (the largest scores and contexts)
SHAPES = [(1, 1, 1, 1, 0.2, "random"), (2, 9, 2, 16, 0.16, "random"),
          (1, 64, 4, 16, 0.01, "random"), (3, 5, 3, 7, 50.0, "random"),
          (1, 13, 1, 17, 0.3, "random"), (2, 6, 2, 32, 0.002, "random"),
          (1, 16, 2, 16, 1e-4, "extreme"), (1, 7, 1, 9, 3.0, "extreme"),
          (1, 8, 1, 16, 40.0, "extreme")]


def attention_inputs(rng, seqs, S, H, D, kind):
    rows, E = seqs * S, H * D
    if kind == "random":
        data = [bytearray(rng.randrange(256) for _ in range(rows * E)) for _ in range(3)]
        return array.array("b", data[0]), data[1], data[2]
    q = array.array("b", [-128] * (rows * E))
    k = bytearray((0 if (r % S) % 2 == 0 else 255) for r in range(rows) for _ in range(E))
    vt = bytearray((0 if (i // S) % 2 else 255) for i in range(rows * E))  # by column
    return q, k, vt


def shape_id(shape):
    seqs, S, H, D, r, kind = shape
    return "B%d-S%d-H%d-D%d-%g-%s" % (seqs, S, H, D, r, kind)


@pytest.mark.parametrize("shape", SHAPES, ids=shape_id)
def test_mac16_attend_equals_viper(emulator, shape):
    seqs, S, H, D, r, kind = shape
    with device_package(emulator):
        from tinyattn.int8 import asm_attend, attend_layout, kernels_attend as A
        from tinyattn.int8.constants import EXP_LIMIT
        from tinyattn.int8.fixedpoint import fixed_point

        rows, E = seqs * S, H * D
        q, k, vt = attention_inputs(random.Random(S * 100 + D), seqs, S, H, D, kind)
        score_mult, ctx_mult = fixed_point(r, EXP_LIMIT), fixed_point(1 / 32768, 128)
        outs = []
        for fast in (False, True):
            h = A.attend_header(S, H, D, score_mult, ctx_mult)
            ctx = array.array("b", bytes(rows * E))
            A.bind_attend(h, rows, q, k, vt, ctx)
            if fast:
                asm_attend.attend(h, attend_layout.work(S, D), attend_layout.exp_table(score_mult))
            else:
                A.attend(h)
            outs.append(list(ctx))
        assert outs[1] == outs[0]
        assert any(outs[0])


def test_self_test_passes_and_masked_calls_stay_on_viper(emulator):
    with device_package(emulator):
        from tinyattn.int8 import asm_attend, fast_attend, kernels_attend as A
        from tinyattn.int8.fixedpoint import fixed_point

        assert fast_attend.self_test(asm_attend.attend) is None
        S, H, D = 4, 1, 2
        h = A.attend_header(S, H, D, fixed_point(0.1, 2848), fixed_point(1 / 32768, 128))
        A.bind_attend(h, S, array.array("b", bytes(8)), bytearray(8), bytearray(8),
                      array.array("b", bytes(8)))
        run = fast_attend.core(asm_attend.attend, S, D, fixed_point(0.1, 2848))
        for keep, causal, kernel in ((None, False, "attend"), (bytearray(b"\1\1\0\1"), False,
                                     "_attend"), (None, True, "attend")):
            A.set_keep(h, keep, causal)
            run(h)
            assert emulator.calls[-1].name == kernel
        A.bind_attend(h, S, array.array("b", bytes(8)), bytearray(8), bytearray(8),
                      array.array("b", bytes(8)), array.array("i", bytes(64)),
                      array.array("H", bytes(32)))
        run(h)
        assert emulator.calls[-1].name == "_attend"  # a trace stays on viper


@pytest.fixture(scope="module")
def gqa_cases(tmp_path_factory):
    from test_attend_gqa import make_fixtures

    return write_case(tmp_path_factory.mktemp("case_attend_gqa"), "case_attend_gqa",
                      make_fixtures())


def test_mac16_gqa_bias_and_offsets_match_reference(emulator, gqa_cases):
    """tests/device/test_attend_gqa.py's 36 configurations (grouped K/V heads, T keys, biases,
    causal offsets, empty rows): the MAC16 context against the reference's (those with a
    padding mask stay on viper)."""
    FAST_CALLS.clear()
    run_case(emulator, gqa_cases, "case_attend_gqa",
             "test_gqa_bias_and_offsets_match_reference_bit_for_bit", setup=fast_after_viper)
    assert len(FAST_CALLS) >= 25


# (sequences, S, T, H, H_kv, D, score multiplier per score unit, bias: None, "shared" or
# "per-head", causal offset or None, uniform empty rows)
GQA_SHAPES = [(2, 5, 5, 8, 2, 16, 0.1, None, None, False),
              (1, 7, 12, 8, 1, 16, 0.05, "shared", 5, False),
              (2, 4, 4, 8, 2, 3, 0.3, "per-head", -2, False),
              (1, 6, 9, 8, 4, 9, 0.02, "per-head", -4, True),
              (3, 3, 3, 6, 3, 16, 2.0, "shared", 0, False),
              (1, 64, 64, 4, 1, 16, 0.01, "per-head", 0, False),
              (1, 1, 17, 8, 2, 16, 0.1, None, 16, False),
              (2, 9, 9, 3, 1, 1, 40.0, "shared", None, False)]


def gqa_id(shape):
    return "B{}-S{}-T{}-H{}-Hkv{}-D{}-{:g}-{}-{}-{}".format(*shape)


@pytest.mark.parametrize("shape", GQA_SHAPES, ids=gqa_id)
def test_mac16_gqa_equals_viper(emulator, shape):
    seqs, S, T, H, H_kv, D, r, bias_kind, offset, uniform = shape
    with device_package(emulator):
        from tinyattn.int8 import asm_attend, attend_layout, kernels_attend as A
        from tinyattn.int8.constants import EXP_LIMIT
        from tinyattn.int8.fixedpoint import fixed_point

        rng = random.Random(S * 1000 + T * 10 + D)
        rows, E, keys, ekv = seqs * S, H * D, seqs * T, H_kv * D
        q = array.array("b", bytearray(rng.randrange(256) for _ in range(rows * E)))
        k, vt = (bytearray(rng.randrange(256) for _ in range(keys * ekv)) for _ in range(2))
        n = {None: 0, "shared": S * T, "per-head": seqs * H * S * T}[bias_kind]
        bias = array.array("i", [rng.randrange(-3000, 3000) if rng.random() > 0.1
                                 else -A.BIAS_LIMIT for _ in range(n)])
        score_mult, ctx_mult = fixed_point(r, EXP_LIMIT), fixed_point(1 / 32768, 128)
        outs = []
        for fast in (False, True):
            h = A.attend_header(S, H, D, score_mult, ctx_mult, kv_len=T, num_kv_heads=H_kv)
            ctx = array.array("b", bytes(rows * E))
            A.bind_attend(h, rows, q, k, vt, ctx)
            A.set_keep(h, None, offset is not None, offset or 0, uniform)
            A.set_bias(h, bias if n else None)
            if fast:
                asm_attend.attend(h, attend_layout.work(T, D), attend_layout.exp_table(score_mult))
                assert emulator.calls[-1].name == "attend"
            else:
                A.attend(h)
            outs.append(list(ctx))
        assert outs[1] == outs[0]
        assert any(outs[0])


def test_loop_bodies_start_4_byte_aligned(emulator):
    code = emulator.module(ASM)["attend"].loaded.code
    starts = loop_body_starts(code)
    assert len(starts) == 12 and all(s % 4 == 0 for s in starts), starts
