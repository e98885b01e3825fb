"""Host side of device tests: send NumPy inputs to MicroPython code, read its outputs back."""

import json
import tempfile
from pathlib import Path

import numpy as np

from tinyattn_host import unixport

SUPPORT_DIR = Path(__file__).parent / "support"


def _write_inputs(path, inputs):
    with open(path, "w") as f:
        for name, value in inputs.items():
            if isinstance(value, np.ndarray):
                shape = " ".join(str(d) for d in value.shape)
                f.write(f"{name} A {shape}\n")
                for row in np.atleast_2d(value):  # one row a line
                    f.write(" ".join(repr(float(v)) for v in row) + "\n")
            else:
                f.write(f"{name} J\n{json.dumps(value)}\n")


def _read_outputs(stdout):
    outputs = {}
    lines = stdout.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("@@OUT "):
            continue
        _, name, kind, *shape = line.split()
        body = lines[i + 1]
        if kind == "J":
            outputs[name] = json.loads(body)
        else:
            values = np.array([float(v) for v in body.split()], dtype=np.float64)
            outputs[name] = values.reshape([int(d) for d in shape])
    return outputs


def run_device(code, inputs=None, heap="64m", timeout=600, device_dir=unixport.DEVICE_DIR):
    """Run `code` on the unix port with `IN` (the inputs) and `OUT` (a dict to fill).

    Returns OUT as NumPy arrays and plain values; raises unixport.MicroPythonError when the
    code raises. `heap` sets the MicroPython heap (for example "128k"); the default is roomy
    because the stand-in's Python lists take far more memory than ulab's buffers.
    `device_dir` holds the tinyattn package to run (device/, or a compiled copy).
    """
    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "inputs.txt"
        _write_inputs(data, inputs or {})
        script = Path(tmp) / "case.py"
        body = "\n".join("    " + line for line in code.strip("\n").splitlines())
        script.write_text(
            "import devio\nfrom ulab import numpy as np\n"
            f"IN = devio.load({str(data)!r})\n"
            "OUT = {}\n"
            "def _case():\n"
            f"{body}\n"
            "_case()\n"
            "devio.dump(OUT)\n"
        )
        stdout = unixport.run_file(script, heap=heap, extra_path=[SUPPORT_DIR], timeout=timeout,
                                  device_dir=device_dir)
    return _read_outputs(stdout)
