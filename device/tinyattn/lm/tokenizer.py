"""llama2.c's tokenizer.bin and its byte-pair encoding, as run.c does them.

Plain Python (no ulab, no micropython): the host runs this very file. The file: int32
max_token_length, then for each token of the vocabulary a float32 score, an int32 length and
that many bytes. Token 1 is <s> (BOS), 2 is </s>; tokens 3..258 are the raw bytes <0x00>..<0xFF>
(sentencepiece's byte fallback).
"""

import struct

BOS, EOS = 1, 2
BYTE_BASE = 3  # token of byte b: b + 3


class Tokenizer:
    """Tokenizer(pieces, scores, max_token_length): pieces a list of bytes, scores of floats."""

    def __init__(self, pieces, scores, max_token_length):
        if len(pieces) != len(scores) or not pieces:
            raise ValueError("a tokenizer needs one score a piece, got %d pieces and %d scores"
                             % (len(pieces), len(scores)))
        self.pieces, self.scores = pieces, scores
        self.max_token_length = max_token_length
        self.ids = None  # piece -> id, made on first encode

    def __len__(self):
        return len(self.pieces)

    def encode(self, text, bos=True, eos=False):
        """run.c's encode: <s>, a dummy " " prefix, each UTF-8 character's token (or its bytes'
        tokens), then the best-scoring adjacent pair merged while one is in the vocabulary."""
        ids = self._ids()
        data = text.encode("utf-8") if isinstance(text, str) else bytes(text)
        tokens = [BOS] if bos else []
        if data:
            if b" " not in ids:
                raise ValueError("the vocabulary has no ' ' piece for the dummy prefix")
            tokens.append(ids[b" "])
        i, n = 0, len(data)
        while i < n:
            j = i + 1
            while j < n and data[j] & 0xC0 == 0x80 and j - i < 4:
                j += 1
            found = ids.get(data[i:j])
            if found is not None:
                tokens.append(found)
            else:
                tokens.extend(b + BYTE_BASE for b in data[i:j])
            i = j
        while True:  # run.c looks at every pair, <s> too
            best, best_score = -1, -1e10
            for k in range(len(tokens) - 1):
                merged = ids.get(self.pieces[tokens[k]] + self.pieces[tokens[k + 1]])
                if merged is not None and self.scores[merged] > best_score:
                    best, best_score, best_id = k, self.scores[merged], merged
            if best < 0:
                break
            tokens[best:best + 2] = [best_id]
        if eos:
            tokens.append(EOS)
        return tokens

    def decode(self, token, prev=BOS):
        """The bytes of one token as run.c prints them: after <s> without a leading space,
        <0xHH> as the byte itself."""
        if not 0 <= token < len(self.pieces):
            raise ValueError("token %r is not in the vocabulary of %d" % (token, len(self.pieces)))
        piece = self.pieces[token]
        if prev == BOS and piece[:1] == b" ":
            piece = piece[1:]
        if len(piece) == 6 and piece[:3] == b"<0x" and piece[5:] == b">":
            try:
                return bytes([int(str(piece[3:5], "ascii"), 16)])
            except ValueError:
                pass
        return piece

    def decode_all(self, tokens, prev=BOS):
        """The bytes of a list of tokens, each decoded after the one before it."""
        out = []
        for token in tokens:
            out.append(self.decode(token, prev))
            prev = token
        return b"".join(out)

    def _ids(self):
        if self.ids is None:
            ids = {}
            for i, piece in enumerate(self.pieces):
                if piece not in ids:  # run.c's binary search finds one of equal pieces
                    ids[piece] = i
            self.ids = ids
        return self.ids

    def to_bytes(self):
        """The tokenizer.bin bytes."""
        out = [struct.pack("<i", self.max_token_length)]
        for piece, score in zip(self.pieces, self.scores):
            out.append(struct.pack("<fi", score, len(piece)) + piece)
        return b"".join(out)


def read_tokenizer(path, vocab_size=None):
    """The Tokenizer of a tokenizer.bin, all its entries (or exactly `vocab_size`); ValueError
    naming the file and the byte where it breaks off."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < 4:
        raise ValueError("%s is not a llama2.c tokenizer: %d bytes" % (path, len(data)))
    max_len = struct.unpack("<i", data[:4])[0]
    if not 1 <= max_len <= 1024:
        raise ValueError("%s: max_token_length %d is not a llama2.c tokenizer's" % (path, max_len))
    pieces, scores, pos = [], [], 4
    while pos < len(data) and (vocab_size is None or len(pieces) < vocab_size):
        if pos + 8 > len(data):
            raise ValueError("%s is truncated at byte %d (token %d)" % (path, len(data), len(pieces)))
        score, n = struct.unpack("<fi", data[pos:pos + 8])
        if not 0 <= n <= max_len:
            raise ValueError("%s: token %d at byte %d has length %d (max_token_length %d)"
                             % (path, len(pieces), pos, n, max_len))
        if pos + 8 + n > len(data):
            raise ValueError("%s is truncated at byte %d: token %d needs %d bytes from byte %d"
                             % (path, len(data), len(pieces), n, pos + 8))
        pieces.append(bytes(data[pos + 8:pos + 8 + n]))
        scores.append(score)
        pos += 8 + n
    if vocab_size is not None and len(pieces) != vocab_size:
        raise ValueError("%s holds %d tokens; the model's vocabulary is %d"
                         % (path, len(pieces), vocab_size))
    if pos != len(data):
        raise ValueError("%s: %d bytes after its %d tokens" % (path, len(data) - pos, len(pieces)))
    return Tokenizer(pieces, scores, max_len)
