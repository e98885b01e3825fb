"""Run the board cases: the test_* functions of case modules, on a board or the unix port.

    import runner; runner.main(["case_rng"], "/tests/fixtures")  # a board (make test-board)
    micropython runner.py FIXTURES case_rng [case_kernels.test_linear ...]   # the unix port

A case module is a plain MicroPython file; each test_* function takes no argument and fails
by raising (check.py has the assertions and reads the fixtures the host wrote). One line per
event, for the host to read:

    @@START case_rng
    @@PASS case_rng.test_draws 12 ms, heap +0
    @@FAIL case_rng.test_draws AssertionError: ...     (its traceback just before)
    @@END 5 passed 1 failed

On the unix port the exit status is the number of failures.
"""

import gc
import sys
import time

import check


def _tests(module, only):
    names = sorted(name for name in dir(module) if name.startswith("test_"))
    return [name for name in names if not only or name in only]


def _run_one(label, test):
    """Run one test; print its marker; return whether it passed."""
    gc.collect()
    before = gc.mem_alloc()
    start = time.ticks_ms()
    try:
        test()
    except Exception as err:  # noqa: BLE001 - any exception is this test's failure
        sys.print_exception(err)
        print("@@FAIL", label, "%s: %s" % (type(err).__name__, err))
        return False
    took = time.ticks_diff(time.ticks_ms(), start)
    gc.collect()
    print("@@PASS %s %d ms, heap %+d" % (label, took, gc.mem_alloc() - before))
    return True


def run_module(name, only=()):
    """Import case module `name`, run its tests (all, or those named in `only`)."""
    check.use(name)
    print("@@START", name)
    try:
        module = __import__(name)
    except Exception as err:  # noqa: BLE001 - a module that does not import fails whole
        sys.print_exception(err)
        print("@@FAIL", name, "import: %s: %s" % (type(err).__name__, err))
        return 0, 1
    passed = failed = 0
    for test in _tests(module, only):
        if _run_one(name + "." + test, getattr(module, test)):
            passed += 1
        else:
            failed += 1
    del sys.modules[name]  # its fixtures and globals go
    return passed, failed


def main(selection, fixtures="fixtures"):
    """Run `selection` ("case_x" or "case_x.test_y" items); return the number of failures."""
    check.FIXTURES = fixtures
    chosen = {}
    for item in selection:
        module, _, test = item.partition(".")
        chosen.setdefault(module, [])
        if test:
            chosen[module].append(test)
    passed = failed = 0
    for module in chosen:  # in the order given
        p, f = run_module(module, chosen[module])
        passed += p
        failed += f
    print("@@END %d passed %d failed" % (passed, failed))
    return failed


if __name__ == "__main__":
    sys.exit(min(main(sys.argv[2:], sys.argv[1]), 100))
