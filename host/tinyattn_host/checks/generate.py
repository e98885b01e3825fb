"""`generate`: a language model writes on the board, its text printed as it comes.

    .venv/bin/python -m tinyattn_host generate MODEL --prompt "Once upon" --steps 40 [--port P]

MODEL is a tinyattn decoder model file (import-llama2c's, float or --int8) and its
tokenizer llama2.c's tokenizer.bin (--tokenizer, default: tokenizer.bin beside MODEL). Both
are checked here, then copied to the board (only when they differ; into the virtual board's
flash folder directly), where tinyattn.generate_text runs with its key/value cache and prints
each token's bytes. At the end: the new tokens and the board's tokens/s (the prompt's tokens
included in the time). Ctrl-C stops the board's generation and exits 130.
"""

import codecs
import hashlib
import shutil
import sys
from pathlib import Path

from mpremote.transport import TransportError

from .. import modelfile
from ..board.board import Board
from ..board.ports import choose
from ..device_modules import device_module
from ..errors import BoardError, InputError, UsageError, bad_file_is_input_error

MARK = b"@@DONE "
BOARD_MODEL, BOARD_TOKENIZER = "generate_model.bin", "generate_tokenizer.bin"  # in its cwd
SILENCE = 120  # seconds without a token after which the board is given up on

SCRIPT = """\
import sys, time, tinyattn
%(load)s
model = load(%(model)r)
tokenizer = tinyattn.read_tokenizer(%(tokenizer)r, %(vocab)d)
out = getattr(sys.stdout, "buffer", sys.stdout)
count = [0]
def each(piece):
    count[0] += 1
    out.write(piece)
start = time.ticks_ms()
tinyattn.generate_text(model, tokenizer, %(prompt)r, %(steps)d, %(temperature)r, %(top_p)r,
                       %(seed)r, each)
print()
print("@@DONE", count[0], time.ticks_diff(time.ticks_ms(), start), len(tokenizer.encode(%(prompt)r)))
"""


def check_files(model_path, tokenizer_path):
    """(vocabulary size, prompt encoder) of a decoder model file and its tokenizer, each read
    here first; InputError naming the file that is not one."""
    with bad_file_is_input_error():
        kind, meta, arrays = modelfile.read_model(model_path)
        config = meta.get("config") if isinstance(meta, dict) else None
        layers = meta.get("layers") if isinstance(meta, dict) else None
        if kind == modelfile.QUANTIZED and layers and isinstance(layers[0], dict) and \
                layers[0].get("kind") == "Embedding":
            vocab = layers[0]["V"]
        elif kind == modelfile.SEQUENTIAL and config and config[0][0] == "Embedding":
            vocab = config[0][1]
        else:
            raise InputError("%s is not a language model (Embedding, DecoderBlock..., "
                             "RMSNorm, Classifier): import one with import-llama2c" % model_path)
        tokenizer = device_module("lm/tokenizer").read_tokenizer(str(tokenizer_path), vocab)
    return vocab, tokenizer


def copy_to_board(board, local, remote):
    """local's bytes at `remote` on the board, unless the same file is there already."""
    data = Path(local).read_bytes()
    if board.virtual is not None:
        shutil.copyfile(local, board.virtual.flash_dir / remote)
        return
    try:
        if board.transport.fs_hashfile(remote, "sha256") == hashlib.sha256(data).digest():
            return
    except (TransportError, OSError):
        pass
    board.transport.fs_writefile(remote, data, chunk_size=1024)


LOADERS = {False: "load = tinyattn.load", True: "from tinyattn.int8 import load"}


def run_generation(board, vocab, prompt, steps, temperature, top_p, seed, out=None,
                   int8=False):
    """Run the board's generation, its text to `out` as it comes; returns (tokens, ms,
    prompt tokens)."""
    out = out or sys.stdout
    code = SCRIPT % dict(load=LOADERS[int8], model=BOARD_MODEL, tokenizer=BOARD_TOKENIZER, vocab=vocab,
                         prompt=prompt, steps=steps, temperature=temperature, top_p=top_p,
                         seed=seed)
    text = codecs.getincrementaldecoder("utf-8")(errors="replace")
    tail = bytearray()
    figures = []  # the bytes after the mark, once it came

    def consume(data):
        data = data.replace(b"\x04", b"")
        if figures:
            figures.append(data)
            return
        tail.extend(data)
        if MARK in tail:
            head, _, rest = bytes(tail).partition(MARK)
            out.write(text.decode(head))
            figures.append(rest)
        elif len(tail) > len(MARK):  # a mark may arrive in pieces: keep its length back
            out.write(text.decode(bytes(tail[:-len(MARK)])))
            del tail[:-len(MARK)]
        out.flush()

    try:
        _, error = board.transport.exec_raw(code, timeout=SILENCE, data_consumer=consume)
    except KeyboardInterrupt:
        board.transport.serial.write(b"\x03")  # the board stops; the raw REPL stays
        try:
            board.transport.read_until(1, b">", timeout=3)
        except TransportError:
            pass
        raise
    except TransportError as err:
        raise BoardError("generation did not finish on %s: %s" % (board.port, err)) from None
    if error:
        last = error.decode(errors="replace").strip().splitlines()[-1]
        hint = (": the model does not fit in the board's free heap (a virtual board: --heap "
                "8m)" if "MemoryError" in last else "")
        raise BoardError("generation failed on the board: %s%s" % (last, hint))
    numbers = b"".join(figures).split()[:3]
    if len(numbers) != 3:
        raise BoardError("the board's generation ended without its figures")
    return tuple(int(v) for v in numbers)


def generate_command(args):
    """The generate command: files checked, copied, text printed, then tokens/s."""
    if args.steps < 1:
        raise UsageError("--steps must be at least 1")
    if args.temperature < 0 or not 0 < args.top_p <= 1:
        raise UsageError("--temperature must be >= 0 and --top-p in (0, 1]")
    tokenizer_path = Path(args.tokenizer or Path(args.model).with_name("tokenizer.bin"))
    if not tokenizer_path.exists():
        raise UsageError("no tokenizer at %s: give --tokenizer (llama2.c's tokenizer.bin)"
                         % tokenizer_path)
    vocab, tokenizer = check_files(args.model, tokenizer_path)
    prompt_tokens = len(tokenizer.encode(args.prompt))
    with Board(port=choose(args.port), flash_dir=args.flash, heap=args.heap,
               out=lambda *a: print(*a, file=sys.stderr)) as board:
        copy_to_board(board, args.model, BOARD_MODEL)
        copy_to_board(board, tokenizer_path, BOARD_TOKENIZER)
        sys.stdout.write(args.prompt)
        sys.stdout.flush()
        tokens, ms, _ = run_generation(board, vocab, args.prompt, args.steps, args.temperature,
                                       args.top_p, args.seed,
                                       int8=modelfile.read_model(args.model)[0]
                                       == modelfile.QUANTIZED)
    seconds = max(ms, 1) / 1000.0
    print("%d tokens in %.2f s on the board: %.1f tokens/s (%d prompt tokens included: %.1f "
          "positions/s)" % (tokens, seconds, tokens / seconds, prompt_tokens,
                            (tokens + prompt_tokens - 1) / seconds), file=sys.stderr)
    return 0
