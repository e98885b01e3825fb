"""The median of timings: one definition for the link's BENCH message and the bench package
(its own mip package, which depends on this core one). Plain Python."""


def median(values):
    """The median of a non-empty sequence of numbers (of an even count: the middle two's mean)."""
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2
