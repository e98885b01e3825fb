"""The stand-in's conformance cases, run: on a real ulab, record_conformance.py writes what
they answer to tests/fixtures/standin_conformance.json; on the stand-in,
tests/device/test_standin_conformance.py compares. One JSON line per case, [name, result]:
an array as its dtype, shape and items, a number, or the type of the error raised.

    MICROPYPATH=tools/standin/conformance:... micropython run.py DIR   (DIR: for file cases)
"""

import json

import cases_array  # noqa: F401  (each module registers its cases)
import cases_create  # noqa: F401
import cases_files  # noqa: F401
import cases_functions  # noqa: F401
import cases_operators  # noqa: F401
from registry import CASES, encode


def main():
    for fn in CASES:
        try:
            result = encode(fn())
        except Exception as e:  # the case's answer is the error's type
            result = {"error": type(e).__name__}
        print(json.dumps([fn.__name__, result]))


main()
