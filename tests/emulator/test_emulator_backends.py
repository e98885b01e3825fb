"""The backends on the emulated chip (tinyattn_host.emulator.backend_counts): the backend
chooses MAC16 there after its self-test against viper (both run in the emulator); the int8
Attention(64, 4) S = 64 forward gives the same bytes with each; MAC16's inner loop is one
instruction a MAC, its four projections and its attention core run far fewer instructions than
viper's, the whole forward at least 10x fewer (issue 23)."""

from tinyattn_host.emulator import backend_counts


def test_mac16_forward_equals_viper_and_costs_less(emulator):
    m = backend_counts.measure(emulator)
    (vr, vout), (mr, mout) = m["forward"]["viper"], m["forward"]["mac16"]
    assert vout == mout and any(vout)
    assert m["loop"]["mac16"] == 1.0
    assert m["loop"]["viper"] > 10
    linear = lambda runs: sum(r.instructions for i, r in enumerate(runs) if i != 3)  # noqa
    assert linear(vr) > 9 * linear(mr)
    assert vr[3].instructions > 10 * mr[3].instructions  # the attention core
    total = lambda runs: sum(r.instructions for r in runs)  # noqa
    assert total(vr) >= 10 * total(mr)


def test_the_section_names_both_backends(emulator):
    text = backend_counts.section(emulator)
    assert text.startswith(backend_counts.HEADING)
    assert "| viper |" in text and "| mac16 |" in text
