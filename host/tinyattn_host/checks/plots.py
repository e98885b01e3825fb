"""The PNG plots of the reports (`make run REPORT=dir`, `make demo REPORT=dir`).

Each function writes one figure and returns its path:

- attention_maps: per sample and head, the device's map beside the reference's beside their
  difference, each with a colour bar; rows are query tokens, columns key tokens.
- error_histogram: |device - reference| on a log axis, the tolerance marked.
- relative_error: |device - reference| / |reference| against |reference|, log-log, with the
  tolerance as the line it makes there.
- training_curve: loss and accuracy per epoch.
- attention_by_input: a trained model's attention maps on a few inputs of each class.
- int8_against_float: int8 outputs (dequantized) against the float64 reference's.
- stream_steps: a stream's error and class probabilities frame by frame.
Each tolerance line is labelled with where its value comes from.
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


def _tolerance_label(tolerance, source):
    """"tolerance 2.1e-03" and, on the lines below, where it comes from."""
    return "tolerance %.1e%s" % (tolerance, "\n" + source if source else "")


def _legend_below(ax):
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.25), fontsize=8)


def error_histogram(path, title, device, reference, tolerance, source=""):
    """Histogram of |device - reference| over log-spaced bins; exact zeros counted apart;
    `source` says where the tolerance comes from (its label)."""
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
    ax.axvline(tolerance, color="tab:red", lw=1.5, ls="--",
               label=_tolerance_label(tolerance, source))
    ax.set_xscale("log")
    ax.set(xlabel="|device - reference|", ylabel="values",
           title="%s\n%d values, %d exactly equal, largest %.2e"
                 % (title, errors.size, errors.size - nonzero.size, errors.max()))
    _legend_below(ax)
    fig.tight_layout()
    return _save(fig, path)


def relative_error(path, title, device, reference, tolerance, source=""):
    """|device - reference| / |reference| against |reference|, log-log; the absolute
    tolerance is the falling line tolerance / |reference| (`source`: where it comes from)."""
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
                label=_tolerance_label(tolerance, source) + "\n(a line: divided by |reference|)")
        ax.axhline(np.finfo(np.float32).eps, color="gray", lw=0.8, ls=":",
                   label="float32 epsilon")
        ax.set_xscale("log")
        ax.set_yscale("log")
        _legend_below(ax)
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


def attention_by_input(path, title, maps, heads, seq_len, rows, classes):
    """The maps of the sequences `rows` (rows of maps: sequence, head, query token, as the
    layer keeps them), one figure row a sequence, one column a head, each cell's weight
    written; classes[i] names sequence rows[i]'s class."""
    plt = _pyplot()
    fig, axes = plt.subplots(len(rows), heads, figsize=(2.8 * heads + 1.2, 2.7 * len(rows)),
                             squeeze=False, layout="constrained")
    keys = maps.shape[1]
    for i, row in enumerate(rows):
        for h in range(heads):
            start = (row * heads + h) * seq_len
            values = maps[start:start + seq_len]
            ax = axes[i][h]
            image = ax.imshow(values, cmap="viridis", vmin=0.0, vmax=1.0)
            for q in range(seq_len):
                for k in range(keys):
                    ax.text(k, q, "%.2f" % values[q, k], ha="center", va="center", fontsize=7,
                            color="white" if values[q, k] < 0.6 else "black")
            ax.set_title("input %d (%s), head %d" % (row, classes[i], h), fontsize=9)
            ax.set_xticks(range(keys), ["t%d" % k for k in range(keys)])
            ax.set_yticks(range(seq_len), ["t%d" % q for q in range(seq_len)])
            if i == len(rows) - 1:
                ax.set_xlabel("key token")
            if h == 0:
                ax.set_ylabel("query token")
    fig.colorbar(image, ax=axes, fraction=0.03, pad=0.02, label="attention weight")
    fig.suptitle(title)
    return _save(fig, path)


def int8_against_float(path, title, int8, reference):
    """Each int8 output (dequantized) against the float64 reference's, the line y = x, how
    many rows keep the reference's class, and the error as a share of the largest output."""
    plt = _pyplot()
    int8, reference = np.asarray(int8, np.float64), np.asarray(reference, np.float64)
    agree = int(np.sum(int8.argmax(1) == reference.argmax(1)))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    left.scatter(reference.ravel(), int8.ravel(), s=8, alpha=0.5)
    span = [reference.min(), reference.max()]
    left.plot(span, span, color="gray", lw=0.8, ls=":", label="int8 = float")
    left.set(xlabel="float64 reference output", ylabel="int8 output x its scale",
             title="%d rows, %d keep the reference's class" % (len(int8), agree))
    left.legend(loc="upper left", fontsize=8)
    largest = max(float(np.abs(reference).max()), 1e-30)
    errors = 100 * np.abs(int8 - reference).ravel() / largest
    right.hist(errors, bins=40, color="tab:orange")
    right.set(xlabel="|int8 - float| as %% of the largest |float| output (%.3g)" % largest,
              ylabel="outputs", title="the int8 error: worst %.2f%%, median %.2f%%"
              % (errors.max(), np.median(errors)))
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)


def stream_steps(path, title, errors, probabilities, tolerance, source=""):
    """A stream's relative error per frame (the tolerance marked) and each class's
    probability after each frame: how the answer settles as frames come in."""
    plt = _pyplot()
    frames = np.arange(1, len(errors) + 1)
    probabilities = np.asarray(probabilities)
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 3.8))
    shown = np.maximum(np.asarray(errors, np.float64), 1e-12)
    left.semilogy(frames, shown, marker="o", ms=3, label="the board's step")
    left.axhline(tolerance, color="tab:red", ls="--",
                 label=_tolerance_label(tolerance, source))
    left.set(xlabel="frames streamed", ylabel="relative error", title="each step against the "
             "reference's full forward", ylim=(min(shown.min(), tolerance) / 10, tolerance * 100))
    left.legend(loc="upper right", fontsize=7)
    for c in range(probabilities.shape[1]):
        right.plot(frames, probabilities[:, c], label="class %d" % c)
    right.set(xlabel="frames streamed", ylabel="probability (softmax of the logits)",
              ylim=(0, 1.02), title="the class, frame by frame")
    right.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    return _save(fig, path)
