"""Board case modules (tests/board/case_*.py) run in CPython with their kernels on the
emulated chip: the fixtures the host's reference wrote, the device package from device/ with
its viper functions in the emulator (tinyattn_host.emulator.device_glue), check.py as on a
board. Of each module, the cases that run kernels against the reference (named "...match...");
the others check the glue's Python (bad arguments, the heap of MicroPython, the word size of
the interpreter running the glue), which the unix port's runs already cover."""

import importlib
import sys
from pathlib import Path

from board_cases import case_names, write_fixtures
from tinyattn_host.emulator.device_glue import device_package

def kernel_case_names(module):
    return [n for n in case_names(module) if "match" in n]


def run_case(emulator, folder, module, name, setup=None):
    """Run case `module`.`name` with the fixtures in folder/module (written by write_case);
    setup(emulator), if given, runs first inside the device package (to swap a kernel)."""
    with device_package(emulator):
        if setup is not None:
            setup(emulator)
        import check

        check.FIXTURES = str(folder)
        check.use(module)
        sys.modules.pop(module, None)
        case = importlib.import_module(module)
        try:
            getattr(case, name)()
        finally:
            del sys.modules[module]


def write_case(folder, module, fixtures):
    write_fixtures(Path(folder) / module, fixtures)
    return folder


def fast_linear_in_place_of_viper(kind, calls):
    """A run_case setup: kernels.linear(h, w) becomes tinyattn.int8.backend_choice's `kind` kernel
    ("Mac16", "Pie") on w's operand buffer (made on each call); each call is appended to
    `calls` (the emulator's KernelCall)."""

    def setup(emulator):
        import tinyattn.int8.kernels as K
        from tinyattn.int8 import backend_choice

        kernel = getattr(backend_choice, kind)()

        def linear(h, w):
            kernel.linear(h, kernel.operands(w, h[K._COLS], h[K._DEPTH]))
            calls.append(emulator.calls[-1])

        K.linear = linear

    return setup



LINEAR_CASES = ("test_linear_matches_reference_bit_for_bit",
                "test_worst_case_inputs_match_reference")


def fast_linear_case(emulator, folder, name, kind):
    """case_kernels' linear case `name` (of LINEAR_CASES) run with backend `kind`'s linear in
    place of viper's (fast_linear_in_place_of_viper); the kernel calls it made."""
    calls = []
    run_case(emulator, folder, "case_kernels", name,
             setup=fast_linear_in_place_of_viper(kind, calls))
    return calls
