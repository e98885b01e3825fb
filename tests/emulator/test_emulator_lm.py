"""The int8 language model on the emulated chip (issue 36): the llama2c fixture (the
stories260K shape) quantized by the host, loaded by the device's own glue with every viper
kernel of a token's step (RMSNorm, the projections, the rotary turn, the attention core over
the int8 cache, silu's table, SwiGLU's product, the adds, the classifier) run as xtensawin
machine code in qemu-system-xtensa: each position's int32 logits are the integer
reference's bit for bit, and the instructions one token executes are counted (printed with
-s; docs/language-models.md)."""

from pathlib import Path

import numpy as np

from tinyattn_host import modelfile
from tinyattn_host.emulator.device_glue import device_package
from tinyattn_host.interop.llama2c import model_config, read_checkpoint
from tinyattn_host.quantize import model_bytes
from tinyattn_host.quantize.lm import quantize_lm
from tinyattn_host.reference.int8_decoder import Int8LM

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llama2c"
POSITIONS = 4


def test_a_tokens_kernels_on_the_emulated_chip_give_the_references_logits(emulator, tmp_path):
    header, arrays = read_checkpoint(FIXTURES / "model.bin")
    ids = np.load(FIXTURES / "tokens.npy").tolist()
    (tmp_path / "q.bin").write_bytes(model_bytes(*quantize_lm(model_config(header), arrays,
                                                              ids)))
    _, meta, qarrays = modelfile.read_model(tmp_path / "q.bin")
    reference = Int8LM(meta["layers"], qarrays)
    with device_package(emulator):
        from tinyattn.int8 import load
        from tinyattn.lm.generate import step

        model = load(str(tmp_path / "q.bin"))
        layers = model.layers
        caches = [layer.new_cache(POSITIONS) if hasattr(layer, "step") else None
                  for layer in layers]
        for pos in range(POSITIONS):
            before = len(emulator.calls)
            step(layers, caches, ids[pos], pos)
            calls = emulator.calls[before:]
            got = list(layers[-1].dense.out)
            assert got == reference.step(ids[pos], pos).tolist(), "position %d" % pos
    kernels = {c.name for c in calls}
    assert {"linear", "rmsnorm", "rotate", "_attend", "product", "add", "table_lookup"} \
        <= kernels, kernels
    total = sum(c.instructions for c in calls)
    by_kernel = {}
    for c in calls:
        by_kernel[c.name] = by_kernel.get(c.name, 0) + c.instructions
    print("\nint8 token at position %d of the stories260K shape: %d kernel calls, %d "
          "instructions executed (%s)" % (POSITIONS - 1, len(calls), total, ", ".join(
              "%s %d" % kv for kv in sorted(by_kernel.items(), key=lambda kv: -kv[1]))))
    assert total > 0
