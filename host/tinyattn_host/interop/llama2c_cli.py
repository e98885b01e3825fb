"""The import-llama2c and export-llama2c commands of `python -m tinyattn_host`."""

from pathlib import Path

import numpy as np

from .. import modelfile
from ..errors import InputError, bad_file_is_input_error
from .llama2c import model_config, read_checkpoint, write_checkpoint


def import_llama2c_command(args):
    """llama2.c's model.bin to a tinyattn model file; a bad file is exit status 1."""
    with bad_file_is_input_error():
        header, arrays = read_checkpoint(args.checkpoint)
        config = model_config(header)
        if args.int8:
            from ..quantize import model_bytes
            from ..quantize.lm import quantize_lm

            ids = calibration_ids(args, header["vocab_size"])
            data = model_bytes(*quantize_lm(config, arrays, ids))
            with open(args.out, "wb") as f:
                f.write(data)
        else:
            modelfile.write_model(args.out, modelfile.SEQUENTIAL, {"config": config}, arrays)
    print("wrote %s: %s%d decoder blocks, dim %d, %d/%d heads, vocabulary %d, context %d, %s "
          "classifier, %d parameters" % (
              args.out, "int8, " if args.int8 else "", header["n_layers"], header["dim"], header["n_heads"],
              header["n_kv_heads"], header["vocab_size"], header["seq_len"],
              "shared" if header["shared"] else "own",
              sum(a.size for name, a in arrays.items() if not name.startswith("host."))))
    return 0


def export_llama2c_command(args):
    """A tinyattn decoder model file to llama2.c's model.bin; exit status 1 for a model
    llama2.c cannot run."""
    with bad_file_is_input_error():
        kind, meta, arrays = modelfile.read_model(args.model)
        if kind != modelfile.SEQUENTIAL or not isinstance(meta, dict) or "config" not in meta:
            raise InputError("%s is not a float tinyattn model (kind %r)" % (args.model, kind))
        header = write_checkpoint(args.out, meta["config"], arrays)
    print("wrote %s: llama2.c checkpoint, %d layers, dim %d, vocabulary %d"
          % (args.out, header["n_layers"], header["dim"], header["vocab_size"]))
    return 0


CALIBRATION_TOKENS = 4096
"""A text's calibration: its paragraphs' tokens up to this many (64 windows of 64)."""


def calibration_ids(args, vocab):
    """--int8's token ids: a .npy of ints, or a UTF-8 text encoded with the tokenizer
    (--tokenizer, default tokenizer.bin beside the checkpoint), paragraph by paragraph, its
    first CALIBRATION_TOKENS; InputError naming the file."""
    from ..device_modules import device_module

    path = Path(args.int8)
    if not path.is_file():
        raise InputError("--int8 %s: no such calibration file" % path)
    if path.suffix == ".npy":
        ids = np.load(path, allow_pickle=False)
        if ids.ndim != 1 or ids.dtype.kind not in "iu" or not len(ids) or \
                ids.min() < 0 or ids.max() >= vocab:
            raise InputError("--int8 %s: token ids must be a 1-D .npy of ints in [0, %d)"
                             % (path, vocab))
        return ids.tolist()
    tokenizer_path = Path(args.tokenizer or Path(args.checkpoint).with_name("tokenizer.bin"))
    if not tokenizer_path.is_file():
        raise InputError("--int8 %s is a text: its tokenizer.bin is needed (--tokenizer; "
                         "none at %s)" % (path, tokenizer_path))
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as err:
        raise InputError("--int8 %s is not UTF-8 text (byte %d), nor a .npy of token ids"
                         % (path, err.start))
    tokenizer = device_module("lm/tokenizer").read_tokenizer(str(tokenizer_path), vocab)
    ids = []
    for paragraph in text.split("\n\n"):  # each its own <s> text, as a story is; and
        if paragraph.strip() and len(ids) < CALIBRATION_TOKENS:  # run.c's BPE is quadratic
            ids += tokenizer.encode(paragraph.strip())
    ids = ids[:CALIBRATION_TOKENS]
    if len(ids) < 2:
        raise InputError("--int8 %s holds no text to calibrate on" % path)
    return ids
