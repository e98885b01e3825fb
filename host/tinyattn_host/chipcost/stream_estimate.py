"""An ESP32-S3 estimate (not a measurement) of one Stream step of a float model: the
multiply-adds of its np.dot calls (tinyattn.nn.stream) times ulab's float dot per MAC
(chipcost.ULAB_FLOAT_DOT: ~36 cycles, 30 to 45, from ulab's C), at 240 MHz.

    .venv/bin/python -m tinyattn_host vowels --causal --chip-estimate

A lower bound of the step: the interpreter's work around each ulab call (argument parsing,
array objects made and freed, a gc collection), the softmax, LayerNorm and the adds are not
counted, nor PSRAM's wait states; the model has no figure for them.
"""

from .chipcost import CLOCK_MHZ, ULAB_FLOAT_DOT


def step_macs(config, kept):
    """Multiply-adds of one token's step when `kept` tokens (this one included) are cached:
    Dense in x out; an encoder layer's four projections of one row (4 E^2), its scores and
    P V over the kept keys (2 E kept, all heads) and its feed-forward (2 E F)."""
    total = 0
    for spec in config:
        if spec[0] == "Dense":
            total += spec[1] * spec[2]
        elif spec[0] == "TransformerEncoderLayer":
            E, F = spec[1], spec[3]
            total += 4 * E * E + 2 * E * kept + 2 * E * F
    return total


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
