"""The vowels model fine-tuned (or trained) on the device with its encoder's dropout on, the
device's part of `vowels --finetune-on-device` (tinyattn_host/vowels_device.py), which runs it
through the link (RUN) on the virtual board."""

import gc
import time

from .datasets.vowels import SCHEDULE, load_vowels, vowels_model, with_dropout
from .nn.optim import Adam
from .store import load
from .training import evaluate, train


def finetune(emit, folder, epochs=3, lr=5e-4, p=0.1, seed=42, sample=False, scratch=False,
             rows=0):
    """Load the .ts files (and vowels.bin) in `folder`; evaluate; rebuild the model with
    dropout p (seeded), train `epochs` with Adam at lr (scratch: fresh weights and the host's
    SCHEDULE instead) and evaluate again. sample: one epoch, the live heap sampled after every
    layer's forward and backward. rows: the first rows of each set only (a quick check).
    Emits {"kind": "line", "text"} for each epoch's line, then {"kind": "result", ...}."""
    gc.collect()
    start = gc.mem_alloc()
    train_set, test_set = load_vowels(folder)
    if rows:
        train_set, test_set = train_set.take(list(range(rows))), test_set.take(list(range(rows)))
    if scratch:  # the host's recipe on the device: fresh weights, its (epochs, lr) phases
        model, phases = vowels_model(seed, dropout=p), SCHEDULE
        before = evaluate(model, test_set)
    else:  # the host's model, then dropout p
        model, phases = load(folder + "/vowels.bin"), ((epochs, lr),)
        before = evaluate(model, test_set)
        model = with_dropout(model, p, seed)
    gc.collect()
    held = gc.mem_alloc() - start
    peak = [0]

    def sampled(call):
        def run(*args, **named):
            out = call(*args, **named)
            gc.collect()
            peak[0] = max(peak[0], gc.mem_alloc() - start)
            return out
        return run

    if sample:
        phases = ((1, phases[0][1]),)
        for layer in model.layers:
            layer.forward, layer.backward = sampled(layer.forward), sampled(layer.backward)
    optimizer = Adam(model.collect_params(), lr=phases[0][1])
    losses = []
    t0 = time.ticks_ms()
    for k, (phase_epochs, phase_lr) in enumerate(phases):
        optimizer.lr = phase_lr
        losses += list(train(model, train_set, epochs=phase_epochs, optimizer=optimizer,
                             seed=seed + k, log_every=1,
                             log=lambda text: emit({"kind": "line", "text": text}))["loss"])
    seconds = time.ticks_diff(time.ticks_ms(), t0) / 1000
    emit({"kind": "result", "before": before, "after": evaluate(model, test_set),
          "test_rows": len(test_set), "train_rows": len(train_set), "epochs": len(losses),
          "seconds": seconds, "held": held, "peak": peak[0] if sample else None,
          "loss": losses})
