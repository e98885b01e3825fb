"""Float64 NumPy reference of training: the device's random streams, data split and
standardisation, SGD, Adam, one training step and the whole loop (same batch order)."""

import numpy as np

from ..device_modules import device_module
from .layers import cross_entropy
from .sequential import sequential_backward, sequential_forward

RNG = device_module("rng")
Rng, permutation = RNG.Rng, RNG.permutation  # the device's own (device/tinyattn/rng.py)


def split_indices(n, test_ratio, seed):
    """(train rows, test rows) as Dataset.split(test_ratio, seed) chooses them."""
    n_test = int(n * test_ratio + 0.5)
    order = permutation(n, Rng(seed))
    return order[n_test:], order[:n_test]


def standardize(X_train, X_test):
    """Both standardised with the train set's mean and 1/N standard deviation."""
    mean = X_train.mean(axis=0)
    std = X_train.std(axis=0)
    std = np.where(std == 0.0, 1.0, std)
    return (X_train - mean) / std, (X_test - mean) / std, mean, std


class SGD:
    """p -= lr * u, u = g + weight_decay * p, or with momentum m: buf = m buf + u, u = buf."""

    def __init__(self, lr, momentum=0.0, weight_decay=0.0):
        self.lr, self.momentum, self.weight_decay = lr, momentum, weight_decay
        self.velocity = {}

    def step(self, params, grads):
        """Update the dict `params` from `grads` (same names), in place."""
        for name, p in params.items():
            u = grads[name] + self.weight_decay * p
            if self.momentum:
                buf = self.velocity.get(name, np.zeros_like(p))
                self.velocity[name] = buf = self.momentum * buf + u
                u = buf
            params[name] = p - self.lr * u


class Adam:
    """p -= lr * m_hat / (sqrt(v_hat) + eps), m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t)."""

    def __init__(self, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8):
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.t = 0
        self.m, self.v = {}, {}

    def step(self, params, grads):
        """Update the dict `params` from `grads` (same names), in place."""
        self.t += 1
        b1, b2 = self.beta1, self.beta2
        for name, p in params.items():
            g = grads[name]
            m = self.m[name] = b1 * self.m.get(name, 0.0) + (1 - b1) * g
            v = self.v[name] = b2 * self.v.get(name, 0.0) + (1 - b2) * g * g
            m_hat = m / (1 - b1 ** self.t)
            v_hat = v / (1 - b2 ** self.t)
            params[name] = p - self.lr * m_hat / (np.sqrt(v_hat) + self.eps)


def train_step(config, params, optimizer, x, labels, mask=None):
    """Forward, cross-entropy, backward and one optimizer step; returns the batch's loss.
    `mask` (B, S): the batch's padding mask (0 = padding)."""
    logits, caches = sequential_forward(config, params, x, mask)
    loss, dlogits = cross_entropy(logits, labels)
    _, grads = sequential_backward(config, params, caches, dlogits)
    optimizer.step(params, grads)
    return loss


def train(config, params, X, y, epochs=100, batch_size=16, seed=42, optimizer=None,
          on_epoch=None, mask=None):
    """The device's train(): per epoch, shuffle with the next seed of Rng(seed), then one
    train_step per batch. Updates `params` in place; returns the mean loss of each epoch.
    `on_epoch(epoch, loss)` is called after each epoch (1-based). `mask` (N, S): the
    padding mask of every row of X (a SequenceDataset's), shuffled with the rows."""
    optimizer = Adam() if optimizer is None else optimizer
    X, y = np.asarray(X, dtype=np.float64), np.asarray(y)
    order = np.arange(len(y))
    rng = Rng(seed)
    losses = []
    for _ in range(epochs):
        order = order[permutation(len(y), Rng(rng.next32()))]
        total = 0.0
        for start in range(0, len(y), batch_size):
            rows = order[start:start + batch_size]
            part = None if mask is None else mask[rows]
            total += train_step(config, params, optimizer, X[rows], y[rows], part) * len(rows)
        losses.append(total / len(y))
        if on_epoch:
            on_epoch(len(losses), losses[-1])
    return losses


def accuracy(config, params, X, y, mask=None):
    """The fraction of rows whose largest logit is at the label (mask: their padding)."""
    logits, _ = sequential_forward(config, params, np.asarray(X, dtype=np.float64), mask)
    return float(np.mean(np.argmax(logits, axis=1) == np.asarray(y)))
