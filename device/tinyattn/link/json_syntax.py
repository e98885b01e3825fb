"""Strict JSON syntax (RFC 8259), checked before MicroPython's json.loads sees the text.

MicroPython's parser takes ',' and ':' as blanks: it reads '{"a":}' as {} and '[1 2]' as
[1, 2]. check() refuses every text that is not exactly one JSON value: in one pass over the
bytes, with a stack of open brackets (no recursion, so no depth limit but the text's length).
"""

_BLANK = b" \t\n\r"
_ESCAPES = b'"\\/bfnrtu'
_HEX = b"0123456789abcdefABCDEF"
_DIGITS = b"0123456789"
_WORDS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}


def check(data):
    """ValueError saying what is wrong and at which byte, unless `data` (bytes) is one JSON
    value in UTF-8, blanks around it allowed."""
    try:
        str(data, "utf-8")
    except UnicodeError:
        raise ValueError("not UTF-8")
    n = len(data)
    open_ = []  # the opening byte, { or [, of each container not yet closed
    i = _blanks(data, 0)
    while True:
        # a value starts at i
        if i >= n:
            raise ValueError("a value is missing at byte %d" % i)
        c = data[i]
        if c == 123 or c == 91:  # { [
            open_.append(c)
            i = _blanks(data, i + 1)
            if i < n and data[i] == c + 2:  # } ]: empty
                open_.pop()
                i += 1
            else:
                if c == 123:
                    i = _key(data, i)
                continue
        elif c == 34:  # "
            i = _string(data, i)
        elif c == 45 or c in _DIGITS:
            i = _number(data, i)
        elif c in _WORDS:
            word = _WORDS[c]
            if data[i:i + len(word)] != word:
                raise ValueError("unknown word at byte %d" % i)
            i += len(word)
        else:
            raise ValueError("unexpected %r at byte %d" % (chr(c), i))
        # after a value: a comma, a closing bracket, or the end
        while True:
            i = _blanks(data, i)
            if not open_:
                if i != n:
                    raise ValueError("text after the value at byte %d" % i)
                return
            if i < n and data[i] == 44:  # ,
                i = _blanks(data, i + 1)
                if open_[-1] == 123:
                    i = _key(data, i)
                break
            if i < n and data[i] == open_[-1] + 2:
                open_.pop()
                i += 1
                continue
            raise ValueError("',' or '%s' expected at byte %d" % (chr(open_[-1] + 2), i))


def _blanks(data, i):
    n = len(data)
    while i < n and data[i] in _BLANK:
        i += 1
    return i


def _key(data, i):
    """Past a member's key and its ':' (and the blanks after them)."""
    if i >= len(data) or data[i] != 34:
        raise ValueError("a string key expected at byte %d" % i)
    i = _blanks(data, _string(data, i))
    if i >= len(data) or data[i] != 58:  # :
        raise ValueError("':' expected at byte %d" % i)
    return _blanks(data, i + 1)


def _string(data, i):
    """Past the string that starts (with its quote) at byte i."""
    start, n = i, len(data)
    i += 1
    while i < n:
        c = data[i]
        if c == 34:
            return i + 1
        if c < 32:
            raise ValueError("a control byte in the string at byte %d" % i)
        if c == 92:  # backslash
            if i + 1 >= n or data[i + 1] not in _ESCAPES:
                raise ValueError("a bad escape in the string at byte %d" % i)
            if data[i + 1] == 117:  # \uXXXX
                for j in range(i + 2, i + 6):
                    if j >= n or data[j] not in _HEX:
                        raise ValueError("a bad \\u escape at byte %d" % i)
                i += 4
            i += 2
        else:
            i += 1
    raise ValueError("the string from byte %d is not closed" % start)


def _number(data, i):
    """Past the number at byte i: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?"""
    start = i
    if data[i] == 45:
        i += 1
    if i < len(data) and data[i] == 48:  # a leading 0 stands alone
        i += 1
    else:
        i = _digits(data, i, start)
    if i < len(data) and data[i] == 46:  # .
        i = _digits(data, i + 1, start)
    if i < len(data) and data[i] in b"eE":
        i += 1
        if i < len(data) and data[i] in b"+-":
            i += 1
        i = _digits(data, i, start)
    return i


def _digits(data, i, start):
    """Past one or more digits at byte i (of the number from `start`)."""
    first = i
    while i < len(data) and data[i] in _DIGITS:
        i += 1
    if i == first:
        raise ValueError("a bad number at byte %d" % start)
    return i
