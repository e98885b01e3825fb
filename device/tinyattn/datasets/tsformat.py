"""The UEA/UCR time-series archive's `.ts` text format, read one series at a time.

Plain Python (no ulab): the device builds a SequenceDataset from it (sequences.load_ts) and
the host reads the very same file with it (tinyattn_host.sequences). The format: `#` comment
lines, `@name value` header lines up to `@data`, then one series a line: its channels
separated by `:`, each channel's values by `,`, the class label last. Every channel of a
series has the same length; lengths may differ between series (`@equalLength false`).
"""

HEADER_KEYS = ("problemname", "timestamps", "missing", "univariate", "dimensions",
               "equallength", "serieslength", "classlabel", "targetlabel", "data")


def read_header(lines):
    """Read the header from the iterator `lines` up to and including `@data`; returns
    {"problem", "dimensions", "classes"}, ValueError naming the line that is not valid."""
    header = {"problem": None, "dimensions": None, "classes": None}
    number = 0
    for number, line in _numbered(lines, 0):
        line = line.strip()
        if not line or line[0] == "#":
            continue
        if line[0] != "@":
            raise ValueError("line %d: %r before @data: not a .ts header line" % (number, line[:40]))
        words = line[1:].split()
        key = words[0].lower()
        if key not in HEADER_KEYS:
            raise ValueError("line %d: unknown .ts header @%s" % (number, words[0]))
        if key == "data":
            if header["classes"] is None:
                raise ValueError("line %d: @data without @classLabel true ...: tinyattn reads "
                                 "classification problems only" % number)
            header["dimensions"] = header["dimensions"] or 1
            header["first_line"] = number + 1
            return header
        if key == "problemname" and len(words) > 1:
            header["problem"] = words[1]
        elif key == "dimensions":
            header["dimensions"] = _count(words, number)
        elif key == "missing" and words[1:] == ["true"]:
            raise ValueError("line %d: @missing true: series with missing values are not read"
                             % number)
        elif key == "timestamps" and words[1:] == ["true"]:
            raise ValueError("line %d: @timeStamps true: series with time stamps are not read"
                             % number)
        elif key == "classlabel" and len(words) > 1 and words[1] == "true":
            if len(words) < 3:
                raise ValueError("line %d: @classLabel true without class names" % number)
            header["classes"] = words[2:]
    raise ValueError("the file ends before @data (%d lines)" % number)


def _numbered(lines, number):
    """(number, line) of each line, counting on from `number`; a ValueError naming the line,
    not a bare UnicodeError, at a byte that is not UTF-8."""
    lines = iter(lines)
    while True:
        number += 1
        try:
            line = next(lines)
        except StopIteration:
            return
        except UnicodeError:
            raise ValueError("line %d (or one near it: text is decoded in blocks): a byte that "
                             "is not UTF-8; a .ts file is UTF-8 text" % number)
        yield number, line


def _count(words, number):
    try:
        n = int(words[1])
    except (IndexError, ValueError):
        n = 0
    if n < 1:
        raise ValueError("line %d: @dimensions must be an int >= 1" % number)
    return n


def records(lines, header):
    """(frames, label) for each series line after the header: frames a list of its time
    steps, each a list of `dimensions` floats; label the index of its class in
    header["classes"]. ValueError naming the line that is not a valid series."""
    dims, classes = header["dimensions"], header["classes"]
    for number, line in _numbered(lines, header["first_line"] - 1):
        line = line.strip()
        if not line or line[0] == "#":
            continue
        channels = line.split(":")
        if len(channels) != dims + 1:
            raise ValueError("line %d: %d channels and a label expected, got %d fields"
                             % (number, dims, len(channels)))
        label = channels.pop().strip()
        if label not in classes:
            raise ValueError("line %d: class %r is not one of @classLabel's %s"
                             % (number, label, " ".join(classes)))
        try:
            values = [[float(v) for v in channel.split(",")] for channel in channels]
        except ValueError:
            raise ValueError("line %d: a value that is not a number" % number)
        length = len(values[0])
        for channel in values:
            if len(channel) != length:
                raise ValueError("line %d: channels of different lengths (%d and %d)"
                                 % (number, length, len(channel)))
            for v in channel:
                if v - v != 0:
                    raise ValueError("line %d: NaN or infinity" % number)
        yield [[channel[t] for channel in values] for t in range(length)], classes.index(label)
