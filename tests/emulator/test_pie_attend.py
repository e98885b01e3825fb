"""The PIE attention core (device/tinyattn/int8/asm_pie_attend.py: EE.VMULAS.S8.ACCX scores,
EE.VMULAS.S16.ACCX P V, heads of D <= 16) on Espressif's emulated ESP32-S3 (QEMU_XTENSA_S3):
the board cases' attention configurations and test_attend_gqa's grouped-query, bias and
causal-offset ones against the integer reference (its context; scores and probabilities from
the viper run made first), MAC16's shapes against viper, the self-test, the backend's choice
of core by head size, its loop bodies' alignment. Without QEMU_XTENSA_S3 the module skips
with one line."""

import array
import random

import pytest

from tinyattn_host.emulator import s3

if s3.missing_reason():
    pytest.skip(s3.missing_reason(), allow_module_level=True)

from emulated_cases import run_case, write_case  # noqa: E402
from emulator_tools import loop_body_starts  # noqa: E402
from test_emulator_attend import GQA_SHAPES, SHAPES, attention_inputs  # noqa: E402
from tinyattn_host.emulator.device_glue import DEVICE_DIR, device_package  # noqa: E402

ASM = DEVICE_DIR / "tinyattn" / "int8" / "asm_pie_attend.py"
PIE_CALLS = []


@pytest.fixture(scope="module")
def emulator_s3():
    from tinyattn_host.emulator.machine import Emulator

    with Emulator(s3=True) as emu:
        yield emu


def pie_after_viper(emulator):
    """kernels_attend.attend(h) -> viper (its trace), then, for a call the fast cores take
    with D <= 16, the PIE core into the context zeroed."""
    import tinyattn.int8.kernels_attend as A
    from tinyattn.int8 import asm_pie_attend, attend_layout

    viper, bind, contexts = A.attend, A.bind_attend, {}

    def bind_attend(h, rows, q, k, vt, ctx, *trace):
        contexts[id(h)] = ctx
        bind(h, rows, q, k, vt, ctx, *trace)

    def attend(h):
        viper(h)
        if h[A._A_USE_KEEP] or h[A._A_D] > 16:
            return
        ctx = contexts[id(h)]
        for i in range(len(ctx)):
            ctx[i] = 0
        traced, h[A._A_TRACE] = h[A._A_TRACE], 0
        mult = tuple(h[A._A_SM + i] for i in range(4))
        asm_pie_attend.attend(h, attend_layout.pie_work(h[A._A_T], h[A._A_D]),
                              attend_layout.exp_table(mult))
        PIE_CALLS.append(emulator.calls[-1])
        h[A._A_TRACE] = traced

    A.attend, A.bind_attend = attend, bind_attend


@pytest.fixture(scope="module")
def kernel_cases(tmp_path_factory):
    from test_kernels import make_fixtures

    return write_case(tmp_path_factory.mktemp("case_kernels"), "case_kernels", make_fixtures())


@pytest.fixture(scope="module")
def gqa_cases(tmp_path_factory):
    from test_attend_gqa import make_fixtures

    return write_case(tmp_path_factory.mktemp("case_attend_gqa"), "case_attend_gqa",
                      make_fixtures())


def test_pie_attend_matches_reference(emulator_s3, kernel_cases):
    PIE_CALLS.clear()
    run_case(emulator_s3, kernel_cases, "case_kernels",
             "test_attend_matches_reference_bit_for_bit", setup=pie_after_viper)
    assert len(PIE_CALLS) >= 12


def test_pie_gqa_bias_and_offsets_match_reference(emulator_s3, gqa_cases):
    PIE_CALLS.clear()
    run_case(emulator_s3, gqa_cases, "case_attend_gqa",
             "test_gqa_bias_and_offsets_match_reference_bit_for_bit", setup=pie_after_viper)
    assert len(PIE_CALLS) >= 25


def _run(emu, shape_args, fast):
    seqs, S, T, H, H_kv, D, r, bias_kind, offset, uniform, inputs = shape_args
    with device_package(emu):
        from tinyattn.int8 import asm_pie_attend, attend_layout, kernels_attend as A
        from tinyattn.int8.constants import EXP_LIMIT
        from tinyattn.int8.fixedpoint import fixed_point

        q, k, vt = inputs
        n = {None: 0, "shared": S * T, "per-head": seqs * H * S * T}[bias_kind]
        rng = random.Random(n + D)
        bias = array.array("i", [rng.randrange(-3000, 3000) for _ in range(n)])
        score_mult, ctx_mult = fixed_point(r, EXP_LIMIT), fixed_point(1 / 32768, 128)
        h = A.attend_header(S, H, D, score_mult, ctx_mult, kv_len=T, num_kv_heads=H_kv)
        ctx = array.array("b", bytes(seqs * S * H * D))
        A.bind_attend(h, seqs * S, q, k, vt, ctx)
        A.set_keep(h, None, offset is not None, offset or 0, uniform)
        A.set_bias(h, bias if n else None)
        if fast:
            asm_pie_attend.attend(h, attend_layout.pie_work(T, D),
                                  attend_layout.exp_table(score_mult))
        else:
            A.attend(h)
        return list(ctx), emu.calls[-1]


def _inputs(seqs, S, T, H_kv, H, D, kind):
    """MAC16's test inputs (random or extreme) for its shapes; random ones for T keys and
    H_kv heads."""
    if T == S and H_kv == H:
        return attention_inputs(random.Random(S * 100 + D), seqs, S, H, D, kind)
    rng = random.Random(S * 1000 + T * 10 + D)
    rows, keys = seqs * S, seqs * T
    q = array.array("b", bytearray(rng.randrange(256) for _ in range(rows * H * D)))
    k, vt = (bytearray(rng.randrange(256) for _ in range(keys * H_kv * D)) for _ in range(2))
    return q, k, vt


CASES = ([(b, S, S, H, H, D, r, None, None, False, kind)
          for b, S, H, D, r, kind in SHAPES if D <= 16]
         + [shape + ("random",) for shape in GQA_SHAPES if shape[5] <= 16])


@pytest.mark.parametrize("case", CASES, ids=lambda c: "B{}-S{}-T{}-H{}-Hkv{}-D{}-{:g}-{}-{}-{}-{}"
                         .format(*c))
def test_pie_attend_equals_viper(emulator_s3, case):
    seqs, S, T, H, H_kv, D = case[:6]
    args = case[:10] + (_inputs(seqs, S, T, H_kv, H, D, case[10]),)
    want, _ = _run(emulator_s3, args, False)
    got, call = _run(emulator_s3, args, True)
    assert call.name == "attend"
    assert got == want and any(want)


def test_self_test_passes_and_the_core_follows_the_head_size(emulator_s3):
    with device_package(emulator_s3):
        from tinyattn.int8 import backend_choice, fast_attend

        pie = backend_choice.Pie()
        assert fast_attend.self_test(*pie.attend_core(16)) is None
        assert backend_choice.self_test(pie) is None
        assert pie.attend_core(16)[0] is pie.pie_attend
        assert pie.attend_core(17) == (pie.attend, None)


def test_loop_bodies_start_4_byte_aligned(emulator_s3):
    code = emulator_s3.module(ASM)["attend"].loaded.code
    starts = loop_body_starts(code)
    assert len(starts) == 11 and all(s % 4 == 0 for s in starts), starts
