"""The decoder on the device (issue 36): a llama2.c checkpoint of the stories260K shape made
by PyTorch, imported by the host, gives torch's logits at every position (1e-4 relative to each
row's largest) and torch's 32 greedy tokens; a cached step gives the full forward's logits
(1e-5); a tied classifier; the backward of a small decoder against the reference (1e-4);
seeded sampling; bad input refused in one clear line."""

import check
import tinyattn
import ulab
from tinyattn import load
from tinyattn.lm.generate import step
from ulab import numpy as np

TOL = 1e-4
FULL = ulab.__version__ != "stand-in"
"""A real ulab: every position and step; the stand-in (plain Python, CI): a causal prefix
(its logits are the first rows of the whole sequence's), so a case takes seconds."""
POSITIONS, STEPS = (24, 32) if FULL else (8, 6)


def rows_close(got, want, rtol, what):
    """Each row within rtol of that row's largest |value|."""
    check.equal(got.shape, want.shape, what + " shape")
    for i in range(want.shape[0]):
        check.close(got[i, :], want[i, :], rtol=rtol, what="%s, position %d" % (what, i))


def tokens():
    return check.fixture("torch")["tokens"][:POSITIONS]


def torch_rows(name):
    return check.fixture("torch")[name][:POSITIONS, :]


def test_logits_are_torchs_at_every_position():
    model = load(check.path("model.bin"))
    rows_close(model.logits(tokens()), torch_rows("logits"), TOL, "logits")


def test_greedy_generation_gives_torchs_32_tokens():
    model = load(check.path("model.bin"))
    want = check.fixture("torch")["greedy"][:STEPS]
    check.equal(tinyattn.generate(model, tokens()[:4], STEPS), want, "greedy tokens")


def test_a_cached_step_gives_the_full_forwards_logits():
    model = load(check.path("model.bin"))
    ids = tokens()
    full = model.logits(ids)
    layers = model.layers
    caches = [layer.new_cache(len(ids)) if hasattr(layer, "step") else None for layer in layers]
    check.equal([c[0].shape for c in caches if c], [(len(ids), 4 * 8)] * 5,
                "each block's keys: 4 key/value heads of 8, not the 8 query heads")
    for pos in range(len(ids)):
        row = step(layers, caches, ids[pos], pos)
        check.close(row, full[pos, :], rtol=1e-5, what="step at position %d" % pos)


def test_a_tied_classifier_gives_torchs_logits():
    model = load(check.path("shared.bin"))
    check.equal(model.layers[-1].config(), ["Classifier", 64, 512, True], "the classifier")
    check.equal(len(model.collect_params(False)), 1 + 5 * 9 + 1, "parameters (no classifier's)")
    rows_close(model.logits(tokens()), torch_rows("shared_logits"), TOL, "logits")


def test_the_backward_of_a_small_decoder_is_the_references():
    f = check.fixture("small")
    model = small_model()
    y = model.forward(f["tokens"], training=True)
    rows_close(y, f["y"], TOL, "logits")
    model.backward(f["G"])
    for name, _, grad in model.collect_params():
        check.rel_error_below(grad, f["g." + name], TOL, what="d" + name)


def small_model():
    f = check.fixture("small")
    model = tinyattn.Sequential.from_config(f["config"], seed=1)
    for name, param, _ in model.collect_params(False):
        param[:] = f["p." + name]
    return model


def test_sampling_is_seeded_and_top_p_narrows_it():
    model = small_model()
    prompt = [3, 1, 4]
    first = tinyattn.generate(model, prompt, 8, temperature=1.0, seed=7)
    check.equal(tinyattn.generate(model, prompt, 8, temperature=1.0, seed=7), first, "seed 7")
    others = [tinyattn.generate(model, prompt, 8, temperature=1.0, seed=s) for s in (8, 9)]
    assert others != [first, first], "three seeds drew the same 8 tokens"
    greedy = tinyattn.generate(model, prompt, 8)
    check.equal(tinyattn.generate(model, prompt, 8, temperature=1.0, top_p=1e-6, seed=3),
                greedy, "top_p 1e-6: the likeliest token only")
    seen = []
    tinyattn.generate(model, prompt, 3, on_token=seen.append)
    check.equal(seen, greedy[:3], "on_token, each token as it comes")


def test_seeded_sampling_draws_the_same_tokens_on_every_port():
    """Recorded on the 64-bit real-ulab port; the 32-bit one and the stand-in draw them too
    (integer weights from the float32 probabilities, a scaled draw: lm/generate.py)."""
    model = small_model()
    for seed, want in ((5, [1, 7, 7, 7, 0, 9, 3, 3, 10, 9, 5, 8]),
                       (6, [0, 5, 5, 10, 11, 6, 7, 2, 11, 7, 12, 12])):
        check.equal(tinyattn.generate(model, [3, 1, 4], 12, temperature=0.8, top_p=0.9,
                                      seed=seed), want, "seed %d" % seed)


def test_bad_input_is_one_clear_line():
    model = small_model()
    for call, args, words in (
            (tinyattn.generate, (model, [1, 13], 2), "token id 13 is not in [0, 13)"),
            (tinyattn.generate, (model, [], 2), "non-empty list"),
            (tinyattn.generate, (model, [1], -1), "steps must be an int >= 0"),
            (tinyattn.generate, (model, [1], 16), "a cache of 17 positions"),
            (tinyattn.generate, (model, [1], 2, -1.0), "temperature must be"),
            (tinyattn.generate, (model, [1], 2, 1.0, 0.0), "top_p must be in (0, 1]"),
            (tinyattn.generate, (tinyattn.Sequential([tinyattn.Dense(2, 2)]), [1], 2),
             "generate needs a language model")):
        text = check.message(ValueError, call, *args)
        assert words in text, text
    text = check.message(ValueError, model.logits, [3, 1.5])
    assert "token id 1.5" in text, text


def test_the_tokenizer_encodes_as_the_host_does():
    f = check.fixture("tokenizer")
    tok = tinyattn.read_tokenizer(check.path("tokenizer.bin"))
    for text, want in zip(f["texts"], f["tokens"]):
        check.equal(tok.encode(text), want, repr(text))
        check.equal(str(tok.decode_all(want[1:], want[0]), "utf-8"), text, "decoded " + repr(text))
    check.equal(tok.to_bytes(), open(check.path("tokenizer.bin"), "rb").read(), "written back")


def test_finetune_lowers_the_loss_on_a_repeated_text():
    model = small_model()
    text = [3, 1, 4, 1, 5, 9, 2, 6] * 4
    before = model.logits(text[:8])
    losses = tinyattn.finetune(model, text, steps=12, context=8, lr=0.02, seed=2)
    check.equal(len(losses), 12, "losses")
    assert losses[-1] < 0.5 * losses[0], "the loss went %r" % losses
    assert model.logits(text[:8]).tolist() != before.tolist(), "the weights did not move"
    text = check.message(ValueError, tinyattn.finetune, model, "words")
    assert "needs its tokenizer" in text, text
