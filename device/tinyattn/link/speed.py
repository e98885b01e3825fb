"""BENCH: the median time of a forward of a batch of zeros through the loaded models."""

import gc
import time

from .framing import LinkError
from .loaded import need_model
from .records import expect, field, only
from .timing import median
from .wire import BAD_VALUE, BENCH_BUDGET_MS, MAX_MESSAGE, MAX_REPEAT


def bench(session, head, arrays):
    """Median microseconds per forward of a batch of zeros through the loaded models: a
    warm-up call, then `repeat` calls, fewer when they take over BENCH_BUDGET_MS."""
    from ulab import numpy as np

    only(head, ("batch", "repeat"))
    batch = field(head, "batch", "int", 16, low=1, high=MAX_MESSAGE // 4)
    repeat = field(head, "repeat", "int", 3, low=1, high=MAX_REPEAT)
    expect(arrays, ())
    model = need_model(session)
    first = model.layers[0]
    if not hasattr(first, "in_features"):
        raise LinkError(BAD_VALUE, "BENCH needs a model whose first layer is Dense")
    x = np.zeros((batch, first.in_features))
    result = {"batch": batch, "repeat": repeat}
    runs = (("float_us", model.forward),) if session.qmodel is None else \
        (("float_us", model.forward), ("int8_us", session.qmodel.forward))
    for name, run in runs:
        result[name] = median_us(lambda: run(x), repeat)
    gc.collect()
    result["free"] = gc.mem_free()
    return result, ()


def median_us(call, repeat):
    """The median microseconds of `repeat` calls after a warm-up, fewer past BENCH_BUDGET_MS. Not
    bench.medians: the bench is its own mip package, which a board serving the link may lack,
    and BENCH's answer (protocol.md) is this simpler median."""
    gc.collect()
    call()
    times = []
    budget = time.ticks_add(time.ticks_ms(), BENCH_BUDGET_MS)
    for _ in range(repeat):
        start = time.ticks_us()
        call()
        times.append(time.ticks_diff(time.ticks_us(), start))
        if time.ticks_diff(budget, time.ticks_ms()) < 0:
            break
    return int(median(times))
