"""Run the board cases: the test_* functions of case modules, on a board or the unix port.

    RUN runner.records(selection, root="/tests") with path "/tests"   # a board, through the link
    micropython runner.py FIXTURES case_rng [case_kernels.test_linear ...]   # the unix port

A case module is a plain MicroPython file; each test_* function takes no argument and fails
by raising (check.py has the assertions and reads the fixtures the host wrote). Every event
is one record, emitted as it happens: through the link a RECORD frame each
(device/tinyattn/link/run.py), on the unix port one line each, for a person or the host:

    a record (a board, through the link)              a line (the unix port)
    {"event": "start", "module": "case_rng"}          @@START case_rng
    {"event": "print", "text": "..."}                 the text a test printed
    {"event": "pass", "test": "case_rng.test_draws",  @@PASS case_rng.test_draws 12 ms, heap +0
     "ms": 12, "heap": 0}
    {"event": "fail", "test": ..., "message":         its traceback, then
     "AssertionError: ...", "traceback": ...}         @@FAIL case_rng.test_draws AssertionError: ...
    {"event": "end", "passed": 5, "failed": 1}        @@END 5 passed 1 failed

`heap` is the bytes a test left allocated (after a collection). On the unix port the exit
status is the number of failures.
"""

import gc
import io
import os
import sys
import time

import check


def _tests(module, only):
    names = sorted(name for name in dir(module) if name.startswith("test_"))
    return [name for name in names if not only or name in only]


def _traceback(err):
    text = io.StringIO()
    sys.print_exception(err, text)
    return text.getvalue()


def _failure(label, err, what=""):
    return {"event": "fail", "test": label, "traceback": _traceback(err),
            "message": "%s%s: %s" % (what, type(err).__name__, err)}


def _run_one(label, test, emit):
    """Run one test; emit its record; return whether it passed."""
    gc.collect()
    before = gc.mem_alloc()
    start = time.ticks_ms()
    try:
        test()
    except Exception as err:  # noqa: BLE001 - any exception is this test's failure
        emit(_failure(label, err))
        return False
    took = time.ticks_diff(time.ticks_ms(), start)
    gc.collect()
    emit({"event": "pass", "test": label, "ms": took, "heap": gc.mem_alloc() - before})
    return True


def _printer(emit):
    """A print for a case module's functions: what they print becomes a record."""

    def printed(*args, sep=" ", end="\n"):
        emit({"event": "print", "text": sep.join(str(a) for a in args) + end})

    return printed


def run_module(name, only=(), emit=None):
    """Import case module `name`, run its tests (all, or those named in `only`)."""
    check.use(name)
    emit({"event": "start", "module": name})
    try:
        module = __import__(name)
    except Exception as err:  # noqa: BLE001 - a module that does not import fails whole
        emit(_failure(name, err, "import: "))
        return 0, 1
    module.print = _printer(emit)
    passed = failed = 0
    for test in _tests(module, only):
        if _run_one(name + "." + test, getattr(module, test), emit):
            passed += 1
        else:
            failed += 1
    del sys.modules[name]  # its fixtures and globals go
    return passed, failed


def main(selection, fixtures="fixtures", emit=None):
    """Run `selection` ("case_x" or "case_x.test_y" items); return the number of failures."""
    emit = emit or print_marker
    check.FIXTURES = fixtures
    chosen = {}
    for item in selection:
        module, _, test = item.partition(".")
        chosen.setdefault(module, [])
        if test:
            chosen[module].append(test)
    passed = failed = 0
    for module in chosen:  # in the order given
        p, f = run_module(module, chosen[module], emit)
        passed += p
        failed += f
    emit({"event": "end", "passed": passed, "failed": failed})
    return failed


def records(emit, selection, root, fixtures="fixtures"):
    """RUN's entry point: main() in folder `root` (fixtures relative to it: a case's saves
    rename, and the virtual board cannot rename one absolute path to another)."""
    here = os.getcwd()
    os.chdir(root)
    try:
        main(selection, fixtures, emit)
    finally:
        os.chdir(here)


def print_marker(record):
    """The unix port's output: a record as the marker line above."""
    event = record["event"]
    if event == "print":
        print(record["text"], end="")
    elif event == "start":
        print("@@START", record["module"])
    elif event == "pass":
        print("@@PASS %s %d ms, heap %+d" % (record["test"], record["ms"], record["heap"]))
    elif event == "fail":
        print(record["traceback"], end="")
        print("@@FAIL", record["test"], record["message"])
    else:
        print("@@END %d passed %d failed" % (record["passed"], record["failed"]))


if __name__ == "__main__":
    sys.exit(min(main(sys.argv[2:], sys.argv[1]), 100))
