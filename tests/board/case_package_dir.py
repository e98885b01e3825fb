"""dir() and help() of the package list its public names and import only the submodules those
come from (tests/device/test_package_names.py also runs it in a 128 KB heap, as deployed).

MicroPython's dir() asks the package's __getattr__ for every name the interpreter has
interned, and a name that is a submodule's imports it: so this module is alone in its file
(no other test's names), names no submodule, and asks dir() before anything imports the
package's submodules (which would intern their names). What importing the submodules of
LAZY adds to a fresh interpreter is a fixture: tests/board/scripts/lazy_modules.py, run by
the host."""

import sys

import check




def test_dir_and_help_list_the_public_names_and_import_only_their_modules():
    wanted = check.fixture("lazy")["modules"]  # what importing LAZY's submodules adds
    assert "tinyattn.link.server" not in wanted, "the LAZY names import tinyattn.link.server"
    package = check.fresh_import("tinyattn")
    before = set(sys.modules)
    names = dir(package)
    help(package)
    added = set(sys.modules) - before
    missing = [n for n in list(package.LAZY) + ["Attention", "padding_mask", "__version__"]
               if n not in names]
    check.equal(missing, [], "public names dir() lacks")
    check.equal(sorted(added), sorted(wanted), "modules dir() and help() import")
