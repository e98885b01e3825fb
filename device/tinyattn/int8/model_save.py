"""Writing an int8 model's file (QSequential.save): store's format, kind "quantized", its
description as canonical JSON, checked first as a load checks it (spec.check_description).

A model runs none of this: QSequential.save imports it and lets it go again (tinyattn/let_go.py) with
the file's and the check's modules it imported, so a saved model holds no more than before.
"""

import sys

from ..let_go import let_go
from .classes import check_modules

# What a save imports (the file's format and writer; and the description's check, whose
# modules classes.check_modules names): let go after.
SAVE_ONLY = ("tinyattn.int8.model_save", "tinyattn.store", "tinyattn.stored_arrays",
             "tinyattn.canonical_json", "tinyattn.crc", "tinyattn.float32")


def save(model, path):
    """Write `model` to `path`: the bytes the host's quantizer writes for the same model.
    ValueError, and nothing written, for a model that load would refuse."""
    before = set(sys.modules) - {__name__}  # (this one goes after each save)
    try:
        from .. import store
        from ..canonical_json import dumps
        from ..link.wire import FILE_QUANTIZED as QUANTIZED
        from .spec import check_description

        description, arrays = model.description(), model.named_arrays()
        try:
            check_description(description, dict((name, (code, tuple(shape)))
                                                 for name, _, code, shape in arrays))
        except ValueError as err:
            raise ValueError("%s not saved: %s" % (path, err))
        store.write_file(path, QUANTIZED, dumps(description), arrays)
    finally:
        let_go(before, SAVE_ONLY + check_modules())
