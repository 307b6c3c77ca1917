"""The corrupt-file and command-line audit (issue 28): thousands of corrupted model files over
every format ubpe reads, and bad command lines, each classified; a table of counts.

    python -m tests.bad_input.audit --cases 2800 --out /tmp/audit.json

(from the checkout; ``--cli`` / ``--no-cli`` adds or leaves out the command lines, ``--seed``
picks another set of cases, ``--workers`` the processes, ``--seconds`` and ``--memory-gib``
the bounds of one case). ``tests/bad_input/test_audit.py`` runs a small bounded audit in the
default suite and a larger one in the fuzz lane.

The originals are the small models of :mod:`bad_models` (ours, ours byte-level, ubpe 0.3.0 with
and without its ``ubpe_model`` key, ``.tiktoken``, minbpe, ``tokenizer.json``, GGUF of types
gpt2 and llama, sentencepiece BPE and unigram ``.model``) and a small tekken file. Every case
is one original with one mutation of one class:

- ``truncation``: the file cut at a random place;
- ``flip``: one bit of one byte flipped (1 to 3 times);
- ``huge count``: 8 or 4 bytes overwritten with a huge length, or a JSON number replaced with
  a huge one (up to 5,000 digits);
- ``nesting``: a JSON array nested up to 5,000 deep in place of a value, or a GGUF array of
  arrays nested as deep;
- ``nul``: a NUL byte inserted in the raw bytes, or appended to a token of a GGUF or
  sentencepiece vocabulary;
- ``negative type``: a GGUF token type or a sentencepiece piece type set to -1 (or another
  value outside the enum), a JSON integer made negative;
- ``duplicate key``: a JSON key said twice, a GGUF key-value pair said twice, a sentencepiece
  piece defined twice;
- ``overlong piece``: one token made 8 KiB to 4 MiB long.

Each case is loaded in a worker process (a pool of ``--workers``, each under an address-space
bound set with ``resource.setrlimit``) under a time bound (``signal.alarm``; the parent also
kills a worker that does not answer, which counts as a hang) and classified:

``error``
    a `ubpe.errors.UBPEError` whose message names the file (``error (file not named)`` when it
    does not);
``same``
    loads and behaves exactly as the original on the probe: ``n_vocab``, the ids of every probe
    text, the decoding of those ids and of every single id (up to :data:`PROBE_IDS`);
``refused at use``
    loads, and every answer of the probe that differs from the original's is a clear
    `UBPEError` (a symbol no longer in the alphabet, an id no longer decodable): nothing is
    answered differently;
``warned``
    loads with a warning the original's load does not give (the user was told);
``valid``
    loads, no new warning, behaves differently, and the difference is one the format's own
    system produces too (the rule below);
``SILENT WRONG``
    loads, no new warning, behaves differently, and the rule below does not clear it;
``RAW``
    an exception that is not a `UBPEError` (in load or in the probe), MemoryError included;
``HANG``
    the time bound expired.

The rule for ``valid``. A corruption may yield another valid file: a flipped digit in a score,
a changed letter in a piece. Such a file is not read wrong if ubpe reads it as the format's own
system reads it. So a differing load is ``valid`` only when, per format:

- sentencepiece ``.model``: ``sentencepiece.SentencePieceProcessor`` loads the same bytes and
  gives the same ids for every probe text and the same text for every id;
- ``tokenizer.json``: ``tokenizers.Tokenizer`` loads it and gives the same ids and decodings;
- ``.tiktoken``: ``tiktoken``'s ``load_tiktoken_bpe`` reads it and an ``Encoding`` of those
  ranks (with the pattern ubpe announces in its warning, cl100k's) gives the same ids;
- tekken: mistral-common's ``Tekkenizer.from_file`` loads it and gives the same ids;
- minbpe: ``cminbpe.RegexTokenizer(pattern).load`` (minbpe's own format code; its tokenizer
  splits with the pattern it is built with, so it is built with the file's) loads it and gives
  the same ids (``encode_ordinary``);
- GGUF (llama.cpp is not runnable here): the gguf package's ``GGUFReader`` parses the file,
  ubpe's tokens, token types and merges are those llama.cpp takes from the parsed fields (a
  string ends at its first NUL: llama.cpp reads it through ``c_str()``; an empty token is
  ``[EMPTY_<id>]``), and every single id decodes to what llama.cpp's ``token_to_piece`` writes
  for it (`_decodes_as_llama_cpp`). Encoding is not compared here: from the same tokens,
  types and merges, ubpe's ids are llama.cpp's (``tests/spec/test_gguf.py`` on llama.cpp's own
  vocabularies and expected ids);
- ubpe 0.3.0 JSON: the model equals (same ids, same decodings) the one read from the
  reference's fields alone (what ubpe 0.3.0 itself reads; the ``ubpe_model`` key is ours), and
  the probe's round trips hold where the original's do (or the text is refused clearly);
- ours: never (the body is checksummed: a file that loads differently was read wrong).

The command lines (``--cli``): 60+ lines of every command on corrupt files, bad paths, pipes,
FIFOs, ``/dev/zero``, ``/proc`` outputs and bad options, each run as ``python -m ubpe`` in a
subprocess without ``--debug``; ``traceback`` counts those whose output holds a Python
traceback or that exit 70 (a bug), ``clean`` the others.
"""

from __future__ import annotations

import argparse
import base64
import collections
import contextlib
import json
import multiprocessing
import os
import random
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))

from bad_models import (GGUF_ARRAY, GGUF_INT32, gguf_edit, gguf_fields, gguf_join, gguf_key,  # noqa: E402
                        gguf_string_array, gguf_strings, gguf_type_set)

CLASSES = ("truncation", "flip", "huge count", "nesting", "nul", "negative type", "duplicate key", "overlong piece")
OUTCOMES = ("error", "error (file not named)", "same", "refused at use", "warned", "valid", "SILENT WRONG", "RAW",
            "HANG")
BAD_OUTCOMES = ("error (file not named)", "SILENT WRONG", "RAW", "HANG")
PROBE = ["Hello world", "the cat sat on the mat", "a dog met 12 cats!\n", "  two  spaces ", "é ü 你好 😀",
         "<|end|> the", "tab\there", ""]
#: single ids decoded in the probe (the first ones; the small models have a few hundred)
PROBE_IDS = 400
#: overlong piece sizes (bytes); the larger ones are drawn rarely
LONG_SIZES = (9000, 64 << 10, 256 << 10, 1 << 20, 4 << 20)
DEFAULT_SECONDS = 10
DEFAULT_MEMORY_GIB = 4
CLI_SECONDS = 60


# -- the originals ------------------------------------------------------------------------------

def make_originals(folder: Path) -> dict[str, Path]:
    """Every original of the audit, written into ``folder``: kind -> path."""
    import bad_models

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        models = bad_models.fitted_models()
        files = bad_models.model_files(folder, models)
    # ubpe 0.3.0 as ubpe 0.3.0 writes it: the reference's fields only
    data = json.loads(files["ubpe030"].read_text())
    data.pop("ubpe_model")
    files["ubpe030-fields"] = folder / "reference-fields.json"
    files["ubpe030-fields"].write_text(json.dumps(data))
    # a unigram sentencepiece model
    files["sentencepiece-unigram"] = folder / "unigram.model"
    files["sentencepiece-unigram"].write_bytes(bad_models.spm_model_bytes("unigram"))
    files["gguf-llama"] = folder / "llama.gguf"
    bad_models.write_gguf_llama(files["gguf-llama"], files["sentencepiece"].read_bytes())
    # tekken: the byte-level model's ranks (the first 256 are the bytes in order)
    ranks = _tiktoken_ranks(files["tiktoken"])
    pieces = sorted(ranks, key=ranks.get)
    if pieces[:256] != [bytes([b]) for b in range(256)]:
        pieces = [bytes([b]) for b in range(256)] + [p for p in pieces if len(p) > 1]
    specials = ["<unk>", "<s>", "</s>"]
    tekken = {
        "config": {"pattern": r"[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s+", "num_vocab_tokens": len(pieces),
                   "version": "v7", "default_vocab_size": 5 + len(pieces), "default_num_special_tokens": 5},
        "vocab": [{"rank": r, "token_bytes": base64.b64encode(p).decode(), "token_str": _utf8_or_none(p)}
                  for r, p in enumerate(pieces)],
        "special_tokens": [{"rank": k, "token_str": s, "is_control": True} for k, s in enumerate(specials)],
    }
    files["tekken"] = folder / "tekken.json"
    files["tekken"].write_text(json.dumps(tekken))
    return files


def _utf8_or_none(piece: bytes):
    try:
        return piece.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _tiktoken_ranks(path: Path) -> dict[bytes, int]:
    ranks = {}
    for line in path.read_bytes().splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


FORMAT_OF = {"ubpe": "ubpe", "ubpe-bytelevel": "ubpe", "ubpe030": "ubpe030", "ubpe030-fields": "ubpe030",
             "tiktoken": "tiktoken", "minbpe": "minbpe", "hf": "hf", "gguf": "gguf", "gguf-llama": "gguf",
             "sentencepiece": "sentencepiece", "sentencepiece-unigram": "sentencepiece", "tekken": "tekken"}
JSON_KINDS = ("ubpe", "ubpe-bytelevel", "ubpe030", "ubpe030-fields", "hf", "tekken")


# -- GGUF, written and rewritten ------------------------------------------------------------------

def _gguf_mutation(data: bytes, kind: str, rng: random.Random) -> bytes | None:
    tokens_key, types_key, merges_key = "tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges"
    header, fields = gguf_fields(data)
    keys = [gguf_key(k) for k, _ in fields]
    if kind == "nul":
        key = rng.choice([k for k in (tokens_key, merges_key) if k in keys])

        def add_nul(raw):
            strings = gguf_strings(raw)
            i = rng.randrange(len(strings))
            where = rng.choice([len(strings[i]), 0, len(strings[i]) // 2])
            strings[i] = strings[i][:where] + b"\x00" + strings[i][where:]
            return gguf_string_array(strings)
        return gguf_edit(data, key, add_nul)
    if kind == "negative type":
        n_types = (len(dict((gguf_key(k), v) for k, v in fields)[types_key]) - 16) // 4
        return gguf_type_set(data, rng.randrange(n_types), rng.choice([-1, -2, 7, 99, -(2**31), 2**31 - 1, 0, 5]))
    if kind == "duplicate key":
        k = rng.randrange(len(fields))
        return gguf_join(header, fields[:k + 1] + [fields[k]] + fields[k + 1:])
    if kind == "nesting":
        depth = rng.choice([2, 10, 100, 1000, 5000])
        value = struct.pack("<IQ", GGUF_INT32, 1) + struct.pack("<i", 1)
        for _ in range(depth - 1):
            value = struct.pack("<IQ", GGUF_ARRAY, 1) + value
        field = (struct.pack("<Q", 11) + b"general.bad", struct.pack("<I", GGUF_ARRAY) + value)
        return gguf_join(header, fields + [field])
    if kind == "overlong piece":
        size = _long_size(rng)

        def lengthen(raw):
            strings = gguf_strings(raw)
            i = rng.randrange(len(strings))
            strings[i] = (strings[i] or b"a") * (size // max(1, len(strings[i])) + 1)
            return gguf_string_array(strings)
        return gguf_edit(data, tokens_key, lengthen)
    return None


def _long_size(rng: random.Random) -> int:
    return rng.choices(LONG_SIZES, weights=(8, 4, 2, 1, 1))[0]


# -- sentencepiece, rewritten ----------------------------------------------------------------------

def _spm_mutation(data: bytes, kind: str, rng: random.Random) -> bytes | None:
    import sentencepiece.sentencepiece_model_pb2 as pb

    proto = pb.ModelProto()
    proto.ParseFromString(data)
    i = rng.randrange(len(proto.pieces))
    if kind == "nul":
        proto.pieces[i].piece += "\0"
    elif kind == "duplicate key":
        proto.pieces[i].piece = proto.pieces[rng.randrange(len(proto.pieces))].piece
    elif kind == "overlong piece":
        proto.pieces[i].piece = (proto.pieces[i].piece or "a") * (_long_size(rng) // max(1, len(proto.pieces[i].piece)) + 1)
    elif kind == "negative type":
        # an enum value outside sentencepiece's: the varint of the type field written by hand
        value = rng.choice([-1, 0, 7, 99])
        proto.pieces[i].type = 1
        raw = proto.SerializeToString()
        marker = proto.pieces[i].piece.encode()
        at = raw.find(marker)
        type_at = raw.find(b"\x18\x01", at)  # field 3 (type), varint 1
        if at < 0 or type_at < 0:
            return None
        varint = _varint(value & 0xFFFFFFFFFFFFFFFF)
        body = raw[:type_at] + b"\x18" + varint + raw[type_at + 2:]
        return _fix_spm_lengths(body, raw, type_at, len(varint) - 1)
    else:
        return None
    return proto.SerializeToString()


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _fix_spm_lengths(body: bytes, raw: bytes, at: int, grown: int) -> bytes | None:
    """The piece message holding offset ``at`` grew by ``grown`` bytes: fix its length prefix
    (pieces are field 1 of ModelProto, each ``0x0A <varint length> <message>``)."""
    if grown == 0:
        return body
    pos = 0
    while pos < len(raw):
        if raw[pos] != 0x0A:
            return None
        length, n = 0, 0
        while True:
            byte = raw[pos + 1 + n]
            length |= (byte & 0x7F) << (7 * n)
            n += 1
            if not byte & 0x80:
                break
        start, end = pos + 1 + n, pos + 1 + n + length
        if start <= at < end:
            return raw[:pos] + b"\x0A" + _varint(length + grown) + body[start:end + grown] + body[end + grown:]
        pos = end
    return None


# -- JSON and text mutations -------------------------------------------------------------------------

_NUMBER = re.compile(rb"(?<![\w.\"])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_KEY = re.compile(rb'"((?:[^"\\]|\\.)*)"\s*:')


def _json_mutation(data: bytes, kind: str, rng: random.Random) -> bytes | None:
    if kind == "huge count":
        numbers = list(_NUMBER.finditer(data))
        if not numbers:
            return None
        m = rng.choice(numbers)
        huge = rng.choice([b"9" * 20, b"18446744073709551616", b"9223372036854775808", b"1" + b"0" * 4400, b"1e400"])
        return data[:m.start()] + huge + data[m.end():]
    if kind == "negative type":
        numbers = [m for m in _NUMBER.finditer(data) if not m.group().startswith(b"-")]
        if not numbers:
            return None
        m = rng.choice(numbers)
        return data[:m.start()] + rng.choice([b"-1", b"-" + m.group(), b"-9223372036854775809"]) + data[m.end():]
    if kind == "nesting":
        depth = rng.choice([10, 100, 999, 1001, 5000])
        values = list(_KEY.finditer(data))
        if not values:
            return None
        m = rng.choice(values)
        return data[:m.end()] + b"[" * depth + b"1" + b"]" * depth + b"," + data[m.end():] \
            if rng.random() < 0.5 else data[:m.end()] + b"[" * depth + b"]" * depth + b" " + _drop_value(data[m.end():])
    if kind == "duplicate key":
        keys = list(_KEY.finditer(data))
        if not keys:
            return None
        m = rng.choice(keys)
        # the key said again right after itself, with another value: JSON readers keep the last
        value = rng.choice([b"null", b"0", b"{}", b"[]", b'"x"', b"1e9"])
        return data[:m.start()] + m.group() + b" " + value + b", " + data[m.start():]
    if kind == "overlong piece":
        strings = list(re.finditer(rb'"((?:[^"\\]|\\.){1,40})"', data))
        if not strings:
            return None
        m = rng.choice(strings)
        size = _long_size(rng)
        inner = m.group(1)
        return data[:m.start(1)] + inner * (size // len(inner) + 1) + data[m.end(1):]
    return None


def _drop_value(rest: bytes) -> bytes:
    """``rest`` without the JSON value it starts with (a scalar or a balanced bracket run)."""
    rest_stripped = rest.lstrip()
    if not rest_stripped:
        return rest
    if rest_stripped[:1] in b"[{":
        depth, in_string, escaped = 0, False, False
        for k, byte in enumerate(rest_stripped):
            c = bytes([byte])
            if in_string:
                escaped, in_string = (not escaped and c == b"\\"), (in_string if c != b'"' or escaped else False)
                continue
            if c == b'"':
                in_string = True
            elif c in b"[{":
                depth += 1
            elif c in b"]}":
                depth -= 1
                if depth == 0:
                    return rest_stripped[k + 1:]
        return rest
    m = re.match(rb'"(?:[^"\\]|\\.)*"|[^,}\]]*', rest_stripped)
    return rest_stripped[m.end():] if m else rest


def _text_mutation(kind_of_file: str, data: bytes, kind: str, rng: random.Random) -> bytes | None:
    """Mutations of the line formats (.tiktoken, minbpe)."""
    lines = data.split(b"\n")
    if kind == "huge count":
        k = rng.randrange(len(lines))
        parts = lines[k].split(b" ")
        parts[-1] = rng.choice([b"9" * 20, b"1" + b"0" * 4400, b"18446744073709551616", b"4294967296"])
        lines[k] = b" ".join(parts)
        return b"\n".join(lines)
    if kind == "negative type":
        k = rng.randrange(len(lines))
        parts = lines[k].split(b" ")
        parts[rng.randrange(len(parts))] = rng.choice([b"-1", b"-256", b"-0"])
        lines[k] = b" ".join(parts)
        return b"\n".join(lines)
    if kind == "duplicate key":
        k = rng.randrange(len(lines))
        j = rng.randrange(len(lines))
        if kind_of_file == "tiktoken" and rng.random() < 0.5:  # the same token under another rank
            token, _, rank = lines[j].partition(b" ")
            lines[k] = token + b" " + lines[k].partition(b" ")[2]
        else:
            lines.insert(k, lines[j])
        return b"\n".join(lines)
    if kind == "overlong piece":
        size = _long_size(rng)
        if kind_of_file == "tiktoken":
            k = rng.randrange(len(lines))
            rank = lines[k].partition(b" ")[2] or b"0"
            lines[k] = base64.b64encode(b"a" * size) + b" " + rank
        else:  # minbpe: a special token's text, or the pattern line
            if rng.random() < 0.5 and len(lines) > 1:
                lines[1] = b"a" * size
            else:
                lines.insert(3, b"<" + b"x" * size + b"> 9999")
                lines[2] = str(int(lines[2]) + 1).encode() if lines[2].isdigit() else lines[2]
        return b"\n".join(lines)
    if kind == "nesting":
        k = rng.randrange(len(lines))
        depth = rng.choice([10, 1000, 5000])
        lines[k] = b"(" * depth + lines[k] + b")" * depth if kind_of_file == "minbpe" and k == 1 else b"[" * depth + lines[k]
        return b"\n".join(lines)
    return None


def mutate(kind_of_file: str, data: bytes, kind: str, rng: random.Random) -> tuple[bytes, str]:
    """One corrupted file of one class: ``(bytes, description)``."""
    if kind == "truncation":
        where = rng.randrange(len(data))
        return data[:where], f"cut at {where}"
    if kind == "flip":
        out = bytearray(data)
        spots = []
        for _ in range(rng.randint(1, 3)):
            where, bit = rng.randrange(len(out)), rng.randrange(8)
            out[where] ^= 1 << bit
            spots.append(f"{where}:{bit}")
        return bytes(out), "flip " + ",".join(spots)
    structured = None
    if kind_of_file.startswith("gguf"):
        structured = _gguf_mutation(data, kind, rng)
    elif kind_of_file.startswith("sentencepiece"):
        structured = _spm_mutation(data, kind, rng)
    elif kind_of_file in JSON_KINDS:
        structured = _json_mutation(data, kind, rng)
    else:
        structured = _text_mutation(kind_of_file, data, kind, rng)
    if structured is not None and rng.random() < 0.85:
        return structured, f"{kind} (structured)"
    # raw-byte versions of the class
    where = rng.randrange(len(data) + 1)
    if kind == "nul":
        return data[:where] + b"\x00" + data[where:], f"NUL at {where}"
    if kind == "huge count":
        blob = rng.choice([b"\xff" * 8, b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"99999999999999999999"])
        return data[:where] + blob + data[where + len(blob):], f"huge count at {where}"
    if kind == "nesting":
        depth = rng.choice([10, 1000, 5000])
        return data[:where] + b"[" * depth + b"1" + b"]" * depth + data[where:], f"nest {depth} at {where}"
    if kind == "negative type":
        return data[:where] + b"-" + data[where:], f"minus at {where}"
    if kind == "duplicate key":
        a = rng.randrange(len(data))
        b = min(len(data), a + rng.randint(1, 64))
        return data[:where] + data[a:b] + data[where:], f"copy {a}:{b} to {where}"
    size = _long_size(rng)
    return data[:where] + b"a" * size + data[where:], f"{size} bytes at {where}"


def case_spec(index: int, seed: int, kinds: list[str]) -> tuple[str, str, int]:
    """Case ``index``: ``(file kind, mutation class, rng seed)``; kinds and classes in turn."""
    kind = kinds[index % len(kinds)]
    klass = CLASSES[(index // len(kinds)) % len(CLASSES)]
    return kind, klass, seed * 1_000_003 + index


# -- loading and probing -----------------------------------------------------------------------------

class CaseTimeout(Exception):
    pass


@contextlib.contextmanager
def _alarm(seconds: int, error: Exception | None = None):
    """Raise ``error`` (default :class:`CaseTimeout`) in the main thread if the block runs past
    ``seconds`` (SIGALRM; the fuzz lane bounds its cases with it too)."""
    def expire(signum, frame):
        raise error if error is not None else CaseTimeout()

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _call(f, *args):
    """``('ok', value)`` or ``('error', class name)`` for a UBPEError (part of behaviour)."""
    from ubpe.errors import UBPEError

    try:
        return ["ok", f(*args)]
    except UBPEError as exc:
        return ["error", type(exc).__name__]


def _ids_of(encoded):
    """Plain ids of what a tokenizer's ``encode`` returns (imported: ids; fitted: [(ids, score)])."""
    if encoded and isinstance(encoded[0], tuple):
        return list(map(int, encoded[0][0]))
    return [int(i) for i in encoded]


def probe(tok) -> dict:
    """What the audit compares: ids and decodings of the probe, and every single id's text."""
    n = int(tok.n_vocab)
    encodings = [_call(lambda t: _ids_of(tok.encode(t)), text) for text in PROBE]
    decodings = [_call(tok.decode, e[1]) if e[0] == "ok" else e for e in encodings]
    singles = [_call(lambda i: _as_text(tok.decode([i])), i) for i in range(min(n, PROBE_IDS))]
    return {"n_vocab": n, "ids": encodings, "texts": [_jsonable(d) for d in decodings], "singles": singles}


def _as_text(value):
    return value if isinstance(value, str) else repr(value)


def _jsonable(value):
    if value[0] == "ok":
        return ["ok", _as_text(value[1])]
    return value


def only_refuses_more(signature: dict, original: dict) -> bool:
    """Whether every answer that differs from the original's is a clear error (the model
    refuses what the original answered, and answers nothing differently)."""
    if signature["n_vocab"] != original["n_vocab"]:
        return False
    for field in ("ids", "texts", "singles"):
        for now, before in zip(signature[field], original[field]):
            if now != before and now[0] != "error":
                return False
    return True


def round_trips(signature: dict) -> list[bool]:
    return [e[0] == "ok" and d[0] == "ok" and d[1] == text
            for text, e, d in zip(PROBE, signature["ids"], signature["texts"])]


def load_quietly(path: Path, fmt: str | None):
    """``(tokenizer, warning messages)``: warnings recorded, the path cut from their text."""
    import ubpe

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tok = ubpe.load(path, format=fmt)
    return tok, sorted({str(w.message).replace(str(path), "<file>") for w in caught})


def _same_on_probe(ours: dict, ids_of, decode_of) -> bool:
    """Whether a reference gives ubpe's ids on every probe text and ubpe's text back."""
    for text, (status, ids) in zip(PROBE, ours["ids"]):
        if status != "ok":
            return False
        if list(ids_of(text)) != ids:
            return False
    return all(decode_of(ids) == d[1] for (_, ids), d in zip(ours["ids"], ours["texts"]))


def reference_agrees(kind: str, path: Path, tok, signature: dict, original: dict) -> bool:
    """The ``valid`` rule of the module docstring for one differing load."""
    try:
        if kind.startswith("sentencepiece"):
            import sentencepiece as spm

            sp = spm.SentencePieceProcessor(model_proto=path.read_bytes())
            return _same_on_probe(signature, sp.encode, sp.decode)
        if kind == "hf":
            from tokenizers import Tokenizer

            ref = Tokenizer.from_str(path.read_text(encoding="utf-8"))
            return _same_on_probe(signature, lambda t: ref.encode(t, add_special_tokens=False).ids,
                                  ref.decode)
        if kind == "tiktoken":
            import tiktoken
            from tiktoken.load import load_tiktoken_bpe
            from ubpe.text.patterns import PATTERNS

            ranks = load_tiktoken_bpe(str(path))
            enc = tiktoken.Encoding("audit", pat_str=PATTERNS["cl100k"], mergeable_ranks=ranks, special_tokens={})
            return _same_on_probe(signature, enc.encode_ordinary,
                                  lambda ids: enc.decode_bytes(ids).decode("utf-8", "replace"))
        if kind == "tekken":
            from mistral_common.tokens.tokenizers.tekken import Tekkenizer

            ref = Tekkenizer.from_file(str(path))
            return _same_on_probe(signature, lambda t: ref.encode(t, bos=False, eos=False),
                                  lambda ids: ref.decode(ids))
        if kind == "minbpe":
            from cminbpe import RegexTokenizer

            # minbpe's load reads the pattern but its RegexTokenizer splits with the one it was
            # built with: built with the file's (stripped, as load strips it); an empty one is
            # BasicTokenizer's (no split), which writes it
            lines = path.read_text(encoding="utf-8").split("\n")
            pattern = lines[1].strip() if len(lines) > 1 else ""
            ref = RegexTokenizer(pattern or r"[\s\S]+")
            ref.load(str(path))
            return _same_on_probe(signature, ref.encode_ordinary, ref.decode)
        if kind.startswith("gguf"):
            return gguf_reads_as_llama_cpp(path, tok) and _decodes_as_llama_cpp(tok, signature)
        if kind.startswith("ubpe030"):
            return _fields_model_agrees(path, signature) and _round_trips_kept(signature, original)
    except Exception:  # the reference refuses the file (any exception of its own)
        return False
    return False


def _round_trips_kept(signature: dict, original: dict) -> bool:
    """Every probe text the original round-trips still round-trips or is refused clearly."""
    refused = [e[0] == "error" for e in signature["ids"]]
    return all(now or not before or no for now, before, no in zip(round_trips(signature), round_trips(original), refused))


def gguf_reads_as_llama_cpp(path: Path, tok) -> bool:
    """gguf's own reader parses the file, and ubpe's tokens, types and merges are what
    llama.cpp takes from those fields (strings cut at their first NUL, c_str())."""
    import numpy as np
    from gguf import GGUFReader

    reader = GGUFReader(str(path))

    def strings(key):
        field = reader.fields.get(key)
        if field is None:
            return None
        return [bytes(field.parts[i]).split(b"\0")[0] for i in field.data]

    tokens = strings("tokenizer.ggml.tokens")
    texts = [t.encode("utf-8", "surrogateescape") for t in tok.texts]
    if tokens is None or len(tokens) != len(texts):
        return False
    tokens = [t or f"[EMPTY_{i}]".encode() for i, t in enumerate(tokens)]
    if tokens != texts:
        return False
    types_field = reader.fields.get("tokenizer.ggml.token_type")
    if types_field is not None:
        types = np.array([int(types_field.parts[i][0]) for i in types_field.data])[:len(texts)]
        if not np.array_equal(np.where((types < 0) | (types > 6), 0, types), tok.token_types):
            return False
    scores_field = reader.fields.get("tokenizer.ggml.scores")
    if scores_field is not None and hasattr(tok, "scores"):
        scores = np.array([float(scores_field.parts[i][0]) for i in scores_field.data])[:len(texts)]
        if not np.array_equal(scores.astype(np.float32), np.asarray(tok.scores, dtype=np.float32)):
            return False
    merges = strings("tokenizer.ggml.merges")
    if merges is not None and getattr(tok, "_merge_lines", None) is not None:
        if [m.decode("utf-8", "surrogateescape") for m in merges] != list(tok._merge_lines):
            return False
    return True


_BYTE_PIECE = re.compile(r"<0x[0-9A-Fa-f]{2}>")


def _decodes_as_llama_cpp(tok, signature: dict) -> bool:
    """Every probed single id decodes to what llama.cpp's ``token_to_piece`` (with
    ``special=true``) writes for it: control, unknown and user-defined tokens their text, normal
    ones their bytes (gpt2: the GPT-2 alphabet undone; llama: ``▁`` as a space), byte tokens
    their byte, unused and undefined ones nothing; the llama type without its dummy prefix's
    space. Where llama.cpp has no answer ubpe's is taken: a normal gpt2 token outside the GPT-2
    alphabet (llama.cpp writes an ``[UNK_BYTE_0x..]`` marker) and a byte token that is no
    ``<0xXX>`` (llama.cpp reads two hex digits at offset 3 or throws)."""
    from ubpe.models.imported import BYTE, CONTROL, NORMAL, UNKNOWN, USER_DEFINED
    from ubpe.models.ranked_bpe import byte_level_raw

    llama = tok.variant == "gguf:llama"
    unk = tok.special_ids.get("unk")
    for i, (status, text) in enumerate(signature["singles"]):
        kind, piece = int(tok.token_types[i]), tok.texts[i]
        if kind in (CONTROL, UNKNOWN, USER_DEFINED):
            expected = piece.encode("utf-8", "surrogateescape")
        elif kind == NORMAL:
            raw = None if llama else byte_level_raw([piece])[0]
            if not llama and raw is None:
                continue
            expected = piece.replace("\u2581", " ").encode("utf-8", "surrogateescape") if llama else raw
        elif kind == BYTE:
            if not _BYTE_PIECE.fullmatch(piece):
                continue
            expected = bytes([int(piece[3:5], 16)])
        else:
            expected = b""
        if llama and i != unk and tok._adds_dummy_prefix() and expected.startswith(b" "):
            expected = expected[1:]
        if status != "ok" or text != expected.decode("utf-8", "replace"):
            return False
    return True


def _fields_model_agrees(path: Path, signature: dict) -> bool:
    """The model read from ubpe 0.3.0's fields alone (what ubpe 0.3.0 reads) behaves the same."""
    import ubpe.io.ubpe030 as reference_json

    data = json.loads(path.read_text(encoding="utf-8"))
    data.pop(reference_json.EXTRA_KEY, None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fields_only = reference_json.loads(json.dumps(data), what=str(path))
    return probe(fields_only) == signature


# -- the worker ----------------------------------------------------------------------------------------

_STATE: dict = {}


def _worker_setup(folder: str, memory_gib: float) -> None:
    try:
        import resource

        under_asan = "libasan" in Path("/proc/self/maps").read_text() if Path("/proc/self/maps").exists() else False
        if not under_asan and memory_gib > 0:
            limit = int(memory_gib * (1 << 30))
            soft, hard = resource.getrlimit(resource.RLIMIT_AS)
            if soft == resource.RLIM_INFINITY or soft > limit:
                resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    except (ImportError, ValueError, OSError):
        pass
    # tiktoken's load_tiktoken_bpe caches what it reads by path, local files too: off, for the
    # reference reads the case's file as it is now
    os.environ["TIKTOKEN_CACHE_DIR"] = ""
    import ubpe  # noqa: F401  (imported once, before the bound of a case starts)

    originals = json.loads((Path(folder) / "originals.json").read_text())
    _STATE["originals"] = {k: Path(v) for k, v in originals.items()}
    _STATE["scratch"] = Path(tempfile.mkdtemp(prefix="audit-case-", dir=folder))
    _STATE["signatures"] = {}


def _original_signature(kind: str) -> tuple[dict, list[str]]:
    cached = _STATE["signatures"].get(kind)
    if cached is None:
        tok, caught = load_quietly(_STATE["originals"][kind], FORMAT_OF[kind])
        cached = _STATE["signatures"][kind] = (probe(tok), caught)
    return cached


def run_case(spec: tuple[str, str, int], seconds: int) -> dict:
    """One case: mutate, load (with and without ``format=``, by the case's seed), classify."""
    kind, klass, seed = spec
    rng = random.Random(seed)
    original_path = _STATE["originals"][kind]
    data, how = mutate(kind, original_path.read_bytes(), klass, rng)
    path = _STATE["scratch"] / f"{seed}-{original_path.name}"  # a path of its own (no cache by path can mix cases)
    path.write_bytes(data)
    explicit = rng.random() < 0.5
    result = {"kind": kind, "class": klass, "seed": seed, "how": how, "format": FORMAT_OF[kind] if explicit else None,
              "size": len(data)}
    from ubpe.errors import UBPEError

    started = time.perf_counter()
    try:
        original, original_warnings = _original_signature(kind)
        with _alarm(seconds):
            try:
                tok, caught = load_quietly(path, result["format"])
            except UBPEError as exc:
                message = str(exc)
                result["outcome"] = "error" if str(path) in message else "error (file not named)"
                result["message"] = message[:300].replace(str(path), "<file>")
                return result
            signature = probe(tok)
        if signature == original:
            result["outcome"] = "same"
        elif only_refuses_more(signature, original):
            result["outcome"] = "refused at use"
        elif caught != original_warnings:
            result["outcome"] = "warned"
            result["message"] = "; ".join(caught)[:300]
        else:
            with _alarm(seconds):
                agrees = reference_agrees(kind, path, tok, signature, original)
            result["outcome"] = "valid" if agrees else "SILENT WRONG"
    except CaseTimeout:
        result["outcome"] = "HANG"
    except BaseException as exc:  # noqa: BLE001  (what the audit is looking for)
        result["outcome"] = "RAW"
        result["message"] = f"{type(exc).__name__}: {str(exc)[:200]}"
        result["traceback"] = traceback.format_exc()[-1500:]
    finally:
        result["seconds"] = round(time.perf_counter() - started, 3)
        with contextlib.suppress(OSError):
            path.unlink()
    return result


def _serve(connection, folder: str, memory_gib: float, seconds: int) -> None:
    _worker_setup(folder, memory_gib)
    while True:
        spec = connection.recv()
        if spec is None:
            return
        connection.send(run_case(tuple(spec), seconds))


class _Worker:
    """One worker process fed one case at a time; killed (by its pid) when it does not answer."""

    def __init__(self, context, folder: str, memory_gib: float, seconds: int):
        self.connection, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, folder, memory_gib, seconds), daemon=True)
        self.process.start()
        self.spec = None
        self.started = 0.0

    def give(self, spec) -> None:
        self.spec, self.started = spec, time.monotonic()
        self.connection.send(list(spec))

    def stop(self) -> None:
        with contextlib.suppress(OSError, BrokenPipeError):
            self.connection.send(None)
        self.process.join(5)
        if self.process.is_alive():
            self.process.kill()
            self.process.join()


def run_cases(n_cases: int, seed: int = 0, workers: int = 2, seconds: int = DEFAULT_SECONDS,
              memory_gib: float = DEFAULT_MEMORY_GIB, kinds: list[str] | None = None,
              progress: bool = False) -> list[dict]:
    """Run ``n_cases`` cases (see the module docstring); one result dict per case."""
    folder = Path(tempfile.mkdtemp(prefix="ubpe-audit-"))
    try:
        originals = make_originals(folder / "originals")
        kinds = kinds or sorted(originals)
        (folder / "originals.json").write_text(json.dumps({k: str(v) for k, v in originals.items()}))
        context = multiprocessing.get_context("fork")
        pool = [_Worker(context, str(folder), memory_gib, seconds) for _ in range(max(1, workers))]
        pending = [case_spec(i, seed, kinds) for i in range(n_cases)]
        pending.reverse()
        results: list[dict] = []
        deadline = seconds * 3 + 30  # a worker past this is stuck in C code: killed, a hang
        try:
            for worker in pool:
                if pending:
                    worker.give(pending.pop())
            while any(w.spec is not None for w in pool):
                for k, worker in enumerate(pool):
                    if worker.spec is None:
                        continue
                    if worker.connection.poll(0.02):
                        try:
                            results.append(worker.connection.recv())
                        except EOFError:  # the worker died (a crash): a raw failure
                            results.append(_dead(worker.spec, f"worker died (exit {worker.process.exitcode})"))
                            worker.stop()
                            worker = pool[k] = _Worker(context, str(folder), memory_gib, seconds)
                    elif not worker.process.is_alive():
                        results.append(_dead(worker.spec, f"worker died (exit {worker.process.exitcode})"))
                        worker.stop()
                        worker = pool[k] = _Worker(context, str(folder), memory_gib, seconds)
                    elif time.monotonic() - worker.started > deadline:
                        results.append({**_dead(worker.spec, "no answer (killed)"), "outcome": "HANG"})
                        worker.process.kill()
                        worker.process.join()
                        worker = pool[k] = _Worker(context, str(folder), memory_gib, seconds)
                    else:
                        continue
                    worker.spec = None
                    if pending:
                        worker.give(pending.pop())
                    if progress and len(results) % 200 == 0:
                        print(f"  {len(results)}/{n_cases} cases", file=sys.stderr, flush=True)
        finally:
            for worker in pool:
                worker.stop()
        return results
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _dead(spec, why: str) -> dict:
    kind, klass, seed = spec
    return {"kind": kind, "class": klass, "seed": seed, "outcome": "RAW", "message": why}


# -- the command lines -----------------------------------------------------------------------------

def cli_lines(folder: Path) -> list[tuple[str, list[str] | str]]:
    """``(name, argv or a shell line)``: 60+ bad command lines run in ``folder``."""
    corrupt = {
        "cut.json": lambda d: d[: len(d) // 2],
        "flipped.gguf": lambda d: d[:40] + bytes([d[40] ^ 0xFF]) + d[41:],
        "cut.model": lambda d: d[: len(d) // 3],
        "nul.tiktoken": lambda d: d.replace(b" ", b" \x00", 1),
        "deep.json": lambda d: b"[" * 5000 + b"]" * 5000,
        "noise.bin": lambda d: bytes(range(3, 250)) * 4,
    }
    sources = {"cut.json": "universal.json", "flipped.gguf": "vocab.gguf", "cut.model": "spm.model",
               "nul.tiktoken": "vocab.tiktoken", "deep.json": "universal.json", "noise.bin": "universal.json"}
    for name, make in corrupt.items():
        (folder / name).write_bytes(make((folder / sources[name]).read_bytes()))
    (folder / "c.txt").write_text("the cat sat on the mat\nthe dog sat\n" * 3)
    (folder / "bad.txt").write_bytes(b"ab\xff cd\n")
    # one FIFO per line that reads one: the lines run concurrently, and two writers on one FIFO
    # race (a reader may take both writers' bytes and leave the other reader waiting forever)
    for fifo in ("fifo", "fifo-in"):
        with contextlib.suppress(OSError):
            os.mkfifo(folder / fifo)
    lines: list[tuple[str, list[str] | str]] = []
    for model in corrupt:
        lines += [
            (f"encode {model}", ["encode", model, "--text", "the cat"]),
            (f"decode {model}", ["decode", model, "--ids", "1 2"]),
            (f"inspect {model}", ["inspect", model]),
            (f"convert {model}", ["convert", model, "out.json"]),
            (f"view {model}", ["view", model, "--text", "the"]),
            (f"compare {model}", ["compare", model, "--text", "the"]),
        ]
    lines += [
        ("encode missing model", ["encode", "nope.json", "--text", "the"]),
        ("encode model /dev/zero", ["encode", "/dev/zero", "--text", "the"]),
        ("encode model /dev/null", ["encode", "/dev/null", "--text", "the"]),
        ("encode input /dev/zero", ["encode", "universal.json", "/dev/zero"]),
        ("fit /dev/zero", ["fit", "/dev/zero", "-o", "o.json"]),
        ("fit -o /proc", ["fit", "c.txt", "-o", "/proc/ubpe-audit.json"]),
        ("convert -o /proc", ["convert", "universal.json", "/proc/x.json"]),
        ("fit -o a folder", ["fit", "c.txt", "-o", "."]),
        ("encode a folder", ["encode", ".", "--text", "the"]),
        ("encode bad utf-8", ["encode", "universal.json", "bad.txt"]),
        ("encode model from a pipe", "python -m ubpe encode <(cat universal.json) --text 'the cat'"),
        ("encode input from a pipe", "python -m ubpe encode universal.json <(cat c.txt)"),
        ("fit from stdin pipe", "cat c.txt | python -m ubpe fit - -o o2.json"),
        ("encode corrupt model from a pipe", "python -m ubpe encode <(cat cut.json) --text the"),
        ("encode gguf from a pipe", "python -m ubpe encode <(cat flipped.gguf) --text the"),
        ("encode model from a FIFO", "(cat universal.json > fifo &) ; python -m ubpe encode fifo --text 'the'"),
        ("encode input from a FIFO", "(cat c.txt > fifo-in &) ; python -m ubpe encode universal.json fifo-in"),
        ("decode ids 2**63", ["decode", "universal.json", "--ids", str(2**63)]),
        ("encode --ints 2**63", ["encode", "universal.json", "--ints", "--text", f"1 {2**63}"]),
        ("compare --encoders ''", ["compare", "universal.json", "--text", "the", "--encoders", ""]),
        ("encode --top-n huge", ["encode", "universal.json", "--text", "the", "--top-n", str(2**70)]),
        ("encode --option bad", ["encode", "universal.json", "--text", "the", "--option", "=="]),
        ("encode unknown encoder", ["encode", "universal.json", "--text", "the", "--encoder", "x" * 5000]),
        ("decode --ids garbage", ["decode", "universal.json", "--ids", "[[[[["]),
        ("inspect --tree huge", ["inspect", "universal.json", "--tree", str(2**80)]),
        ("no command", []),
        ("unknown option", ["encode", "universal.json", "--colour"]),
        ("convert --to unknown", ["convert", "universal.json", "x.json", "--to", "yaml"]),
        ("fit --n-tokens huge", ["fit", "c.txt", "-o", "o.json", "--n-tokens", str(2**70)]),
        ("decode tiktoken NUL model", ["decode", "nul.tiktoken", "--ids", "1"]),
    ]
    return lines


def run_cli(workers: int = 2, lines: int | None = None) -> list[dict]:
    """Every line of :func:`cli_lines` in a subprocess; ``traceback`` when stderr holds one or
    the exit status is 70 (a bug) or a signal."""
    import bad_models
    from concurrent.futures import ThreadPoolExecutor

    folder = Path(tempfile.mkdtemp(prefix="ubpe-audit-cli-"))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            files = bad_models.model_files(folder, bad_models.fitted_models())
        del files
        chosen = cli_lines(folder)
        if lines is not None:  # spread over the kinds of line: every few
            chosen = chosen[::max(1, len(chosen) // lines)][:lines]
        root = str(HERE.parent.parent)
        env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
        env.pop("UBPE_DEBUG", None)

        def run(line):
            name, argv = line
            command = argv if isinstance(argv, str) else [sys.executable, "-m", "ubpe", *argv]
            try:
                done = subprocess.run(command if isinstance(argv, list) else ["bash", "-c", command.replace(
                    "python -m", f"{sys.executable} -m")], cwd=folder, env=env, capture_output=True,
                    timeout=CLI_SECONDS, stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                return {"line": name, "outcome": "HANG"}
            stderr = done.stderr.decode("utf-8", "replace")
            bad = "Traceback (most recent call last)" in stderr or done.returncode in (70,) or done.returncode < 0
            return {"line": name, "status": done.returncode, "outcome": "traceback" if bad else "clean",
                    "stderr": stderr[-600:]}

        with ThreadPoolExecutor(max(1, workers)) as pool:
            return list(pool.map(run, chosen))
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- the table -------------------------------------------------------------------------------------------

def table(results: list[dict]) -> str:
    """Counts per format kind and outcome, and per mutation class."""
    kinds = sorted({r["kind"] for r in results})
    return counts_table(results, [("format", "kind", kinds), ("mutation class", "class", list(CLASSES))], OUTCOMES)


def counts_table(results: list[dict], groups: list[tuple[str, str, list[str]]], outcomes: tuple[str, ...]) -> str:
    """Counts of each outcome per value of each ``(label, key, values)`` group, and for all
    (``tests/bad_input/lab_audit.py`` prints its table with it too)."""
    width = max(len(v) for _, _, values in groups for v in [*values, "mutation class"]) + 2
    rows = ["".ljust(width) + "".join(o[:12].rjust(13) for o in outcomes) + "total".rjust(8)]
    for label, key, values in groups:
        rows.append(f"-- by {label}")
        for value in values:
            counts = collections.Counter(r["outcome"] for r in results if r[key] == value)
            rows.append(value.ljust(width) + "".join(str(counts[o]).rjust(13) for o in outcomes)
                        + str(sum(counts.values())).rjust(8))
    counts = collections.Counter(r["outcome"] for r in results)
    rows.append("all".ljust(width) + "".join(str(counts[o]).rjust(13) for o in outcomes) + str(len(results)).rjust(8))
    return "\n".join(rows)


def replay(kind: str, klass: str, seed: str, *, seconds: int = DEFAULT_SECONDS,
           memory_gib: float = DEFAULT_MEMORY_GIB) -> int:
    """One case again, in this process: its outcome, and the file kept for a look."""
    folder = Path(tempfile.mkdtemp(prefix="ubpe-audit-replay-"))
    originals = make_originals(folder / "originals")
    (folder / "originals.json").write_text(json.dumps({k: str(v) for k, v in originals.items()}))
    _worker_setup(str(folder), memory_gib)
    result = run_case((kind, klass, int(seed)), seconds)
    data, _ = mutate(kind, originals[kind].read_bytes(), klass, random.Random(int(seed)))
    kept = folder / f"case-{originals[kind].name}"
    kept.write_bytes(data)
    print(json.dumps(result, indent=1))
    print(f"the case's file: {kept}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=2800)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=DEFAULT_SECONDS)
    parser.add_argument("--memory-gib", type=float, default=DEFAULT_MEMORY_GIB)
    parser.add_argument("--cli", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--replay", nargs=3, metavar=("KIND", "CLASS", "SEED"),
                        help="run one case again (from --out's JSON) and print what it found")
    args = parser.parse_args(argv)
    if args.replay:
        return replay(*args.replay, seconds=args.seconds, memory_gib=args.memory_gib)
    started = time.perf_counter()
    results = run_cases(args.cases, seed=args.seed, workers=args.workers, seconds=args.seconds,
                        memory_gib=args.memory_gib, progress=True)
    print(table(results))
    cli = run_cli(args.workers) if args.cli else []
    if cli:
        counts = collections.Counter(r["outcome"] for r in cli)
        print(f"command lines: {len(cli)}, clean {counts['clean']}, traceback {counts['traceback']}, hang {counts['HANG']}")
    bad = [r for r in results if r["outcome"] in BAD_OUTCOMES] + [r for r in cli if r["outcome"] != "clean"]
    for r in bad[:40]:
        print("BAD", json.dumps({k: v for k, v in r.items() if k != "traceback"})[:400])
    print(f"{time.perf_counter() - started:.0f} s")
    if args.out:
        args.out.write_text(json.dumps({"cases": results, "cli": cli}, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
