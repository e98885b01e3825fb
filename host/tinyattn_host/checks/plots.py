"""The PNG plots of the reports (`make run REPORT=dir`, `make demo REPORT=dir`).

Each function writes one figure and returns its path:

- attention_maps: per sample and head, the device's map beside the reference's beside their
  difference, each with a colour bar; rows are query tokens, columns key tokens.
- error_histogram: |device - reference| on a log axis, the tolerance marked.
- relative_error: |device - reference| / |reference| against |reference|, log-log, with the
  tolerance as the line it makes there.
- training_curve: loss and accuracy per epoch.
"""

import numpy as np

DPI = 110


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig, path):
    fig.savefig(path, dpi=DPI, bbox_inches="tight")
    _pyplot().close(fig)
    return path


def _say(ax, text):
    """An empty plot that says why it is empty."""
    ax.text(0.5, 0.5, text, transform=ax.transAxes, ha="center", va="center", fontsize=12,
            bbox={"facecolor": "white", "edgecolor": "none"}, zorder=5)
    ax.set_xticks([])
    ax.set_yticks([])


def attention_maps(path, title, device, reference, heads, seq_len, samples=2):
    """Maps of the first `samples` sequences; device and reference are (B*H*S, S_kv) arrays,
    rows ordered by sequence, head, query token (as the layer keeps them)."""
    plt = _pyplot()
    shown = min(samples, device.shape[0] // (heads * seq_len))
    keys = device.shape[1]
    rows = shown * heads
    fig, axes = plt.subplots(rows, 3, figsize=(10, 2.9 * rows), squeeze=False)
    ticks = (["t%d" % i for i in range(seq_len)], ["t%d" % j for j in range(keys)])
    for s in range(shown):
        for h in range(heads):
            start = (s * heads + h) * seq_len
            got = device[start:start + seq_len]
            want = reference[start:start + seq_len]
            diff = got - want
            largest = float(np.abs(diff).max())
            power = int(np.floor(np.log10(largest))) if largest > 0 else 0
            limit = largest / 10.0 ** power if largest > 0 else 1.0
            panels = (("device", got, "viridis", 0.0, 1.0),
                      ("reference (float64)", want, "viridis", 0.0, 1.0),
                      ("difference, x 1e%d" % power, diff / 10.0 ** power, "RdBu_r",
                       -limit, limit))
            for col, (label, values, cmap, lo, hi) in enumerate(panels):
                ax = axes[s * heads + h][col]
                image = ax.imshow(values, cmap=cmap, vmin=lo, vmax=hi)
                fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
                ax.set_title("sequence %d, head %d: %s" % (s, h, label), fontsize=9)
                ax.set_xticks(range(keys), ticks[1])
                ax.set_yticks(range(seq_len), ticks[0])
                ax.set_xlabel("key token")
                ax.set_ylabel("query token")
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def error_histogram(path, title, device, reference, tolerance):
    """Histogram of |device - reference| over log-spaced bins; exact zeros counted apart."""
    plt = _pyplot()
    errors = np.abs(np.asarray(device) - np.asarray(reference)).ravel()
    nonzero = errors[errors > 0]
    fig, ax = plt.subplots(figsize=(6, 3.8))
    if nonzero.size:
        low = min(nonzero.min(), tolerance) / 2
        high = max(nonzero.max(), tolerance) * 2
        ax.hist(nonzero, bins=np.geomspace(low, high, 40), color="tab:blue")
    else:
        _say(ax, "all %d values exactly equal" % errors.size)
    ax.axvline(tolerance, color="tab:red", lw=1.5, ls="--", label="tolerance %.1e" % tolerance)
    ax.set_xscale("log")
    ax.set(xlabel="|device - reference|", ylabel="values",
           title="%s\n%d values, %d exactly equal, largest %.2e"
                 % (title, errors.size, errors.size - nonzero.size, errors.max()))
    ax.legend(loc="upper left")
    fig.tight_layout()
    return _save(fig, path)


def relative_error(path, title, device, reference, tolerance):
    """|device - reference| / |reference| against |reference|, log-log; the absolute
    tolerance is the falling line tolerance / |reference|."""
    plt = _pyplot()
    reference = np.asarray(reference).ravel()
    errors = np.abs(np.asarray(device).ravel() - reference)
    magnitude = np.abs(reference)
    keep = (magnitude > 0) & (errors > 0)
    fig, ax = plt.subplots(figsize=(6, 4))
    if keep.any():
        ax.scatter(magnitude[keep], errors[keep] / magnitude[keep], s=8, alpha=0.6,
                   label="values (%d of %d not exact)" % (keep.sum(), reference.size))
        span = np.geomspace(magnitude[keep].min(), magnitude[keep].max(), 50)
        ax.plot(span, tolerance / span, color="tab:red", ls="--",
                label="tolerance %.1e / |reference|" % tolerance)
        ax.axhline(np.finfo(np.float32).eps, color="gray", lw=0.8, ls=":",
                   label="float32 epsilon")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.legend(loc="lower left", fontsize=8)
    else:
        _say(ax, "all %d values exactly equal" % reference.size)
    ax.set(xlabel="|reference|", ylabel="|device - reference| / |reference|", title=title)
    fig.tight_layout()
    return _save(fig, path)


def training_curve(path, title, loss, accuracy):
    """Loss per epoch and accuracy per epoch; `accuracy` is {label: (epochs, values)}."""
    plt = _pyplot()
    from matplotlib.ticker import MaxNLocator

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    epochs = np.arange(1, len(loss) + 1)
    left.plot(epochs, loss, color="tab:blue")
    if max(loss) > 10 * min(loss) > 0:  # log where it spans a decade or more
        left.set_yscale("log")
    left.set(xlabel="epoch", ylabel="mean cross-entropy loss", title="loss")
    for label, (at, values) in accuracy.items():
        right.plot(at, 100 * np.asarray(values), marker="o" if len(at) < 30 else None,
                   ms=3, label=label)
    right.set(xlabel="epoch", ylabel="accuracy (%)", title="accuracy", ylim=(0, 102))
    right.legend(loc="lower right")
    for ax in (left, right):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.set_xlim(0, len(loss) + 1)
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)
