"""python -m tinyattn_host.emulator [--doc docs/performance.md]: every int8 kernel's
xtensawin code run in qemu-system-xtensa, its executed instructions per MAC printed beside
chipcost's static estimate (and written into the page --doc)."""

import argparse
import sys

from ..mpy_native import ChipCostError
from .counts import run_section
from .qemu import EmulatorError


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn_host.emulator",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--doc", help="a markdown page to put the section into")
    args = parser.parse_args(argv)
    try:
        print(run_section(args.doc))
    except (EmulatorError, ChipCostError) as err:
        sys.exit("emulator: %s" % err)
    if args.doc:
        print("wrote %s" % args.doc, file=sys.stderr)


if __name__ == "__main__":
    main()
