"""Calibration on the host: max |.| of every layer's input and output (of an attention's Q, K,
V, of an encoder layer's intermediates) on the float64 reference, as int8/convert.py's
_calibrate takes them on a board, a batch of samples at a time."""

from ..reference.kinds import kind as declared, quantizer, takes_mask
from ..reference.sequential import sequential_forward
from .layers import projection_stats
from .numbers import max_abs


def layer_params(params, i):
    """Layer i's parameters {name: array} of a Sequential's params "<i>.<name>"."""
    head = "%d." % i
    return {k[len(head):]: v for k, v in params.items() if k.startswith(head)}


def calibrate_batch(config, params, x, mask=None):
    """[{name: max |.|}] of every layer on the rows x (mask: their padding): its input's, and
    what its kind's calibrate role gives (reference/kinds.py; its output's by default)."""
    stats = []
    for i, spec in enumerate(config):
        p, st = layer_params(params, i), {"in": max_abs(x)}
        role = declared(spec[0]).calibrate
        x, seen = (forward_stats if role is None else quantizer(role))(spec, p, x, mask)
        st.update(seen)
        stats.append(st)
    return stats


def forward_stats(spec, p, x, mask=None):
    """(y, {"out": max |y|}) of one layer on x (the reference's forward; mask where it takes
    one)."""
    y, _ = sequential_forward([spec], {"0." + k: v for k, v in p.items()}, x,
                              mask if takes_mask(spec[0]) else None)
    return y, {"out": max_abs(y)}


def attention_stats(spec, p, x, mask=None):
    """(y, {q, k, v, out: max |.|}) of a SelfAttention on x: its projections' too."""
    stats = projection_stats(x, p)
    y, seen = forward_stats(spec, p, x, mask)
    stats.update(seen)
    return y, stats


def larger(a, b):
    """Each max |.| of a replaced by b's where that is larger (lists and dicts of floats)."""
    if isinstance(a, list):
        return [larger(u, v) for u, v in zip(a, b)]
    if isinstance(a, dict):
        return {name: larger(a[name], b[name]) for name in a}
    return max(a, b)


def calibrate(config, params, x, mask=None, rows=1, batch_size=None, progress=None):
    """calibrate_batch over batch_size samples of `rows` rows each at a time (all at once when
    None), the larger of each max |.| kept; progress(done, total) after each batch."""
    samples = len(x) // rows
    step = samples if batch_size is None else batch_size
    stats = None
    for s0 in range(0, samples, max(step, 1)):
        m = None if mask is None else mask[s0:s0 + step]
        batch = calibrate_batch(config, params, x[s0 * rows:(s0 + step) * rows], m)
        stats = batch if stats is None else larger(stats, batch)
        if progress is not None:
            progress(min(s0 + step, samples), samples)
    return stats
