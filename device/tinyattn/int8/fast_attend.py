"""The MAC16 attention core (asm_attend) beside the viper one (kernels_attend.attend): the
function a layer runs, and the self-test int8/backend.py runs before choosing it.

The fast core takes the calls without keep mask or trace (grouped K/V heads, T keys, bias and
causal offsets included); those stay on viper (the same header, so a layer switches per
call). A score multiplier whose exp table would
exceed MAX_TABLE entries (an extreme multiplier) keeps the layer on viper.
"""

import array

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from .fixedpoint import fixed_point
from .constants import EXP_LIMIT
from . import attend_layout, kernels_attend

MAX_TABLE = 2 * EXP_LIMIT
"""The most entries of a layer's exp table (2 bytes each)."""


def fits(score_mult):
    return attend_layout.last_index(score_mult) < MAX_TABLE


def core(fast, kv_len, head_dim, score_mult, work=None):
    """function(header) for a layer's bound attention header of T = kv_len keys: `fast`
    (asm_attend.attend, or asm_pie_attend.attend with work = attend_layout.pie_work) on its
    work buffer and exp table when the call has no keep mask or trace, else viper."""
    work = (work or attend_layout.work)(kv_len, head_dim)
    table = attend_layout.exp_table(score_mult)
    viper = kernels_attend.attend

    def run(h, _=None):  # (kernels_attend.attend's arguments)
        if kernels_attend.fast_call(h):
            fast(h, work, table)
        else:
            viper(h)

    return run


def _cases():
    """Seeded configurations: (sequences, S, H, D, score multiplier per score unit); the D = 16
    ones take the kernel's register path, 2.0 makes rows with one probability of 1.0."""
    return ((1, 5, 2, 3, 0.16), (2, 8, 4, 16, 0.05), (1, 7, 1, 16, 2.0), (2, 3, 3, 5, 0.3))


def self_test(fast, work=None, seed=4321):
    """None if `fast` (on its work buffer's maker, default asm_attend's) equals
    kernels_attend.attend on every seeded case, else what differed."""
    x = seed
    ctx_mult = fixed_point(1 / 32768, 128)  # numbers.multiplier of P V to V's scale
    for seqs, S, H, D, r in _cases():
        rows, E = seqs * S, H * D
        data = bytearray(3 * rows * E)
        for i in range(len(data)):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            data[i] = (x >> 16) & 255
        q = array.array("b", data[:rows * E])
        k, vt = data[rows * E:2 * rows * E], data[2 * rows * E:]
        score_mult = fixed_point(r, EXP_LIMIT)
        outs = []
        for run in (kernels_attend.attend, core(fast, S, D, score_mult, work)):
            h = kernels_attend.attend_header(S, H, D, score_mult, ctx_mult)
            ctx = array.array("b", bytes(rows * E))
            kernels_attend.bind_attend(h, rows, q, k, vt, ctx)
            run(h)
            outs.append(bytes(ctx))
        if outs[0] != outs[1]:
            return "attention (S %d, H %d, D %d) differs from viper" % (S, H, D)
    return None
