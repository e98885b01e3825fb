"""Which kernels the int8 layers run: the viper ones (kernels.linear, kernels_attend.attend,
every port) or a fast kernel of the chip's (MAC16, PIE: asm_xtensa, self-tested against viper),
chosen once, on first use, by backend_choice.py (its order and reasons are there).

    tinyattn.int8.backend.backend()   -> ("pie" | "mac16" | "viper", why)

FORCE_VIPER = True before the first use keeps viper (as a file named backend_choice.VIPER_FILE
in the current folder does).
"""

import sys

# leaves first: a first import nests the ones it makes (tests/device/test_import_depth.py)
from . import fixedpoint  # noqa: F401  (kernels' leaf)
from . import kernels, kernels_attend

FORCE_VIPER = False

_chosen = None  # (name, why, kernel): kernel None (viper) or backend_choice.Mac16 or Pie


def _ensure():
    global _chosen
    if _chosen is None:
        _chosen = _choose()
    return _chosen


def _choose():
    """backend_choice.choose(); when it is viper, every module the choice imported (itself,
    and a failed fast kernel's) is let go: nothing of them is held."""
    before = set(sys.modules)
    from .backend_choice import choose

    chosen = choose(forced=FORCE_VIPER)
    if chosen[2] is None:
        from ..let_go import let_go

        let_go(before, [name for name in sys.modules if name not in before])
    return chosen


def backend():
    """(name, why) of the linear kernel the int8 layers run."""
    name, why, _ = _ensure()
    return name, why


def reset():
    """Forget the choice (the next use chooses again)."""
    global _chosen
    _chosen = None


def linear_kernel(w, cols, depth):
    """(function, weights buffer) for a layer's offset-binary W (cols, depth): call
    function(header, buffer) in place of kernels.linear(header, w)."""
    fast = _ensure()[2]
    if fast is None:
        return kernels.linear, w
    return fast.linear, fast.operands(w, cols, depth)


def _fast_attend():
    """int8/fast_attend, imported only where a fast core exists (and so on first use, not
    nested in the imports of the layers: tests/device/test_import_depth.py)."""
    from . import fast_attend
    return fast_attend


def attend_kernel(seq_len, head_dim, score_mult):
    """function(header) running a layer's bound attention header: the fast core (for calls
    without mask or trace, fast_attend.core) when the backend has one, else viper's."""
    fast = _ensure()[2]
    attend = getattr(fast, "attend", None)
    if attend is None or not _fast_attend().fits(score_mult):
        return kernels_attend.attend
    work = None
    if hasattr(fast, "attend_core"):
        attend, work = fast.attend_core(head_dim)
    return _fast_attend().core(attend, seq_len, head_dim, score_mult, work)
