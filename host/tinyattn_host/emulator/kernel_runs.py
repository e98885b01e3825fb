"""Each int8 kernel called once on a representative shape, with the device's own headers and
layers (device_glue) on seeded random int8 data, for its executed-instruction count.

The shapes are those of an `Attention(64, 4)` on one sequence of S = 64 tokens (E = 64, 4
heads of D = 16): its five kernel calls (the Q, K, V projections, K and V^T written as offset
binary, the attention core, the output projection to int32), and pooling, lookup, LayerNorm
and add on the same (64, 64) rows. The unrolled 8-way loop of `linear` is also measured
alone: with int32 outputs (no data-dependent branch) at depths 64 and 72 and 64 and 128
columns, (I(72, 128) - I(64, 128)) - (I(72, 64) - I(64, 64)) is exactly 64 rows x 64 columns
x one more iteration (the source row's widening cancels out).
"""

import array
import random
from dataclasses import dataclass

from .device_glue import device_package

S, E, H = 64, 64, 4


@dataclass
class Run:
    kernel: str
    call: str
    units: int  # MACs (linear, attention) or items (the others)
    unit: str
    instructions: int

    @property
    def per_unit(self):
        return self.instructions / self.units


def _int8(rng, n):
    return array.array("b", bytes(rng.randrange(256) for _ in range(n)))


def _offset_binary(rng, n):
    return bytearray(rng.randrange(1, 256) for _ in range(n))  # w + 128, w in [-127, 127]


def _measure(emu, call):
    before = len(emu.calls)
    call()
    return emu.calls[before:]


def attention_layer(rng):
    """A planned int8 Attention(64, 4) on S = 64 seeded rows, run once: (layer, its input)."""
    from tinyattn.int8.attention import QAttention
    from tinyattn.int8.fixedpoint import fixed_point
    from tinyattn.int8.scales import multiplier

    weights = {n: _offset_binary(rng, E * E) for n in "qkvo"}
    biases = {n: array.array("i", [rng.randrange(-4096, 4096) for _ in range(E)])
              for n in "qkvo"}
    mults = {n: multiplier(0.02 * 0.01, 0.05) for n in "qkv"}
    mults.update(score=fixed_point(0.05 * 0.05 / 4 * 256, 2848), out=None,
                 ctx=multiplier(0.05 / 32768, 0.05))
    layer = QAttention(E, H, S, weights, biases, mults, {"x": 0.02, "y": None})
    x = _int8(rng, S * E)
    layer.forward_int(x, S, E)  # plans (binds) and runs once
    return layer, x


def attention_runs(emu, ta, rng, layer=None):
    """The Runs of the five kernel calls of attention_layer's forward (or of `layer`'s)."""
    layer = layer or attention_layer(rng)[0]
    calls = _measure(emu, layer.run)
    names = ["Q projection (int8)", "K projection (offset binary)",
             "V projection (offset-binary V^T)", "attention core S %d, %d heads of D %d"
             % (S, H, E // H), "output projection (int32)"]
    macs = [S * E * E] * 3 + [S * H * S * (E // H) * 2] + [S * E * E]
    units = ["MAC"] * 5
    return [Run(c.name, n, m, u, c.instructions) for c, n, m, u in zip(calls, names, macs, units)]


def _linear_once(emu, ta, rng, depth, cols):
    K = ta.kernels
    h = K.linear_header(cols, depth)  # int32 outputs
    w, src = _offset_binary(rng, cols * depth), _int8(rng, S * depth)
    dst = array.array("i", bytes(4 * S * cols))
    K.bind_linear(h, w, S, src, dst)
    return _measure(emu, lambda: K.linear(h, w))[0].instructions


def loop_alone_run(emu, ta, rng):
    """The 8-way loop of linear alone (see the module docstring)."""
    i = {(d, c): _linear_once(emu, ta, rng, d, c) for d in (64, 72) for c in (E, 2 * E)}
    extra = (i[72, 2 * E] - i[64, 2 * E]) - (i[72, E] - i[64, E])
    return Run("linear", "its 8-way loop alone (one iteration more, see kernel_runs)",
               S * E * 8, "MAC", extra)


def elementwise_runs(emu, ta, rng):
    K, N, P = ta.kernels, ta.kernels_norm, ta.kernels_pool
    mult = ta.scales.multiplier(0.05, 0.05 * 8)
    src, dst = _int8(rng, S * E), _int8(rng, S * E)
    runs = []
    h = P.pool_header(S, E, ta.scales.multiplier(0.05 / S, 0.05))
    pooled = _int8(rng, E)
    P.bind_pool(h, 1, src, pooled)
    runs.append(("_pool", "pool of %d tokens" % S, lambda: P.pool(h)))
    table = _int8(rng, 256)
    runs.append(("table_lookup", "lookup", lambda: K.lookup(src, dst, S * E, table)))
    beta = array.array("i", [rng.randrange(-2 ** 16, 2 ** 16) for _ in range(E)])
    hn = N.norm_header(E, beta, 1000, mult)
    gamma = _offset_binary(rng, E)
    N.bind_norm(hn, gamma, S, src, dst)
    runs.append(("norm", "LayerNorm of E %d" % E, lambda: N.norm(hn, gamma)))
    ha = N.add_header(E, (16384, 12000, 15))
    other = _int8(rng, S * E)
    N.bind_add(ha, S, src, other, dst)
    runs.append(("add", "residual add", lambda: N.add(ha, other)))
    out = []
    for kernel, name, call in runs:
        calls = _measure(emu, call)
        assert calls[-1].name == kernel, (calls[-1].name, kernel)
        out.append(Run(kernel, name, S * E, "item", calls[-1].instructions))
    return out


def representative_runs(emu, seed=22):
    """(the five Runs of the Attention(64, 4) forward, the Runs of the other kernels) on the
    shapes of the module docstring."""
    rng = random.Random(seed)
    with device_package(emu) as ta:
        from tinyattn.int8 import kernels, kernels_norm, kernels_pool, scales

        ta.kernels, ta.kernels_norm, ta.kernels_pool = kernels, kernels_norm, kernels_pool
        ta.scales = scales
        return (attention_runs(emu, ta, rng),
                [loop_alone_run(emu, ta, rng)] + elementwise_runs(emu, ta, rng))
