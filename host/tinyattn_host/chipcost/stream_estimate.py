"""An ESP32-S3 estimate (not a measurement) of one Stream step of a float model: the
multiply-adds of its np.dot calls (tinyattn.nn.stream) times ulab's float dot per MAC
(chipcost.ULAB_FLOAT_DOT: ~36 cycles, 30 to 45, from ulab's C), at 240 MHz.

    .venv/bin/python -m tinyattn_host vowels --causal --chip-estimate

A lower bound of the step: the interpreter's work around each ulab call (argument parsing,
array objects made and freed, a gc collection), the softmax, LayerNorm and the adds are not
counted, nor PSRAM's wait states; the model has no figure for them.
"""

from ..reference.kinds import device_spec, param_shapes, stream_role
from .chipcost import CLOCK_MHZ, ULAB_FLOAT_DOT


def step_macs(config, kept):
    """Multiply-adds of one token's step when `kept` tokens (this one included) are cached,
    from the kinds' declarations (nn/spec.py): a layer that runs on the one row ("row") or
    keeps a cache ("cache") takes the row through each of its weight matrices (rows x
    columns: a Dense in x out, an encoder layer's projections and feed-forward); a "cache"
    layer's scores and P V over the kept keys add 2 E kept (all heads, E its rows' width)."""
    total = 0
    for entry in config:
        role = stream_role(entry[0])
        if role in ("row", "cache"):
            total += sum(s[0] * s[1] for s in param_shapes(entry).values() if len(s) == 2)
        if role == "cache":
            total += 2 * features(entry) * kept
    return total


def features(entry):
    """The width of the rows a config entry's layer takes (its declaration's flow, "features")."""
    spec = device_spec()
    kind = spec.kind_of(entry[0])
    return spec.arguments(kind, entry[1:])[dict(kind[spec.FLOW])["features"]]


def estimate_lines(config, frames):
    """One line per cache length in `frames`: MACs, cycles, microseconds at CLOCK_MHZ."""
    low, high = ULAB_FLOAT_DOT["cycles_per_mac_range"]
    nominal = ULAB_FLOAT_DOT["cycles_per_mac"]
    lines = []
    for kept in frames:
        macs = step_macs(config, kept)
        lines.append("chip estimate, frame %d (%d cached): %d MACs x %d cycles (%d to %d) = "
                     "%.2f ms (%.2f to %.2f) at %d MHz, a lower bound"
                     % (kept, kept, macs, nominal, low, high, macs * nominal / CLOCK_MHZ / 1e3,
                        macs * low / CLOCK_MHZ / 1e3, macs * high / CLOCK_MHZ / 1e3, CLOCK_MHZ))
    return lines
