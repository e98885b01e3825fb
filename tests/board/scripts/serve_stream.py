"""serve() over a file of frames, its replies written to another file, on the unix port.

    micropython serve_stream.py STREAM REPLIES

The link's fuzz test (tests/e2e/test_link_fuzz.py) runs it before it builds its stream: the
QUANTIZE reply is the device's int8 model, which the host must know (the malformed int8 model
descriptions are made from it, the int8 answers are checked against it) before the stream that
tests/board/case_link_fuzz.py serves can be written.
"""

import sys

from tinyattn import link

with open(sys.argv[1], "rb") as stdin, open(sys.argv[2], "wb") as stdout:
    print(link.serve(timeout=5, stdin=stdin, stdout=stdout))
