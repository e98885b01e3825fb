"""python -m tinyattn_host.emulator [--doc docs/performance.md]: every int8 kernel's
xtensawin code run in qemu-system-xtensa, its executed instructions per MAC printed beside
chipcost's static estimate (and written into the page --doc)."""

import argparse
import sys

from .counts import section, write_section
from .machine import Emulator
from .qemu import EmulatorError, missing_reason


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m tinyattn_host.emulator",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--doc", help="a markdown page to put the section into")
    args = parser.parse_args(argv)
    missing = missing_reason()
    if missing:
        sys.exit("emulator: %s" % missing)
    try:
        with Emulator() as emu:
            text = section(emu)
    except EmulatorError as err:
        sys.exit("emulator: %s" % err)
    print(text)
    if args.doc:
        write_section(args.doc, text)
        print("wrote %s" % args.doc, file=sys.stderr)


if __name__ == "__main__":
    main()
