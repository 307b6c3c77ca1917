"""Our model format: one versioned, checksummed JSON object per model, any tokenizer family.

::

    {"format": "ubpe-model", "format_version": 1, "checksum": "<sha256 of body>",
     "body": {"variant": "universal" | "classic", "alphabet": [...], "known_words": ...,
              "break_tokens": ..., "regex_str": ..., "stop_tokens": ..., "n_tokens": ...,
              "vocabulary": {"n_base": ..., "merges": ..., "pieces": ..., "weights": ...,
                             "ranks": ...}}}

A byte-level body is ``{"variant": "bytelevel", "pattern": ..., "special_tokens": {...},
"mergeable_ranks": [["<base64>", rank], ...]}``, and ``"unicode": "tiktoken"`` (whose code point
classes its pattern splits by: ``ByteLevelBPE.unicode``) when it is not the `regex` module's, the
default: a model read from a ``.tiktoken`` file keeps tiktoken's (an optional field, so format
version 1 still: a reader before it reads the model with `regex`'s classes, as it did).
Symbols of any type are written with :func:`encode_symbol` (str and int as they are, other
types tagged). Each variant has one writer and one reader in ``BODIES``; the readers build
tokenizers through the families' own constructors (``UBPEBase.restore``,
``ByteLevelBPE.from_mergeable_ranks``).

>>> from ubpe import UBPEClassic
>>> tok = UBPEClassic(alphabet="ab", n_tokens=3)
>>> tok.fit(["abab"], quiet=True)
>>> text = to_json(tok)
>>> detect(text.encode()), from_json(text).tokens_mapper == tok.tokens_mapper
(True, True)
"""

from __future__ import annotations

import math
import os
from itertools import chain

from ..errors import InvalidParameterError, ModelFormatError
from ..files import parse_json, read_text, sha256_hex, unencodable, write_atomically
from .format import Format
from .sniff import UBPE_FORMAT_NAME, ubpe as detect

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any, Callable

    from ..vocabulary import Vocabulary

#: The ``format`` field of our model files.
FORMAT_NAME = UBPE_FORMAT_NAME
FORMAT_VERSION = 1
BYTELEVEL = "bytelevel"
#: the variants of :mod:`ubpe.models.ubpe` (spelled here, as ``BYTELEVEL`` is: recognising a
#: file by :func:`detect` must not import the models, their fit and their kernels)
UNIVERSAL, CLASSIC = "universal", "classic"


def read(path: str | os.PathLike) -> Any:
    """The tokenizer in our model file at ``path``."""
    return from_json(read_text(path), what=str(path))


def write(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write ``tokenizer`` to ``path`` in our format, atomically."""
    try:
        text = to_json(tokenizer)
    except UnicodeEncodeError as exc:
        raise unencodable(path, exc) from None
    write_atomically(path, text)


def to_json(tokenizer: Any) -> str:
    """The text of our model file for ``tokenizer``."""
    writer = BODIES.get(getattr(tokenizer, "variant", None))
    if writer is None:
        raise InvalidParameterError(
            f"our model format holds {', '.join(BODIES)} tokenizers, not "
            + (f"{tokenizer.variant} ones (imported models are read-only)" if getattr(tokenizer, "variant", None)
               else type(tokenizer).__name__)
        )
    return wrap_body(writer[0](tokenizer))


def from_json(text: str, *, what: str = "the model", variant: str | None = None) -> Any:
    """The tokenizer in ``text``; with ``variant``, it must be of that variant."""
    body = _written_body(text, what)
    if body is None:
        body = unwrap_body(parse_json(text, what), what)
    kind = body.get("variant")
    if variant is not None and kind != variant:
        raise ModelFormatError(f"{what} holds a {kind} model, not a {variant} one")
    if not isinstance(kind, str) or kind not in BODIES:
        raise ModelFormatError(f"{what} holds an unknown model variant {kind!r}")
    return BODIES[kind][1](body, what)


# -- the envelope --------------------------------------------------------------------------


def checksum(body: dict) -> str:
    """The SHA-256 of ``body``'s canonical JSON (sorted keys, no spaces, not ASCII-escaped):
    what the ``checksum`` field holds, however the body is spelled in the file."""
    return _digest(_canonical(body))


def _digest(text: str) -> str:
    """The SHA-256 of ``text``'s UTF-8, in hex: a checksum of a canonical body."""
    return sha256_hex(text.encode("utf-8"))


def _canonical(body: dict) -> str:
    import json  # (here: reading a file `wrap_body` wrote needs no json.dumps, and json compiles regexes)

    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


# the envelope as `wrap_body` spells it, up to the checksum and from it to the body
_HEAD = f'{{"format": "{FORMAT_NAME}", "format_version": {FORMAT_VERSION}, "checksum": "'
_TO_BODY = '", "body": '
_DIGITS = 64
# where the checksum ends and the body starts in a file `wrap_body` wrote
_CHECKSUM_END = len(_HEAD) + _DIGITS
_BODY_START = _CHECKSUM_END + len(_TO_BODY)


def wrap_body(body: dict) -> str:
    """Our model file's text for ``body``: the envelope, then the body in its canonical
    spelling, so that a reader hashes the file's own text (`_written_body`) rather than
    spelling the parsed body out again."""
    canonical = _canonical(body)
    return f"{_HEAD}{_digest(canonical)}{_TO_BODY}{canonical}}}"


def _written_body(text: str, what: str) -> dict | None:
    """The body of a file as `wrap_body` writes it, checked by hashing its text; ``None`` for
    any other spelling (an older writer's, an edited file's, a corrupt one), which
    `unwrap_body` then reads and checks field by field. The two agree: a body whose text hashes
    to its checksum is the canonical spelling of the body the file holds, and the envelope
    around it is the one that holds exactly that body (the text parsed alone must be one JSON
    object, and nothing but the final brace follows it)."""
    if not (text.startswith(_HEAD) and text.startswith(_TO_BODY, _CHECKSUM_END) and text.endswith("}")):
        return None
    canonical = text[_BODY_START:-1]
    if _digest(canonical) != text[len(_HEAD):_CHECKSUM_END]:
        return None
    body = parse_json(canonical, what)
    return body if isinstance(body, dict) else None


def unwrap_body(document: Any, what: str) -> dict:
    """The checked body of one of our model files."""
    if not isinstance(document, dict) or document.get("format") != FORMAT_NAME:
        raise ModelFormatError(f"{what} is not a ubpe model file")
    version = document.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise ModelFormatError(f"{what} has no valid format_version")
    if version > FORMAT_VERSION:
        raise ModelFormatError(
            f"{what} has format version {version}; this ubpe reads versions up to {FORMAT_VERSION}"
        )
    if version < 1:
        raise ModelFormatError(f"{what} has an unknown format version {version}")
    body = document.get("body")
    if not isinstance(body, dict):
        raise ModelFormatError(f"{what} has no model body")
    if document.get("checksum") != checksum(body):
        raise ModelFormatError(f"{what} is corrupt: its checksum does not match its content")
    return body


def encode_symbol(symbol: Any) -> Any:
    """A JSON value for a symbol: str/int as they are, other types tagged.

    >>> encode_symbol(("a", 1)), encode_symbol(b"\\x00")
    ({'tuple': ['a', 1]}, {'bytes': '00'})
    """
    if isinstance(symbol, bool):
        return {"bool": symbol}
    if isinstance(symbol, (str, int)):
        return symbol
    if isinstance(symbol, float):
        return {"float": repr(symbol)}
    if isinstance(symbol, bytes):
        return {"bytes": symbol.hex()}
    if isinstance(symbol, tuple):
        return {"tuple": [encode_symbol(s) for s in symbol]}
    if symbol is None:
        return {"none": None}
    raise ModelFormatError(f"symbols of type {type(symbol).__name__} cannot be saved")


def decode_symbol(value: Any) -> Any:
    if isinstance(value, (str, int)) and not isinstance(value, bool):
        return value
    if isinstance(value, dict) and len(value) == 1:
        (tag, payload), = value.items()
        try:
            if tag == "bool" and isinstance(payload, bool):
                return payload
            if tag == "float":
                return float(payload)
            if tag == "bytes":
                return bytes.fromhex(payload)
            if tag == "tuple":
                return tuple(decode_symbol(v) for v in payload)
            if tag == "none":
                return None
        except (TypeError, ValueError, OverflowError):
            pass
    raise ModelFormatError(f"not a saved symbol: {str(value)[:40]}")




def _sorted_symbols(symbols: frozenset | None) -> list[Any] | None:
    if not symbols:
        return None
    return [encode_symbol(s) for s in sorted(symbols, key=repr)]


def _decoded_symbols(values: Any) -> list[Any] | None:
    if values is None:
        return None
    return [decode_symbol(v) for v in values]


# -- UBPE and UBPEClassic ------------------------------------------------------------------


def _ubpe_body(tok: Any) -> dict:
    pipeline = tok.split_pipeline
    known = pipeline.known_words
    return {
        "variant": tok.variant,
        "alphabet": [encode_symbol(s) for s in pipeline.alphabet.symbols],
        "known_words": (
            [[i, w if isinstance(w, str) else [encode_symbol(s) for s in w]] for w, i in known.items()]
            if known
            else None
        ),
        "break_tokens": _sorted_symbols(pipeline.break_tokens),
        "regex_str": pipeline.regex_str,
        "stop_tokens": _sorted_symbols(pipeline.stop_tokens),
        "n_tokens": tok.n_tokens,
        "vocabulary": vocabulary_to_json(tok.vocabulary) if tok.is_fitted else None,
    }


def _ubpe_from_body(body: dict, what: str) -> Any:
    from ..alphabet import Alphabet
    from ..models.ubpe import UBPE, UBPEClassic
    from ..splitting import make_pipeline

    cls = UBPEClassic if body["variant"] == CLASSIC else UBPE
    try:
        alphabet = Alphabet.from_spec([decode_symbol(s) for s in body["alphabet"]])
        known_words = (
            {(w if isinstance(w, str) else tuple(decode_symbol(s) for s in w)): int(i) for i, w in body["known_words"]}
            if body.get("known_words")
            else None
        )
        pipeline = make_pipeline(
            alphabet,
            known_words=known_words,
            break_tokens=_decoded_symbols(body.get("break_tokens")),
            regex_str=body.get("regex_str"),
            stop_tokens=_decoded_symbols(body.get("stop_tokens")),
        )
        n_tokens = int(body["n_tokens"])
    except KeyError as exc:
        raise ModelFormatError(f"{what} is malformed: it has no `{exc.args[0]}`") from None
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelFormatError(f"{what} is malformed: {exc}") from None
    vocabulary = None
    if body.get("vocabulary") is not None:
        vocabulary = vocabulary_from_json(body["vocabulary"])
        n_base = len(alphabet) + len(pipeline.known_words or {})
        if vocabulary.n_base != n_base:
            raise ModelFormatError(f"{what}: the vocabulary's base size does not match the alphabet")
    return cls.restore(pipeline, n_tokens=n_tokens, vocabulary=vocabulary)


def vocabulary_to_json(vocab: Vocabulary) -> dict:
    merges, pieces, weights, ranks = vocab.as_lists()
    return {"n_base": vocab.n_base, "merges": merges, "pieces": pieces, "weights": weights, "ranks": ranks}


def vocabulary_from_json(data: Any) -> Vocabulary:
    from ..vocabulary import Vocabulary

    fields = ("n_base", "merges", "pieces", "weights", "ranks")
    if not isinstance(data, dict) or any(k not in data for k in fields):
        raise ModelFormatError(f"the vocabulary must be an object with {', '.join(fields)}")
    if not all(isinstance(data[k], list) for k in fields[1:]):
        raise ModelFormatError("the vocabulary's merges, pieces, weights and ranks must be arrays")
    n_base = _int(data["n_base"], "n_base")
    pieces = _int_rows(data["pieces"], "piece symbol", "piece")
    merges = _int_rows(data["merges"], "merge id", "merge", 2)
    ranks = data["ranks"] if _all_int32(data["ranks"]) else [_int(r, "rank") for r in data["ranks"]]
    weights = [w for w in data["weights"] if isinstance(w, (int, float)) and not isinstance(w, bool)]
    if len(weights) != len(data["weights"]) or not all(math.isfinite(w) for w in weights):
        raise ModelFormatError("the vocabulary has a weight that is not a finite number")
    if not (len(pieces) == len(weights) == len(merges) == len(ranks)):
        raise ModelFormatError("the vocabulary's pieces, weights, merges and ranks differ in length")
    if len(merges) and not -1 <= min(map(min, merges)) <= max(map(max, merges)) < n_base + len(merges):
        raise ModelFormatError("the vocabulary has a merge with an id outside it")
    return Vocabulary.from_pieces(n_base, pieces, [float(w) for w in weights], merges=merges, ranks=ranks)


def _int_rows(rows: list, item: str, row: str, size: int | None = None) -> list[list[int]]:
    """``rows`` (a JSON array of arrays of 32-bit integers, of ``size`` each if given) as they
    are, checked by whole-list operations (C loops: a 3,000-token model's 20k ids took 18 ms
    one by one); where they fail, the per-item check names the first fault."""
    if set(map(type, rows)) <= {list} and (size is None or set(map(len, rows)) <= {size}):
        if _all_int32(chain.from_iterable(rows)):
            return rows
    return [[_int(x, item) for x in _list(r, row, size)] for r in rows]


def _all_int32(values: Any) -> bool:
    """Whether every value is an int (not a bool) in the int32 range."""
    values = list(values)
    return set(map(type, values)) <= {int} and (not values or (-(2**31) <= min(values) and max(values) < 2**31))


def _list(value: Any, what: str, size: int | None = None) -> list:
    if not isinstance(value, list) or (size is not None and len(value) != size):
        raise ModelFormatError(f"a {what} must be an array{f' of {size}' if size else ''}, got {str(value)[:40]}")
    return value


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise ModelFormatError(f"{what} must be a 32-bit integer, got {str(value)[:40]}")
    return value


# -- ByteLevelBPE --------------------------------------------------------------------------


def _bytelevel_body(tok: Any) -> dict:
    import base64  # (here: a fitted UBPE's load and save do not need it)

    ranks = sorted(tok.mergeable_ranks().items(), key=lambda item: item[1])
    body = {
        "variant": BYTELEVEL,
        "pattern": tok.pattern,
        "special_tokens": dict(tok.special_tokens),
        "mergeable_ranks": [[base64.b64encode(piece).decode("ascii"), rank] for piece, rank in ranks],
    }
    if tok.unicode != "regex":  # (the default: a fitted model's file stays as it was)
        body["unicode"] = tok.unicode
    return body


def _bytelevel_from_body(body: dict, what: str) -> Any:
    ranks, pattern, specials = body.get("mergeable_ranks"), body.get("pattern"), body.get("special_tokens") or {}
    if not isinstance(ranks, list) or not all(
        isinstance(row, list) and len(row) == 2 and isinstance(row[0], str) and isinstance(row[1], int)
        for row in ranks
    ):
        raise ModelFormatError(f"{what} is malformed: `mergeable_ranks` must be an array of [base64, rank] pairs")
    if not isinstance(pattern, str):
        raise ModelFormatError(f"{what} is malformed: `pattern` must be a string")
    from ..text.patterns import UNICODES  # (a fitted UBPE's file imports no text module)

    unicode = body.get("unicode", UNICODES[0])
    if unicode not in UNICODES:
        raise ModelFormatError(f"{what} is malformed: `unicode` must be one of {', '.join(UNICODES)}")
    lines = "\n".join(f"{piece} {rank}" for piece, rank in ranks)
    if not isinstance(specials, dict):
        raise ModelFormatError(f"{what}: special_tokens must be an object of text -> id")
    from ..models.bytelevel import ByteLevelBPE  # (a fitted UBPE is saved without the byte-level modules)
    from .tiktoken import parse_tiktoken

    return ByteLevelBPE.from_mergeable_ranks(parse_tiktoken(lines, what), pattern=pattern, special_tokens=specials,
                                             unicode=unicode)


# variant -> (body writer, body reader)
BODIES: dict[str, tuple[Callable[[Any], dict], Callable[[dict, str], Any]]] = {
    UNIVERSAL: (_ubpe_body, _ubpe_from_body),
    CLASSIC: (_ubpe_body, _ubpe_from_body),
    BYTELEVEL: (_bytelevel_body, _bytelevel_from_body),
}


FORMAT = Format("ubpe", "ubpe model format", detect, read, write)
