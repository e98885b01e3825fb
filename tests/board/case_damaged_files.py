"""Damaged model files: random bytes in every region of a saved file, and random cuts.

A float model (tinyattn.save) and an int8 model (QSequential.save) are saved, then copies with
random bytes written into their header, meta block, arrays and CRC-32 + end marker (and
copies cut short) are loaded, over many seeds. Each must fail with a ValueError (not one of
its subclasses, such as UnicodeError) whose message names the file and the damage.
"""

import struct

import check
from tinyattn import iris_model, load, save
from tinyattn.int8 import load as load_int8
from tinyattn.int8 import quantize
from tinyattn.rng import Rng

SEEDS = 40
WORDS = {"header": ("is corrupt", "not a tinyattn model file", "format version"),
         "meta": ("is corrupt",), "arrays": ("is corrupt",), "crc": ("is corrupt",),
         "cut": ("is truncated at byte", "not a tinyattn model file")}


def regions(data):
    """{region: (start, end)} of a model file's bytes (store.py's layout)."""
    kind_end = 12 + struct.unpack_from("<H", data, 10)[0]
    meta_end = kind_end + 4 + struct.unpack_from("<I", data, kind_end)[0]
    return {"header": (0, kind_end), "meta": (kind_end, meta_end),
            "arrays": (meta_end, len(data) - 8), "crc": (len(data) - 8, len(data))}


def damaged(data, start, end, rng):
    """data with 1 to 8 bytes in [start, end) changed to other random values."""
    out = bytearray(data)
    count = min(end - start, 1 + rng.next32() % 8)
    at = start + rng.next32() % (end - start - count + 1)
    for i in range(at, at + count):
        out[i] ^= 1 + rng.next32() % 255
    return out


def refused(loader, data, region):
    """Write data to a scratch file; loading it must raise ValueError naming it and the damage."""
    path = check.path("damaged.bin")
    with open(path, "wb") as f:
        f.write(data)
    try:
        loader(path)
    except ValueError as err:
        message = str(err)
        if type(err) is not ValueError or path not in message \
                or not any(word in message for word in WORDS[region]):
            raise AssertionError("%s in the %s: %s(%r) does not name the file and one of %r"
                                 % ("a cut" if region == "cut" else "damage", region,
                                    type(err).__name__, message, WORDS[region]))
        return
    raise AssertionError("a file damaged in its %s loaded" % region)


def every_region(loader, path):
    with open(path, "rb") as f:
        data = f.read()
    rng = Rng(7)
    for seed in range(SEEDS):
        for region, (start, end) in regions(data).items():
            refused(loader, damaged(data, start, end, rng), region)
        refused(loader, data[:rng.next32() % len(data)], "cut")


def test_a_float_model_file_damaged_anywhere_is_refused_naming_it():
    path = check.path("float.bin")
    save(iris_model(3), path)
    load(path)  # the file itself is good
    every_region(load, path)


def test_an_int8_model_file_damaged_anywhere_is_refused_naming_it():
    model = iris_model(3)
    x = Rng(5).uniform_matrix(12, 4, -2.0, 2.0)
    path = check.path("int8.bin")
    quantize(model, x).save(path)
    load_int8(path)
    every_region(load_int8, path)
