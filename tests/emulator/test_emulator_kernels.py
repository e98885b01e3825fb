"""Every int8 kernel's xtensawin machine code, run in the emulator on the board cases'
configurations and worst-case inputs, bit for bit against the integer reference: the cases of
tests/board/case_kernels.py (linear, attention core, pooling, lookup) and case_qnorm.py
(LayerNorm, adds), fed by tests/device/test_kernels.py and test_qencoder.py."""

import pytest

from emulated_cases import kernel_case_names, run_case, write_case

MODULES = {"case_kernels": "test_kernels:make_fixtures",
           "case_qnorm": "test_qencoder:kernel_fixtures"}


@pytest.fixture(scope="session")
def case_folder(tmp_path_factory):
    """module -> the folder its fixtures are in, written once."""
    import importlib

    made = {}

    def folder(module):
        if module not in made:
            name, _, func = MODULES[module].partition(":")
            fixtures = getattr(importlib.import_module(name), func)()
            made[module] = write_case(tmp_path_factory.mktemp(module), module, fixtures)
        return made[module]

    return folder


@pytest.mark.parametrize("module,name", [(m, n) for m in MODULES for n in kernel_case_names(m)])
def test_board_case_on_the_emulated_chip(emulator, case_folder, module, name):
    before = len(emulator.calls)
    run_case(emulator, case_folder(module), module, name)
    ran = {c.name for c in emulator.calls[before:]}
    assert ran - {"address_distance", "_word_bits"}, "no kernel ran in the emulator"
