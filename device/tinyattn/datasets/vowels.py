"""Japanese vowels as a sequence task: nine speakers, 7 to 29 frames of 12 LPC cepstrum
coefficients an utterance, the class the speaker (data/japanese_vowels/*.ts).

The model: Tokens(29), Dense 12 -> E, a learned positional embedding, one encoder layer, the
mean over each utterance's real frames (its padding mask), Dense E -> 9. Coefficients are
standardised with the train set's statistics over its real frames. tinyattn_host.vowels reads
VOWELS_CONFIG from this file, so it imports nothing at the top.
"""

SEQ_LEN, FEATURES, CLASSES = 29, 12, 9
EMBED_DIM, NUM_HEADS, FEEDFORWARD = 24, 4, 48
VOWELS_CONFIG = [
    ["Tokens", SEQ_LEN],  # (B, 29*12) -> (B*29, 12): one frame a token
    ["Dense", FEATURES, EMBED_DIM, True],
    ["PositionalEmbedding", SEQ_LEN, EMBED_DIM],
    ["TransformerEncoderLayer", EMBED_DIM, NUM_HEADS, FEEDFORWARD, 0.0, "relu", False, 1e-5,
     SEQ_LEN, False],
    ["GlobalAvgPool", SEQ_LEN],
    ["Dense", EMBED_DIM, CLASSES, True],
]
BATCH_SIZE = 16
SCHEDULE = ((20, 2e-3), (10, 5e-4))  # (epochs, Adam's lr) phases, one Adam
TRAIN_FILE, TEST_FILE = "JapaneseVowels_TRAIN.ts", "JapaneseVowels_TEST.ts"


def vowels_config(dropout=0.0, causal=False):
    """VOWELS_CONFIG (a copy) with its encoder layer's dropout p and causal flag."""
    config = [list(spec) for spec in VOWELS_CONFIG]
    config[3][4], config[3][9] = dropout, causal
    return config


def vowels_model(seed=42, dropout=0.0, causal=False):
    """The vowels model as a Sequential, weights (and dropout masks) from Rng(seed)."""
    from ..nn.sequential import Sequential

    return Sequential.from_config(vowels_config(dropout, causal), seed=seed)


def with_dropout(model, p, seed=42):
    """A copy of the Sequential `model` (a loaded one, say) whose encoder layers drop out with
    probability p in training, their keep masks from Rng(seed): PyTorch's recipe for
    fine-tuning. The weights are `model`'s, copied: both are in the heap while this runs.
    Each layer whose kind takes a `dropout` argument (nn/spec.py) gets p."""
    from ..nn.sequential import Sequential
    from ..nn.spec import ARGS, kind_of

    config = model.config()
    for spec in config:
        args = kind_of(spec[0])[ARGS]  # name, check, default of each argument
        for i in range(0, len(args), 3):
            if args[i] == "dropout":
                spec[1 + i // 3] = p
    weights = dict((name, param) for name, param, _ in model.collect_params(False))

    def fill(name, param):
        param[:] = weights.pop(name)

    return Sequential.from_config(config, seed=seed, fill=fill)


def load_vowels(folder="."):
    """(train, test) SequenceDatasets of the two .ts files in `folder`, padded to 29 frames,
    both standardised with the train set's statistics."""
    from .sequences import load_ts

    train_set = load_ts(folder + "/" + TRAIN_FILE, SEQ_LEN)
    test_set = load_ts(folder + "/" + TEST_FILE, SEQ_LEN)
    test_set.standardize(*train_set.standardize())
    return train_set, test_set
