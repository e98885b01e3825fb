"""The spec's Iris model, one training step, the training loop and evaluation."""

import gc
import time

from ulab import numpy as np

from .datasets import iris
from .datasets.dataset import Dataset
from .nn.sequential import Sequential
from .nn.losses import cross_entropy
from .nn.optim import Adam
from .rng import Rng
from .nn.checks import all_finite, finite

IRIS_CONFIG = iris.CONFIG  # the spec's Iris model, as the host reference sees it too


def iris_model(seed=42):
    """Dense(4, 32) + ReLU, 4 tokens of 8, Attention(8, 2), GlobalAvgPool, Dense(8, 3).

    A Sequential; the weights of its layers come from one Rng(seed).
    """
    return Sequential.from_config(IRIS_CONFIG, seed=seed)


def train_step(model, optimizer, x, labels, mask=None):
    """One step on one batch: zero the gradients, forward, cross-entropy, backward, update.
    `mask` (B, S): the batch's padding mask, for a model of variable-length sequences.

    Returns the batch's mean loss. A non-finite loss or gradient raises ValueError before
    the update, so the weights stay those of the last good step; an update that makes a
    weight non-finite (a learning rate too large) raises ValueError after it.
    """
    return update(model, optimizer, gradients(model, optimizer, ((x, labels, mask, 1.0),)))


def gradients(model, optimizer, pieces):
    """Zero the gradients, then add each piece's (x, labels, mask, weight): forward,
    cross-entropy, backward of its dlogits times `weight` (its share of the batch's labels).
    Returns the batch's mean loss; the weights are unchanged. Pieces of a batch give the
    gradients of the whole batch (the link's TRAIN_STEP in chunks, link/chunks.py)."""
    optimizer.zero_grad()
    loss = 0.0
    for x, labels, mask, weight in pieces:
        logits = model.forward(x, training=True, mask=mask)
        part, dlogits = cross_entropy(logits, labels)
        logits = None
        if weight != 1.0:
            dlogits *= weight
        gc.collect()  # the forward's garbage goes before backward allocates its gradients
        model.backward(dlogits)
        dlogits = None
        loss += weight * part
    return loss


def update(model, optimizer, loss):
    """The optimizer's step on the gradients of a batch whose mean loss is `loss` (checked
    finite, with the gradients, first); returns the loss."""
    _require_finite(model, 2, loss, "training stopped before this step's update: the weights "
                    "are those of the last good step")
    gc.collect()  # and the checks' garbage before the update
    optimizer.step()
    _require_finite(model, 1, 0.0, "the update made them so: the learning rate is too large")
    return loss


def _require_finite(model, which, loss, why):
    """ValueError unless the loss and array `which` (1 param, 2 grad) of each group are finite."""
    for group in model.collect_params():
        if not finite(loss) or not all_finite(group[which]):
            raise ValueError("the loss is %r, the %s of %s holds NaN or infinity: %s"
                             % (loss, ("", "value", "gradient")[which], group[0], why))


def train(model, data, epochs=100, batch_size=16, lr=1e-3, seed=42, optimizer=None,
          log_every=10, log=print, on_epoch=None):
    """Train on the Dataset `data` (reordered in place); returns the history.

    Stops with ValueError at the first non-finite loss or gradient, the weights left as
    the last good step made them (see train_step).

    Each epoch shuffles the rows with the next seed of Rng(seed), then takes one
    train_step per batch (with its padding mask, for a SequenceDataset) (Adam(lr) unless `optimizer` is given). Every `log_every` epochs,
    and after the first and the last, `log` gets a line with the epoch, the loss and the
    seconds so far; log_every=0 is silent. `on_epoch(epoch, loss)`, when given, is called
    after every epoch. The history is {"loss": an array of the mean
    loss of each epoch (weighted by batch size), "seconds": wall time of the whole run}.
    """
    if not isinstance(model, Sequential) or not isinstance(data, Dataset):
        raise ValueError("model must be a Sequential and data a Dataset, got %r, %r"
                         % (model, data))
    if not isinstance(epochs, int) or epochs < 1:
        raise ValueError("epochs must be an int >= 1, got %r" % (epochs,))
    if not isinstance(log_every, int) or log_every < 0:
        raise ValueError("log_every must be an int >= 0, got %r" % (log_every,))
    if not (optimizer is None or hasattr(optimizer, "step")) or not callable(log):
        raise ValueError("optimizer must be an SGD or Adam and log a function, got %r, %r"
                         % (optimizer, log))
    if optimizer is None:
        optimizer = Adam(model.collect_params(), lr=lr)
    rng = Rng(seed)
    losses = np.zeros(epochs)  # not a list of boxed floats that would pin heap fragments
    start = time.ticks_ms()
    for epoch in range(1, epochs + 1):
        data.shuffle(rng.next32())
        total = 0.0
        for batch in data.batches(batch_size):  # (x, labels) or (x, labels, mask)
            gc.collect()  # between steps, so each step's arrays find contiguous free heap
            total += train_step(model, optimizer, *batch) * len(batch[1])
        losses[epoch - 1] = total / len(data)
        if on_epoch:
            on_epoch(epoch, losses[epoch - 1])
        if log_every and (epoch % log_every == 0 or epoch in (1, epochs)):
            log("epoch %3d/%d  loss %.4f  %.1f s"
                % (epoch, epochs, losses[epoch - 1], _seconds_since(start)))
    return {"loss": losses, "seconds": _seconds_since(start)}


def predict(model, X, batch_size=16, mask=None):
    """The predicted class of every row of X, as a list; `mask` (rows of X, S): padding."""
    classes = []
    for start in range(0, X.shape[0], batch_size):
        gc.collect()
        part = None if mask is None else mask[start:start + batch_size, :]
        logits = model.forward(X[start:start + batch_size, :], mask=part)
        for row in logits:
            values = row.tolist()
            classes.append(values.index(max(values)))
    return classes


def evaluate(model, data, batch_size=16):
    """The fraction of rows of the Dataset `data` whose predicted class is the label (a
    SequenceDataset's batches with their padding masks)."""
    right = 0
    for batch in data.batches(batch_size):
        predicted = predict(model, batch[0], batch_size, *batch[2:])
        right += sum(1 for p, y in zip(predicted, batch[1]) if p == y)
    return right / len(data)


def _seconds_since(start):
    return time.ticks_diff(time.ticks_ms(), start) / 1000.0
