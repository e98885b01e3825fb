"""The REPL demo: train the Iris model, report the test accuracy and one attention map."""

from .datasets.dataset import load_iris
from .datasets.iris import CLASSES
from .nn.layers import SelfAttention
from .training import evaluate, iris_model, predict, train


def demo(epochs=100, seed=42, log_every=10, sample=0, history=None, out=print):
    """Train the spec's Iris model (split 0.2, Adam 1e-3, batch 16) and print how it went.

    Prints progress lines, the test accuracy, and the attention weights of test row
    `sample` as text (one table per head; rows are query tokens, columns key tokens).
    `history`, a dict, gets "loss" and "test_accuracy" after every epoch (for a host report:
    `python -m tinyattn_host demo --report DIR`). `out` gets each line (print by default).
    """
    train_set, test_set = load_iris().split(0.2, seed=seed)
    model = iris_model(seed)
    out("training the Iris model: %d parameters, %d train rows, %d test rows"
          % (model.num_params(), len(train_set), len(test_set)))
    on_epoch = None
    if history is not None:
        history["loss"], history["test_accuracy"] = [], []

        def on_epoch(epoch, loss):
            history["loss"].append(loss)
            history["test_accuracy"].append(evaluate(model, test_set))
    result = train(model, train_set, epochs=epochs, seed=seed, log_every=log_every,
                   on_epoch=on_epoch, log=out)
    accuracy = evaluate(model, test_set)
    out("test accuracy %.1f%% (%d of %d) after %.1f s of training"
          % (100 * accuracy, round(accuracy * len(test_set)), len(test_set), result["seconds"]))
    attention = [layer for layer in model.layers if isinstance(layer, SelfAttention)][0]
    attention.keep_weights = True  # this inference forward keeps the map shown below
    predicted = predict(model, test_set.X[sample:sample + 1, :])[0]
    out("attention of test row %d (%s, predicted %s); rows: query token, columns: key token"
          % (sample, CLASSES[test_set.y[sample]], CLASSES[predicted]))
    out(attention_text(attention.attention_map(0), attention.seq_len))


def records(emit, epochs=100, seed=42):
    """The demo through the link (RUN, link/run.py): each line it prints as a record
    {"kind": "line", "text": ...}, then its history {"kind": "history", "loss": [...], ...}."""
    history = {}
    demo(epochs, seed, history=history, out=lambda text: emit({"kind": "line", "text": text}))
    history["kind"] = "history"
    emit(history)


def attention_text(weights, seq_len):
    """An (H*S, S) attention map as text: one table per head, tokens t0, t1, ..."""
    lines = []
    for h in range(weights.shape[0] // seq_len):
        lines.append("head %d  " % h + "".join("    t%d" % j for j in range(seq_len)))
        for i in range(seq_len):
            row = weights[h * seq_len + i, :].tolist()
            lines.append("   t%d   " % i + "".join(" %5.3f" % w for w in row))
    return "\n".join(lines)
