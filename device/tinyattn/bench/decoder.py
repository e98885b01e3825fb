"""A language model's cost per generated token with the key/value cache against a full causal
forward of the context, as the context grows: what `tinyattn.generate` pays a token.

The model is plan.decoder_config() (llama2.c's stories260K shape: dim 64, 5 blocks, 8 query
and 4 key/value heads, hidden 172, vocabulary 512; seeded weights). At context C, the cached
step is the token at position C - 1 with C - 1 positions cached (lm/generate.py's step,
attention over C keys); the full forward is model.logits of the C tokens. tokens/s is
1000 / the step's ms. int8: the same model quantized (int8/convert_lm.py, calibrated on
the context's tokens), its step against its int8 cache, timed in turns with the float's.
"""

import gc

from .plan import decoder_config
from .timing import timed


def context(C, repeats=5, cap=1.0):
    """One context length's record: the median ms of a cached step and of a full forward."""
    from ..lm.generate import step
    from ..nn.sequential import Sequential

    config = decoder_config()
    row = {"kind": "decoder", "C": C, "config": config, "runs": {}}
    calls = {"float_token": None, "float_full": None, "int8_token": None}
    model = caches = qmodel = qcaches = None
    try:
        model = Sequential.from_config(config, seed=C)
        layers = model.layers
        ids = [(7 * i + 3) % config[0][1] for i in range(C)]
        caches = [layer.new_cache(C) if hasattr(layer, "step") else None for layer in layers]
        for pos in range(C - 1):
            step(layers, caches, ids[pos], pos)
        calls = {"float_token": lambda: step(layers, caches, ids[C - 1], C - 1),
                 "float_full": lambda: model.logits(ids), "int8_token": None}
        from ..int8.convert_lm import quantize_lm

        qmodel = quantize_lm(layers, ids)
        qlayers = qmodel.layers
        qcaches = [layer.new_cache(C) if hasattr(layer, "step") else None for layer in qlayers]
        for pos in range(C - 1):
            step(qlayers, qcaches, ids[pos], pos)
        calls["int8_token"] = lambda: step(qlayers, qcaches, ids[C - 1], C - 1)
    except MemoryError:
        pass
    timed(row, calls, {"float_token": 1, "float_full": C, "int8_token": 1}, repeats, cap, {})
    model = caches = qmodel = qcaches = calls = None
    gc.collect()
    return row
