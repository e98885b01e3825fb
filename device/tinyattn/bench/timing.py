"""Timing for the bench: calls taken in turns, the median of each (tinyattn.bench's
docstring says how), and a row of them with what was not measured and why.
"""

import gc
import time

from ..link.timing import median

OOM, SKIP = "OOM", "skip"


def _seconds(call):
    start = time.ticks_us()
    call()
    return time.ticks_diff(time.ticks_us(), start) / 1e6


def medians(calls, repeats=5, budget=1.0):
    """{name: (median seconds, calls timed) or OOM} of each call of the dict `calls`: a
    warm-up call each, then up to `repeats` rounds (at least 3, fewer when a round would
    pass `budget` seconds) calling them in turn, so that a change of machine load falls on
    every call alike and their ratios hold."""
    found, times = {}, {}
    for name, call in calls.items():
        gc.collect()
        try:
            times[name] = [_seconds(call)]
        except MemoryError:
            found[name] = OOM
    rounds = max(3, min(repeats, int(budget / max(sum(t[0] for t in times.values()), 1e-6))))
    for _ in range(rounds if times else 0):
        for name in times:
            gc.collect()
            times[name].append(_seconds(calls[name]))
    for name, seconds in times.items():
        found[name] = (median(seconds[1:]), rounds)
    return found


def timed(row, calls, units, repeats, cap, rates):
    """Put the median ms (or OOM / skip) of each of `calls` in row, timed in turns (see
    medians); units: the work of each call, rates: seconds per unit of each so far."""
    todo = {}
    for name, call in calls.items():
        rate = rates.get(name)
        if call is None:
            row[name] = OOM
        elif rate is not None and rate * units[name] > cap:
            row[name] = SKIP
        else:
            todo[name] = call
    try:
        found = medians(todo, repeats, cap * len(todo))
    except MemoryError:
        found = dict((name, OOM) for name in todo)
    for name, value in found.items():
        if value == OOM:
            row[name] = OOM
        else:
            rates[name] = value[0] / units[name]
            row[name], row["runs"][name] = value[0] * 1000.0, value[1]
