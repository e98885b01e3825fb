"""ulab's dtypes in the stand-in: their codes, storage, names, and ulab's rules for the dtype
of a result (which are not NumPy's: uint8 + int8 is int16, uint16 + int16 is float)."""

float = 102  # 'f': float32, as a firmware build
uint8 = 66
int8 = 98
uint16 = 72
int16 = 104
bool = 63  # stored as uint8; `a.dtype` of a bool array says uint8 (66), as in ulab

STORAGE = {float: "f", uint8: "B", int8: "b", uint16: "H", int16: "h", bool: "B"}
NAMES = {float: "float32", uint8: "uint8", int8: "int8", uint16: "uint16", int16: "int16",
         bool: "bool"}
ITEMSIZE = {float: 4, uint8: 1, int8: 1, uint16: 2, int16: 2, bool: 1}
_RANGE = {uint8: (0, 256), int8: (-128, 256), uint16: (0, 65536), int16: (-32768, 65536)}

# the dtype of a + b, a - b, a * b (bool counts as uint8), as ulab 6.12 has it
_U8, _I8, _U16, _I16, _F = uint8, int8, uint16, int16, float
_RESULT = {
    _U8: {_U8: _U8, _I8: _I16, _U16: _U16, _I16: _I16},
    _I8: {_U8: _I16, _I8: _I8, _U16: _I16, _I16: _I16},
    _U16: {_U8: _U16, _I8: _I16, _U16: _U16, _I16: _F},
    _I16: {_U8: _I16, _I8: _I16, _U16: _F, _I16: _I16},
}


def result(a, b):
    """The dtype of an arithmetic result of dtypes a and b."""
    a = uint8 if a == bool else a
    b = uint8 if b == bool else b
    if a == float or b == float:
        return float
    return _RESULT[a][b]


def of_scalar(x, like=None):
    """The dtype ulab gives a Python number in arithmetic with an array of dtype `like`:
    `like` for an int that fits in it, else the smallest that holds it (True: uint8)."""
    if x is True or x is False:  # (on MicroPython a bool is no int)
        return uint8
    if isinstance(x, int):
        if like in _RANGE and _RANGE[like][0] <= x < _RANGE[like][0] + _RANGE[like][1]:
            return like
        if 0 <= x < 256:
            return uint8
        if 256 <= x < 65536:
            return uint16
        if -128 <= x < 0:
            return int8
        if -32768 <= x < 0:
            return int16
    return float


def integral(dtype):
    return dtype != float


def wrap(values, dtype):
    """Python numbers stored as `dtype`: floats rounded half away from zero (C's round(), as
    ulab converts them), integers wrapped to the type's width."""
    if dtype == float:
        return values
    if dtype == bool:
        return [1 if v else 0 for v in values]
    low, span = _RANGE.get(dtype, (0, 256))
    out = []
    for v in values:
        if not isinstance(v, int):
            v = int(v + 0.5) if v >= 0 else -int(0.5 - v)
        v %= span
        out.append(v - span if low < 0 and v >= span // 2 else v)
    return out
