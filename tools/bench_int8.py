"""Print the int8 speed table (tinyattn.bench_int8.run) from the virtual board.

    python tools/bench_int8.py [--repeats N]

The interpreter is the unix port (or $MICROPYTHON, e.g. one built with a real ulab); without
ulab the float path runs on the pure-MicroPython stand-in, so compare against a real ulab too.
"""

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "host"))

from tinyattn_host import unixport  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5, help="timed calls per case")
    args = parser.parse_args()
    command = unixport.interpreter()
    ulab = "real ulab" if unixport.has_ulab(command) else "ulab stand-in"
    print("interpreter: %s (%s)" % (command, ulab))
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "bench.py"
        script.write_text("from tinyattn.bench_int8 import run\nrun(%d)\n" % args.repeats)
        print(unixport.run_file(script, heap="16m", timeout=1800), end="")


if __name__ == "__main__":
    main()
