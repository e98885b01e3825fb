"""Cases: ulab's dtypes and the ways to make an array."""

from ulab import numpy as np

from registry import A, B, V, a, case, path, u8  # noqa: F401


@case
def dtype_codes():
    return [np.float, np.uint8, np.int8, np.uint16, np.int16, np.bool]


@case
def array_2d():
    return a()


@case
def array_1d_ints_tuple_range():
    return [np.array([1, 2]), np.array((1.5, 2)), np.array(range(3)), np.array([True, False])]


@case
def array_of_arrays():
    return np.array([np.array([1, 2]), np.array([3, 4])])


@case
def array_dtypes():
    return [np.array([1, 0, 2], dtype=d) for d in
            (np.uint8, np.int8, np.uint16, np.int16, np.bool)]


@case
def array_int_wraps():
    return [np.array([-1, 256], dtype=np.uint8), np.array([200], dtype=np.int8)]


@case
def array_from_array_rounds():
    return np.array(np.array([1.7, 2.2, -0.5, 2.5]), dtype=np.int16)


@case
def array_float_list_as_int():
    return np.array([1.5], dtype=np.uint8)


@case
def array_3d():
    return np.array([[[1]]])


@case
def array_scalar():
    return np.array(5)


@case
def array_empty():
    return np.array([])


@case
def zeros_ones_empty():
    return [np.zeros(3), np.zeros((2, 3)), np.zeros([2, 2]), np.ones((2, 2)),
            np.ones(3, dtype=np.uint8), np.empty((1, 2)), np.zeros(0), np.zeros(2, dtype=np.bool)]


@case
def zeros_3d():
    return np.zeros((2, 2, 2))


@case
def zeros_negative():
    return np.zeros(-1)


@case
def full_():
    return [np.full((2, 2), 7), np.full(3, 1.5), np.full(2, 3, dtype=np.uint8),
            np.full((1, 2), True)]


@case
def full_float_in_int():
    return np.full(2, 3.7, dtype=np.uint8)


@case
def eye_():
    return [np.eye(3), np.eye(2, M=3, k=1), np.eye(3, k=-1), np.eye(2, dtype=np.uint8)]


@case
def eye_positional_m():
    return np.eye(2, 3)


@case
def arange_():
    return [np.arange(5), np.arange(5, 0, -2), np.arange(0, 1, 0.25), np.arange(5, dtype=np.float),
            np.arange(3.0), np.arange(1.0, 0, -0.5), np.arange(0), np.arange(32767, 32769)]


@case
def arange_zero_step():
    return np.arange(0, 1, 0)


@case
def linspace_():
    return [np.linspace(0, 1, 5), np.linspace(0, 1, num=4, endpoint=False), np.linspace(1, 0, 3),
            np.linspace(0, 10, 3, dtype=np.uint8), np.linspace(0, 1, 3, retstep=True)]


@case
def linspace_one():
    return np.linspace(2, 3, 1)


@case
def frombuffer_():
    import array
    return [np.frombuffer(bytearray([1, 2, 3]), dtype=np.uint8),
            np.frombuffer(bytearray([1, 2, 3, 4]), dtype=np.uint8, offset=1, count=2),
            np.frombuffer(b"\x00\x00\x80\x3f\x00\x00\x20\xc0"),
            np.frombuffer(bytearray([1, 0, 255, 255]), dtype=np.int16),
            np.frombuffer(array.array("f", [1.5, 2.5]))]


@case
def frombuffer_view_shares():
    buf = bytearray([1, 2, 3])
    v = np.frombuffer(buf, dtype=np.uint8)
    buf[0] = 9
    return v


@case
def frombuffer_bad_length():
    return np.frombuffer(bytearray(5))


@case
def concatenate_():
    x = a()
    return [np.concatenate((x, x)), np.concatenate((x, x), axis=1),
            np.concatenate((np.array([1, 2]), np.array([3]))),
            np.concatenate((np.array([1], dtype=np.uint8), np.array([2], dtype=np.uint8))),
            np.concatenate((x[:, :1], x.T[:1].T), axis=1)]


@case
def concatenate_list():
    return np.concatenate([a(), a()])


@case
def concatenate_mismatch():
    return np.concatenate((a(), np.array([[1.0, 2]])))


@case
def concatenate_dtypes():
    return np.concatenate((np.array([1], dtype=np.uint8), np.array([2.5])))


@case
def concatenate_bad_axis():
    return np.concatenate((np.zeros(2),), axis=1)
