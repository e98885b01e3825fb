"""Fine-tuning a language model on the board on your own text: next-token prediction on
windows of the text, with Adam (training.train_step)."""


def finetune(model, data, steps=20, context=32, lr=1e-3, seed=0, tokenizer=None, log=None):
    """Train `model` (a language model: tinyattn.generate's) for `steps` steps; returns the
    losses. data: a str (with `tokenizer`, llama2.c's encoding with <s>) or a list of token
    ids. Each step is one window of context + 1 tokens from a seeded random start: the model
    reads the first `context` and learns the next token at each. log(step, loss) when given."""
    from ..nn.optim import Adam
    from ..rng import Rng
    from ..training import train_step

    if isinstance(data, str):
        if tokenizer is None:
            raise ValueError("a text needs its tokenizer: finetune(model, text, tokenizer=...)")
        data = tokenizer.encode(data)
    if not isinstance(steps, int) or steps < 1 or not isinstance(context, int) or context < 1:
        raise ValueError("steps and context must be ints >= 1, got %r and %r" % (steps, context))
    if len(data) < 2:
        raise ValueError("the text is %d token(s): fine-tuning needs 2 at least" % len(data))
    span = min(context, len(data) - 1)
    optimizer = Adam(model.collect_params(), lr=lr)
    rng = Rng(seed)
    losses = []
    for step in range(steps):
        start = rng.next32() % (len(data) - span)
        window = data[start:start + span + 1]
        loss = train_step(model, optimizer, window[:-1], window[1:])
        losses.append(loss)
        if log is not None:
            log(step, loss)
    model.clear_caches()
    return losses
