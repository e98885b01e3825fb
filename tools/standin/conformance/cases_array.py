"""Cases: the array's attributes, shape, views, indexing, assignment, printing."""

from ulab import numpy as np

from registry import A, B, V, a, case, path, u8  # noqa: F401


@case
def attributes():
    x = a()
    return [x.shape, x.size, x.ndim, x.itemsize, x.dtype, len(x), x.strides, x.T.strides,
            np.zeros(3).shape, (x > 0).dtype, u8().itemsize]


@case
def transpose_reshape_flatten():
    x = a()
    return [x.T, x.transpose(), x.T.T, np.array([1, 2]).T, x.reshape((3, 2)), x.reshape(6),
            x.reshape((-1, 2)), x.T.reshape((6,)), x.flatten(), x.flatten(order="F"),
            x[:, 1:].flatten()]


@case
def reshape_mismatch():
    return a().reshape((4, 2))


@case
def reshape_list():
    return a().reshape([3, 2])


@case
def reshape_3d():
    return np.zeros(4).reshape((1, 2, 2))


@case
def reshape_two_unknowns():
    return np.zeros(4).reshape((-1, -1))


@case
def flatten_bad_order():
    return np.zeros(2).flatten(order="K")


@case
def views_share_memory():
    x = a()
    x.reshape((3, 2))[0, 0] = 100
    x.T[0, 1] = 200
    x[1][2] = 300
    x.flatten()[1] = 400  # a copy
    x.copy()[0, 2] = 500  # a copy
    return x


@case
def tolist_():
    x = a()
    return [x.tolist(), x[0].tolist(), (x > 0).tolist(), u8().tolist(), x[:, 1:].tolist()]


@case
def tobytes_():
    return [np.array([1.0, 2]).tobytes(), u8().tobytes()]


@case
def tobytes_view():
    return np.zeros((2, 3)).T.tobytes()


@case
def indexing():
    x = a()
    return [x[1, 2], x[1], x[-1], x[:, -1], x[:, 1:], x[::-1, ::2], x[0:1, :], x[1, ::-1],
            u8()[3], (x > 0)[0, 0], x[0:0], x[:, 5:], [r for r in x]]


@case
def index_out_of_bounds():
    return a()[5]


@case
def too_many_indices():
    return a()[0, 0, 0]


@case
def slice_assignment():
    x = a()
    x[1] = 7
    x[0, :] = [1, 2, 3]
    x[:, 0] = np.array([8, 9])
    x[1, 1:] = np.array([[0.5, 0.25]])
    x[0, 2] = -1
    return x


@case
def slice_assignment_int_dtype():
    x = np.zeros(4, dtype=np.uint8)
    x[0] = 3.7
    x[1:3] = np.array([1.6, 300.2])
    x[3] = True
    return x


@case
def slice_assignment_bad_shape():
    x = a()
    x[0, :] = np.array([1.0, 2])
    return x


@case
def boolean_index():
    v = np.array(V)
    return [v[v > 0], v[v > 10], u8()[u8() > 1]]


@case
def boolean_assignment():
    v = np.array(V)
    v[v < 0] = 0
    w = np.array(V)
    w[w > 1] = np.array([9.0])
    return [v, w]


@case
def boolean_index_2d():
    x = a()
    return x[x > 0]


@case
def boolean_index_not_bool():
    return np.array(V)[np.array([1.0, 0, 1, 0])]


@case
def boolean_index_length():
    return np.array(V)[np.array([1.0, 0]) > 0]


@case
def printed():
    return [repr(a()), repr(np.array([1, 2])), repr(a() > 0), repr(u8()), repr(np.arange(11.0)),
            repr(np.zeros((2, 12))), repr(np.array([])),
            repr(np.array([-1, 2], dtype=np.int16)), repr(np.array([0.25, -0.5, 1e10]))]


@case
def unknown_names():
    out = []
    for name in ("foo", "abs"):
        try:
            getattr(np, name)
            out.append(name)
        except AttributeError:
            out.append("AttributeError")
    return out
