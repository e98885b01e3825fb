"""The keep masks a device TransformerEncoderLayer(dropout=p, seed=s) draws in its first
training forward, made on the host with the device's own Rng (device/tinyattn/rng.py)."""

import numpy as np

from tinyattn_host.reference.training import RNG, Rng


def fill(seed, count, p):
    keep = bytearray(count)
    Rng(seed).fill_keep(keep, RNG.keep_threshold(p))
    return np.frombuffer(bytes(keep), dtype=np.uint8).astype(np.float64)


def encoder_keeps(seed, p, B, S, E, F, H):
    """{"attn", "drop1", "ff", "drop2"}: the layer's Rng(seed) gives self_attn's, linear1's
    and linear2's seeds, then dropout1's, dropout's and dropout2's; the attention's dropout
    Rng is seeded with the first draw of Rng(its seed), each block (b, h) S*S bytes in order."""
    rng = Rng(seed)
    attn, _, _, d1, dff, d2 = [rng.next32() for _ in range(6)]
    return {"attn": fill(Rng(attn).next32(), B * H * S * S, p).reshape(B * H * S, S),
            "drop1": fill(d1, B * S * E, p).reshape(B * S, E),
            "ff": fill(dff, B * S * F, p).reshape(B * S, F),
            "drop2": fill(d2, B * S * E, p).reshape(B * S, E)}


def sequential_keeps(config, seed, B):
    """{layer index: encoder_keeps} of every encoder layer with dropout in the first training
    forward of Sequential.from_config(config, seed) on B sequences: the Sequential's Rng(seed)
    gives each seeded layer's seed in order (nn/layer.py build)."""
    from tinyattn_host.device_modules import device_module

    spec_module = device_module("nn/spec")
    rng, keeps = Rng(seed), {}
    for i, spec in enumerate(config):
        if not spec_module.kind_of(spec[0])[spec_module.SEEDED]:
            continue
        layer_seed = rng.next32()
        if spec[0] == "TransformerEncoderLayer" and spec[4]:
            _, E, H, F, p, _, _, _, S, _ = spec
            keeps[i] = encoder_keeps(layer_seed, p, B, S, E, F, H)
    return keeps
