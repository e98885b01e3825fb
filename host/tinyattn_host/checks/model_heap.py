"""The heap a model takes on the board check-model talks to, measured there: HELLO's `free`
(after the device's gc.collect) before the model is loaded, after, and after one sample ran.

A board without PSRAM (an ESP32-S3 with its 512 KB of SRAM) has ~300 KB free for Python;
the verdict compares the heap the model holds after one sample with that (the peak while
loading is not measured: no message reports a low-water mark). On a virtual board with a real
ulab, check-model gives the verdict from smallest_heap.py's figure instead. The virtual board with a
real ulab gives a 32-bit port's figures when it is one (MICROPYTHON=...micropython-i686); with
the ulab stand-in the figures are not a board's (its arrays are Python lists), and the lines say
so.
"""

BOARD_WITHOUT_PSRAM = 300 * 1024  # bytes free for Python on an ESP32-S3 without PSRAM
X64 = 2  # the native architecture in sys.implementation._mpy (bits 10-13) of an x86-64 port


def measure(link, free_before, run_one):
    """(bytes held after loading, bytes held after run_one()): HELLO's free, each after the
    device collected its garbage, against free_before (HELLO's before the load)."""
    loaded = link.hello()
    run_one()
    ran = link.hello()
    return free_before - loaded["free"], free_before - ran["free"], ran


def report(held_loaded, held_run, hello, verdict=True):
    """The lines check-model prints: the figures, whose they are, and (verdict) whether the
    model fits a board without PSRAM."""
    where = "%s, MicroPython %s, ulab %s" % (hello.get("machine"), hello.get("micropython"),
                                             hello.get("ulab"))
    lines = ["heap: %d KB held after loading, %d KB after one sample ran (HELLO's free before "
             "and after, on %s)" % (held_loaded // 1024, held_run // 1024, where)]
    if hello.get("ulab") in (None, "stand-in"):
        lines.append("  (the ulab stand-in: these figures are not a board's; a real ulab on a "
                     "32-bit port or a board gives them)")
        lines.append("a board without PSRAM (~%d KB free): not measured (the stand-in)"
                     % (BOARD_WITHOUT_PSRAM // 1024))
        return lines
    if ((hello.get("mpy") or 0) >> 10) & 15 == X64:
        lines.append("  (a 64-bit port: a 32-bit board's figures are smaller)")
    if not verdict:
        return lines
    fits = held_run <= BOARD_WITHOUT_PSRAM
    lines.append("%s a board without PSRAM (~%d KB free): it holds %d KB after one sample (the "
                 "peak while loading, not measured here, is more: the file's arrays as they are "
                 "read, or the link's message)" % ("fits" if fits else "does not fit",
                                                   BOARD_WITHOUT_PSRAM // 1024, held_run // 1024))
    return lines
