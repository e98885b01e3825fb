"""`finetune`: a language model fine-tuned on the board on your own text, and brought back.

    .venv/bin/python -m tinyattn_host finetune MODEL TEXT -o TUNED [--steps 20] [--port P]

MODEL and its tokenizer (generate.py's checks) and the text are copied to the board, where
tinyattn.finetune trains next-token prediction on seeded windows of the text with Adam; each
step's loss is printed as it comes, then the board's time and the heap a step leaves held, and the
tuned model comes back to TUNED (export-llama2c turns it into run.c's model.bin).
"""

import sys
from pathlib import Path

from mpremote.transport import TransportError

from .. import modelfile
from ..board.board import Board
from ..board.ports import choose
from ..errors import BoardError, InputError, UsageError
from .generate import BOARD_MODEL, BOARD_TOKENIZER, check_files, copy_to_board

BOARD_TEXT, BOARD_TUNED = "finetune_text.txt", "finetune_tuned.bin"
MARK = "@@"

SCRIPT = """\
import gc, time, tinyattn
model = tinyattn.load(%(model)r)
tokenizer = tinyattn.read_tokenizer(%(tokenizer)r, %(vocab)d)
text = open(%(text)r).read()
gc.collect()
base = gc.mem_alloc()
peak = [0]
def log(step, loss):
    gc.collect()
    peak[0] = max(peak[0], gc.mem_alloc() - base)
    print("@@LOSS", step, loss)
start = time.ticks_ms()
tinyattn.finetune(model, text, %(steps)d, %(context)d, %(lr)r, %(seed)d, tokenizer, log)
ms = time.ticks_diff(time.ticks_ms(), start)
tinyattn.save(model, %(tuned)r)
print("@@DONE", ms, peak[0])
"""


def finetune_command(args):
    """The finetune command: files checked and copied, losses printed, the model back."""
    if args.steps < 1 or args.context < 1 or not args.lr > 0:
        raise UsageError("--steps and --context must be at least 1 and --lr above 0")
    tokenizer_path = Path(args.tokenizer or Path(args.model).with_name("tokenizer.bin"))
    if not tokenizer_path.exists():
        raise UsageError("no tokenizer at %s: give --tokenizer (llama2.c's tokenizer.bin)"
                         % tokenizer_path)
    if not Path(args.text).is_file():
        raise UsageError("no text file %s" % args.text)
    vocab, _ = check_files(args.model, tokenizer_path)
    if modelfile.read_model(args.model)[0] == modelfile.QUANTIZED:
        raise InputError("%s is an int8 model: fine-tune the float one (import-llama2c "
                         "without --int8), then quantize it" % args.model)
    code = SCRIPT % dict(model=BOARD_MODEL, tokenizer=BOARD_TOKENIZER, vocab=vocab,
                         text=BOARD_TEXT, steps=args.steps, context=args.context, lr=args.lr,
                         seed=args.seed, tuned=BOARD_TUNED)
    pending, done = bytearray(), []

    def consume(data):
        pending.extend(data.replace(b"\x04", b""))
        while b"\n" in pending:
            line, _, rest = bytes(pending).partition(b"\n")
            pending[:] = rest
            words = line.decode(errors="replace").split()
            if words[:1] == ["@@LOSS"]:
                print("step %3d  loss %.4f" % (int(words[1]) + 1, float(words[2])), flush=True)
            elif words[:1] == ["@@DONE"]:
                done.extend(int(w) for w in words[1:3])

    with Board(port=choose(args.port), flash_dir=args.flash, heap=args.heap,
               out=lambda *a: print(*a, file=sys.stderr)) as board:
        copy_to_board(board, args.model, BOARD_MODEL)
        copy_to_board(board, tokenizer_path, BOARD_TOKENIZER)
        copy_to_board(board, args.text, BOARD_TEXT)
        try:
            _, error = board.transport.exec_raw(code, timeout=600, data_consumer=consume)
        except TransportError as err:
            raise BoardError("fine-tuning did not finish on %s: %s" % (board.port, err)) from None
        if error:
            last = error.decode(errors="replace").strip().splitlines()[-1]
            raise BoardError("fine-tuning failed on the board: %s" % last)
        if len(done) != 2:
            raise BoardError("the board's fine-tuning ended without its figures")
        if board.virtual is not None:
            data = (board.virtual.flash_dir / BOARD_TUNED).read_bytes()
        else:
            data = board.transport.fs_readfile(BOARD_TUNED)
    Path(args.out).write_bytes(data)
    print("wrote %s: %d steps in %.1f s on the board; after a step it held %d KB beyond the "
          "loaded model (gradients, Adam's moments)" % (args.out, args.steps, done[0] / 1000.0,
                                                       (done[1] + 1023) // 1024))
    return 0
