"""Cases: save and load (.npy), savetxt and loadtxt (text)."""

from ulab import numpy as np

from registry import A, B, V, a, case, path, u8  # noqa: F401


def text(name):
    with open(path(name)) as f:
        return f.read()


def write(name, content):
    with open(path(name), "w") as f:
        f.write(content)


@case
def save_load():
    out = []
    for i, x in enumerate([a(), a().T, u8(), np.array([-3, 300], dtype=np.int16), a() > 0]):
        np.save(path("s%d.npy" % i), x)
        with open(path("s%d.npy" % i), "rb") as f:
            raw = f.read()
        out.append([np.load(path("s%d.npy" % i)), len(raw), raw[:10], raw[10:70].decode()])
    return out


@case
def load_missing():
    return np.load(path("nothere.npy"))


@case
def savetxt_():
    x = a()
    np.savetxt(path("a.txt"), x)
    np.savetxt(path("b.txt"), x, delimiter=",", header="x y z", footer="end")
    np.savetxt(path("c.txt"), np.array([1.5, 2.0, 1e-7]))
    np.savetxt(path("d.txt"), u8())
    np.savetxt(path("e.txt"), x, header="a\nb", comments="% ")
    return [text(n) for n in ("a.txt", "b.txt", "c.txt", "d.txt", "e.txt")]


@case
def loadtxt_():
    np.savetxt(path("a.txt"), a())
    write("f.csv", "# comment\nx,y\n1.5,2\n3,4e-1\n5,6\n")
    write("g.txt", "# c\n1 2\n# mid\n3 4\n")
    write("h.txt", "1\n2\n3\n")
    return [np.loadtxt(path("a.txt")), np.loadtxt(path("f.csv"), delimiter=",", skiprows=2),
            np.loadtxt(path("a.txt"), usecols=(0, 2)), np.loadtxt(path("a.txt"), usecols=1),
            np.loadtxt(path("a.txt"), max_rows=1), np.loadtxt(path("a.txt"), dtype=np.uint8),
            np.loadtxt(path("g.txt")), np.loadtxt(path("g.txt"), skiprows=1),
            np.loadtxt(path("h.txt"))]


@case
def loadtxt_not_a_number():
    write("bad.txt", "1 x\n")
    return np.loadtxt(path("bad.txt"))


@case
def loadtxt_missing():
    return np.loadtxt(path("nothere.txt"))


def npy(name, descr, fortran=False, data=b"\x00" * 16):
    """A .npy file of two items, as NumPy writes one."""
    header = "{'descr': '%s', 'fortran_order': %s, 'shape': (2,), }" % (descr, fortran)
    header += " " * (118 - len(header) - 1) + "\n"
    with open(path(name), "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + bytes([len(header), 0]) + header.encode() + data)
    return path(name)


@case
def load_float64():
    return np.load(npy("f8.npy", "<f8"))


@case
def load_int64():
    return np.load(npy("i8.npy", "<i8"))


@case
def load_fortran_order():
    return np.load(npy("fo.npy", "<f4", fortran=True, data=b"\x00" * 8))


@case
def load_big_endian():
    return np.load(npy("be.npy", ">f4", data=b"\x3f\x80\x00\x00\xc0\x20\x00\x00"))
