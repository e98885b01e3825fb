"""The int8 language model on the emulated chip (issue 36), as `make emulate`'s section on it
measures it (tinyattn_host.emulator.lm_counts): the llama2c fixture (the stories260K shape,
read from llama2.c's format, quantized by the host) loaded by the device's own glue and
stepped with every kernel the chip's machine code (viper and MAC16 in qemu-system-xtensa; PIE
too where QEMU_XTENSA_S3 names Espressif's QEMU). Each token's int32 logits are the integer
reference's bit for bit; the section's table adds up (a token's instructions are the sum over
its kernels, the estimate follows from them) and shows what it says: the projections flat,
the attention core growing with the position (viper's: not with the cache)."""

import re
from pathlib import Path

import numpy as np
import pytest

from tinyattn_host import modelfile
from tinyattn_host.chipcost.chipcost import CLOCK_MHZ
from tinyattn_host.emulator import lm_counts
from tinyattn_host.interop.llama2c import model_config, read_checkpoint
from tinyattn_host.reference.int8_lm import Int8LM

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llama2c"
CAPACITY, POSITIONS, WHOLE = 4, (0, 3), 8  # small: the command's are 32, (0, 7, 31), 512
BINDING = {"address_distance", "address"}  # the first step's, once per model and cache


def fixture_model():
    header, arrays = read_checkpoint(FIXTURES / "model.bin")
    return model_config(header), arrays, np.load(FIXTURES / "tokens.npy").tolist()


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    doc = tmp_path_factory.mktemp("lm") / "performance.md"
    doc.write_text("# Performance\n\nintro\n\n## another section\n\nkept\n")
    text, result = lm_counts.run_section(doc, fixture_model(), CAPACITY, POSITIONS, WHOLE)
    return doc, text, result


def test_every_token_gives_the_integer_references_logits(measured, tmp_path):
    _, _, result = measured
    config, arrays, ids = fixture_model()
    _, meta, qarrays = modelfile.read_model(lm_counts.quantized_file(tmp_path, config, arrays,
                                                                      ids))
    reference = Int8LM(meta["layers"], qarrays)
    expected = [reference.step(ids[p], p).tolist() for p in range(max(POSITIONS) + 1)]
    backends = ["viper", "mac16"] + (["pie"] if "pie" in result else [])
    assert list(result) == backends
    for backend, tokens in result.items():
        assert [(t.position, t.capacity) for t in tokens] == [(p, CAPACITY) for p in POSITIONS] \
            + [(0, WHOLE)], backend
        for t in tokens:
            assert t.logits == expected[t.position], (backend, t.position, t.capacity)


def test_the_projections_are_flat_and_the_attention_grows_with_the_position(measured):
    _, _, result = measured
    viper = result["viper"]
    for backend, tokens in result.items():
        core = "_attend" if backend == "viper" else "attend"  # viper's, the asm core
        assert {"linear", core, "rmsnorm", "rotate", "product", "add",
                "table_lookup"} <= set(tokens[0].kernels), backend
        linear = [t.kernels["linear"] for t in tokens]  # but for a clamp or two (data)
        assert max(linear) - min(linear) < max(linear) / 10000, backend
        attend = [t.kernels[core] for t in tokens]  # positions 0, 3 of 4; 0 of 8
        assert attend[0] < attend[1], backend  # keys 0..p: one, then four
        if backend == "viper":  # it reads keys 0..p only: the cache's size costs nothing
            assert attend[2] == attend[0]
        else:  # the asm cores score every key of the cache, the later ones masked
            assert attend[2] > attend[0], backend
        assert tokens[0].calls > tokens[1].calls  # the first step binds
        assert set(tokens[1].kernels).isdisjoint(BINDING)
        for t, v in zip(tokens, viper):  # the same viper kernels on the same data
            others = {k: n for k, n in t.kernels.items()
                      if k not in ("linear", core) and k not in BINDING}
            assert others == {k: n for k, n in v.kernels.items() if k in others}, backend
        if backend != "viper":
            assert tokens[1].asm == {"linear", "attend"}
            assert tokens[1].kernels["linear"] * 5 < viper[1].kernels["linear"], backend
    assert viper[1].asm == set()


def table_rows(text):
    lines = [line for line in text.splitlines() if line.startswith("| ")]
    names = [c.strip(" `") for c in lines[0].strip("|").split("|")]
    return names, [[c.strip(" ~") for c in line.strip("|").split("|")] for line in lines[1:]]


def test_the_table_adds_up_and_its_estimate_follows_from_the_counts(measured):
    doc, text, result = measured
    names, rows = table_rows(text)
    first = names.index("kernel calls") + 1
    kernels = names[first:names.index("all instructions")]
    tokens = [t for ts in result.values() for t in ts]
    assert len(rows) == len(tokens)
    rates = lm_counts.cycles_per_instruction()
    for row, t in zip(rows, tokens):
        assert row[:3] == [t.backend, "%d / %d" % (t.position, t.capacity), str(t.calls)]
        counts = [int(v) for v in row[first:first + len(kernels)]]
        assert dict(zip(kernels, counts)) == {k: t.kernels.get(k, 0) for k in kernels}
        total, cycles, rate = int(row[-3]), int(row[-2]), float(row[-1])
        assert total == sum(counts) == t.instructions
        viper = sum(n for k, n in t.kernels.items() if k not in t.asm)
        assert total - viper + 1.27 * viper <= cycles <= total - viper + 1.49 * viper
        assert abs(cycles - lm_counts.estimate_cycles(t, rates)) < 1
        assert rate == round(CLOCK_MHZ * 1e6 / lm_counts.estimate_cycles(t, rates))
    assert "Estimate, not a measurement" in text and "19.1 tokens/s" in text
    assert "not measured here" in text
    page = doc.read_text()
    assert page.startswith("# Performance\n\nintro\n\n## another section\n\nkept\n\n")
    assert page.endswith(text) and page.count(lm_counts.HEADING) == 1


def test_the_commands_model_is_the_fixtures_stories260k_shape():
    config, params, ids = lm_counts.stories_model()
    assert config == fixture_model()[0]
    assert len(ids) == lm_counts.CAPACITY > max(lm_counts.POSITIONS)
    assert set(params) == {k for k in fixture_model()[1] if not k.startswith("host.")}
