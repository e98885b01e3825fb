"""Text generation with a key/value cache: one position's work a step.

A language model is a Sequential of Embedding, DecoderBlock..., RMSNorm, Classifier
(import-llama2c makes one). `generate` runs the prompt's tokens, then each new token, through
every block's `step` against its cache of the n_kv_heads key and value heads.

Sampling is the same on every port for a seed: the probabilities (float32, as ulab computes
them) become integer weights, p * 2^16 truncated, and the draw and top-p's cut are integer
arithmetic on them with rng.py's xorshift, the draw scaled to the total (not a remainder of
it, which a weight a unit off would move anywhere); a token under 2^-16 of the likeliest is
never drawn.
"""

SCALE = 65536  # a probability's integer weight: p * SCALE, truncated


def generate(model, prompt_tokens, steps, temperature=0.0, top_p=1.0, seed=None,
             on_token=None):
    """The list of `steps` new token ids after `prompt_tokens` (a non-empty list of ids):
    greedy at temperature 0 (the first of equal logits), else drawn from softmax(logits /
    temperature), within the smallest set of likeliest tokens whose probability reaches top_p.
    on_token(id), when given, is called with each new token as it comes."""
    from ..nn.embedding import token_ids
    from ..rng import Rng

    layers = getattr(model, "layers", None)
    if not layers or not hasattr(layers[0], "num_embeddings"):
        raise ValueError("generate needs a language model (Embedding, DecoderBlock..., "
                         "RMSNorm, Classifier), got %r" % (model,))
    prompt = token_ids(list(prompt_tokens), layers[0].num_embeddings)
    if not isinstance(steps, int) or steps < 0:
        raise ValueError("steps must be an int >= 0, got %r" % (steps,))
    if not isinstance(temperature, (int, float)) or not 0.0 <= temperature < 1e30:
        raise ValueError("temperature must be a number >= 0, got %r" % (temperature,))
    if not isinstance(top_p, (int, float)) or not 0.0 < top_p <= 1.0:
        raise ValueError("top_p must be in (0, 1], got %r" % (top_p,))
    capacity = len(prompt) + steps
    caches = [layer.new_cache(capacity) if hasattr(layer, "step") else None
              for layer in layers]
    rng = Rng(seed) if temperature > 0 else None
    out = []
    token = prompt[0]
    for pos in range(capacity - 1):
        logits = step(layers, caches, token, pos)
        if pos + 1 < len(prompt):
            token = prompt[pos + 1]
            continue
        token = pick(logits, temperature, top_p, rng)
        out.append(token)
        if on_token is not None:
            on_token(token)
    return out


def step(layers, caches, token, pos):
    """The logits (vocab,) after token `token` at position `pos`, each block's key and value
    added to its cache."""
    x = layers[0].forward([token])
    for layer, cache in zip(layers[1:], caches[1:]):
        x = layer.forward(x) if cache is None else layer.step(x, pos, cache)
    return x[0, :]


def stepped_logits(layers, tokens):
    """The logits at every position of the list of token ids, (len(tokens), vocab) floats,
    each position a step against a new cache (QSequential.logits: an int8 language model's)."""
    from ulab import numpy as np
    from ..nn.embedding import token_ids

    if not hasattr(layers[0], "num_embeddings"):
        raise ValueError("logits needs an int8 language model (Embedding first)")
    ids = token_ids(list(tokens), layers[0].num_embeddings)
    caches = [layer.new_cache(len(ids)) if hasattr(layer, "step") else None for layer in layers]
    out = np.zeros((len(ids), layers[-1].V))
    for pos in range(len(ids)):
        out[pos, :] = step(layers, caches, ids[pos], pos)
    return out


def pick(logits, temperature, top_p, rng):
    """The next token of a logits row (module docstring)."""
    values = logits.tolist() if hasattr(logits, "tolist") else list(logits)
    best = 0
    for i in range(1, len(values)):
        if values[i] > values[best]:
            best = i
    if temperature == 0:
        return best
    from ulab import numpy as np

    p = np.exp((logits - values[best]) * (1.0 / temperature))
    weights = [int(w * SCALE) for w in p.tolist()]
    order = [i for i in range(len(weights)) if weights[i]]
    total = sum(weights)
    if top_p < 1.0:
        order.sort(key=lambda i: (-weights[i], i))
        need, kept, cum = int(top_p * SCALE), [], 0
        for i in order:
            kept.append(i)
            cum += weights[i]
            if cum * SCALE >= need * total:
                break
        order, total = kept, cum
    r = ((rng.next32() >> 8) * total) >> 24  # scaled, not a remainder: a total a unit off
    # (the last bit of a logit on another port) moves the point a hair, not anywhere
    for i in order:
        r -= weights[i]
        if r < 0:
            return i
    return order[-1]


def generate_text(model, tokenizer, prompt, steps, temperature=0.0, top_p=1.0, seed=None,
                  on_text=None):
    """The text `model` writes after `prompt` (a str), as run.c prints it: <s> and the
    prompt encoded by `tokenizer`, up to `steps` new tokens, stopping at a new <s>.
    on_text(bytes), when given, gets each token's bytes as it comes."""
    from .tokenizer import BOS

    tokens = tokenizer.encode(prompt)
    pieces, last = [], [tokens[-1]]

    def each(token):
        if token == BOS:
            raise _Stop
        piece = tokenizer.decode(token, last[0])
        last[0] = token
        pieces.append(piece)
        if on_text is not None:
            on_text(piece)

    try:
        generate(model, tokens, steps, temperature, top_p, seed, each)
    except _Stop:
        pass
    data = b"".join(pieces)
    try:
        return str(data, "utf-8")
    except UnicodeError:  # a character cut by `steps`: its bytes as run.c would print them
        return "".join(chr(b) if b < 128 else "\\x%02x" % b for b in data)


class _Stop(Exception):
    """A new <s>: the text is over."""
