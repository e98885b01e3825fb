"""The int8 backend choice (tinyattn.int8.backend, backend_choice) on a port without the fast kernels: the
stock-firmware detection, and the choice with the facts given (inline assembler, xtensawin)
and stand-in fast kernels: one that passes, one that differs (viper kept; a linear or an
attention core that differs), one that "crashes"
(stops with the marker still written: the next choice skips the fast kernels and says why),
forced viper. The real MAC16 kernel is run against viper in tests/emulator."""

import os
import sys

import check
from tinyattn.int8 import backend, backend_choice as choice, kernels, kernels_attend

YES = lambda: True  # noqa: E731


def folder():
    """A fixture-folder prefix for the marker and the force file, both absent."""
    prefix = check.path("backend_")
    for name in (choice.MARKER, choice.VIPER_FILE):
        if exists(prefix + name):
            os.remove(prefix + name)
    return prefix


exists = choice._exists


class Same:
    """A 'fast' kernel that is the viper one: it passes."""

    name = "same"
    made = 0

    def __init__(self):
        Same.made += 1
        self.linear = kernels.linear

    def operands(self, w, cols, depth):
        return w


class Differs(Same):
    """The viper kernel on weights with the lowest bit of the last one flipped (a layout off
    by one): the self-test must catch it."""

    name = "differs"

    def operands(self, w, cols, depth):
        wrong = bytearray(w)
        wrong[cols * depth - 1] ^= 1
        return wrong


class AttendSame(Same):
    """With an attention core that is the viper one: it passes."""

    name = "attend-same"

    def __init__(self):
        super().__init__()
        self.attend = lambda h, work, table: kernels_attend.attend(h)


class AttendDiffers(Same):
    """With an attention core that writes nothing: the self-test must catch it."""

    name = "attend-differs"

    def __init__(self):
        super().__init__()
        self.attend = lambda h, work, table: None


class Crashes(Same):
    name = "crashes"

    def __init__(self):
        super().__init__()

        def linear(h, w):
            raise RuntimeError("simulated reset")
        self.linear = linear


def test_stock_firmware_has_no_inline_assembler():
    check.equal(choice.has_inline_asm(), False, "inline assembler on this port")
    backend.reset()
    name, why = backend.backend()
    check.equal(name, "viper", "backend")
    if "no inline assembler" not in why:
        raise AssertionError(why)
    for asm in ("asm_mac16", "asm_attend", "asm_pie"):
        check.equal("tinyattn.int8." + asm in sys.modules, False, asm + " imported")
    w = bytearray(6)
    check.equal(backend.linear_kernel(w, 2, 3)[0] is kernels.linear, True, "viper kernel")


def test_a_kernel_that_passes_is_chosen_and_the_marker_removed():
    where = folder()
    name, why, fast = choice.choose(Same, YES, YES, where)
    check.equal((name, fast.name), ("same", "same"), "choice")
    check.equal(exists(where + choice.MARKER), False, "marker left")


def test_a_mismatch_keeps_viper():
    where = folder()
    name, why, fast = choice.choose(Differs, YES, YES, where)
    check.equal((name, fast), ("viper", None), "choice")
    if "self-test failed" not in why:
        raise AssertionError(why)
    check.equal(exists(where + choice.MARKER), False, "marker left")


def test_the_attention_core_is_checked_too():
    where = folder()
    name, why, fast = choice.choose(AttendSame, YES, YES, where)
    check.equal(name, "attend-same", "choice")
    name, why, fast = choice.choose(AttendDiffers, YES, YES, where)
    check.equal((name, fast), ("viper", None), "choice")
    if "attention" not in why or "differs from viper" not in why:
        raise AssertionError(why)
    check.equal(exists(where + choice.MARKER), False, "marker left")


def test_a_crash_in_the_self_test_skips_the_fast_kernel_next_time():
    where = folder()
    try:
        choice.choose(Crashes, YES, YES, where)
        raise AssertionError("the simulated crash did not stop the self-test")
    except RuntimeError:
        pass
    check.equal(exists(where + choice.MARKER), True, "marker written before the check")
    made = Same.made
    name, why, fast = choice.choose(Same, YES, YES, where)
    check.equal((name, fast, Same.made), ("viper", None, made), "after the crash")
    if choice.MARKER not in why:
        raise AssertionError(why)
    os.remove(where + choice.MARKER)


def test_viper_can_be_forced():
    where = folder()
    with open(where + choice.VIPER_FILE, "w") as f:
        f.write("")
    name, why, _ = choice.choose(Same, YES, YES, where)
    os.remove(where + choice.VIPER_FILE)
    check.equal(name, "viper", "forced by file")
    name, why, _ = choice.choose(Same, YES, YES, where, forced=True)
    check.equal(name, "viper", "forced by the choice's flag")
    backend.FORCE_VIPER = True  # (what backend passes it)
    try:
        backend.reset()
        name, why = backend.backend()
    finally:
        backend.FORCE_VIPER = False
        backend.reset()
    check.equal(name, "viper", "forced by backend.FORCE_VIPER")
    if "forced" not in why:
        raise AssertionError(why)


def test_a_failing_fast_kernel_falls_to_the_next():
    """PIE first on an S3; if its self-test fails, MAC16 is tried, then viper."""
    where = folder()
    name, why, fast = choice.choose((Differs, Same), YES, YES, where)
    check.equal((name, fast.name), ("same", "same"), "choice")
    name, why, fast = choice.choose((Differs, Differs), YES, YES, where)
    check.equal((name, fast), ("viper", None), "both differ")
    check.equal(why.count("self-test failed"), 2, "both failures said")
    check.equal(exists(where + choice.MARKER), False, "marker left")


def test_pie_is_a_candidate_on_an_s3_only():
    check.equal(choice.fast_kernels(lambda: True), (choice.Pie, choice.Mac16), "S3")
    check.equal(choice.fast_kernels(lambda: False), (choice.Mac16,), "not an S3")
    check.equal(choice.is_s3(), False, "this port is an S3")


def test_not_xtensawin_keeps_viper():
    name, why, _ = choice.choose(Same, YES, lambda: False, folder())
    check.equal(name, "viper", "choice")


def test_the_choice_lets_go_of_its_code_when_viper_is_chosen():
    """backend_choice is imported by the first use and let go after (viper here): nothing of
    it is held; a reset imports it again."""
    name = choice.__name__
    del sys.modules[name]  # (this module's import of it: as if never imported)
    try:
        for _ in range(2):
            backend.reset()
            check.equal(backend.backend()[0], "viper", "backend")
            check.equal(name in sys.modules, False, name + " held after the choice")
    finally:
        sys.modules[name] = choice
