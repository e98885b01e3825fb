"""The int8 language model of a file, bit for bit as the board steps it: each layer a position
at a time by its kind's int8_step (int8_decoder.py's steps, declared in decoder.py), each
block's K and V kept."""

import numpy as np

from .sequential import kind  # (sequential imports every module that declares kinds)


class Int8LM:
    """The int8 model of a description and its arrays ({name: int8 array}, as the file
    holds them): step(token, pos) -> int32 logits (V,), each block's K and V kept. Each layer
    runs as its kind's declaration says (int8_step, reference/kinds.py)."""

    def __init__(self, layers, arrays):
        self.layers, self.arrays = layers, arrays
        self.steps = [kind(spec["kind"]).int8_step for spec in layers]
        if None in self.steps:
            raise ValueError("a language model's layers run a position at a time; a %s layer "
                             "does not" % layers[self.steps.index(None)]["kind"])
        self.reset()

    def reset(self):
        self.cache = [([], []) for _ in self.layers]

    def step(self, token, pos):
        """The last layer's output (the Classifier's int32 logits) for `token` at `pos`."""
        x = token
        for i, (spec, run) in enumerate(zip(self.layers, self.steps)):
            x = run(x, spec, self.arrays, "%d." % i, self.cache[i], pos)
        return x

    def generate(self, prompt, steps):
        """Greedy: (new tokens, the int32 logits of every step after the prompt's last)."""
        self.reset()
        out, logits, token = [], [], prompt[0]
        for pos in range(len(prompt) + steps - 1):
            y = self.step(token, pos)
            if pos + 1 < len(prompt):
                token = prompt[pos + 1]
                continue
            token = int(np.argmax(y))  # the first of equal logits, as generate.pick
            out.append(token)
            logits.append(y)
        return out, logits
