"""The emulate command: the int8 kernels' section (counts.py) and the language model's
(lm_counts.py) on the emulated chip, printed and written into a page."""

import sys

from . import counts, lm_counts


def emulate_command(args):
    """python -m tinyattn_host emulate [--doc PAGE] (make emulate): print the kernels' section
    and the language model's (lm_counts; write them into PAGE); a missing QEMU or objdump is
    one line (cli.run)."""
    print(counts.run_section(args.doc))
    print(lm_counts.run_section(args.doc)[0])
    if args.doc:
        print("wrote %s" % args.doc, file=sys.stderr)
