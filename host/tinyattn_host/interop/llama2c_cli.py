"""The import-llama2c and export-llama2c commands of `python -m tinyattn_host`."""

from .. import modelfile
from ..errors import InputError, bad_file_is_input_error
from .llama2c import model_config, read_checkpoint, write_checkpoint


def import_llama2c_command(args):
    """llama2.c's model.bin to a tinyattn model file; a bad file is exit status 1."""
    with bad_file_is_input_error():
        header, arrays = read_checkpoint(args.checkpoint)
        config = model_config(header)
        if args.int8:
            raise InputError("--int8 is not available yet: import the float model")
        modelfile.write_model(args.out, modelfile.SEQUENTIAL, {"config": config}, arrays)
    print("wrote %s: %d decoder blocks, dim %d, %d/%d heads, vocabulary %d, context %d, %s "
          "classifier, %d parameters" % (
              args.out, header["n_layers"], header["dim"], header["n_heads"],
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
