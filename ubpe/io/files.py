"""Model files: ubpe 0.3.0's JSON and our own versioned format.

*Reference JSON* (``dumps``/``loads``) has the fields ``n_tokens``, ``alphabet`` (symbol ->
id), ``known_words`` (id -> word), ``break_tokens``, ``regex_str``, ``stop_tokens``,
``mapper`` (token -> pair or piece) and ``weights`` (token -> idf). JSON object keys are
strings, so the symbol type is lost; we infer it (see :func:`infer_symbol_type`).

*Our format* (``save``/``load``) is one JSON object::

    {"format": "ubpe-model", "format_version": 1, "checksum": "<sha256 of body>",
     "body": {"variant": "universal" | "classic", "alphabet": [...], "known_words": ...,
              "break_tokens": ..., "regex_str": ..., "stop_tokens": ..., "n_tokens": ...,
              "vocabulary": {"n_base": ..., "merges": ..., "pieces": ..., "weights": ...,
                             "ranks": ...}}}

Symbols of any type are written with :func:`encode_symbol` (str and int as they are, other
types tagged). Files are written atomically: a temporary file in the same folder, flushed
and synced, then renamed over the target, so a crash never leaves half a model.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ModelFormatError

FORMAT_NAME = "ubpe-model"
FORMAT_VERSION = 1


# -- symbols ------------------------------------------------------------------------------


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
        except (TypeError, ValueError):
            pass
    raise ModelFormatError(f"not a saved symbol: {str(value)[:40]}")


# -- atomic files -------------------------------------------------------------------------


def write_atomically(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see the old file or the new, never half."""
    target = Path(path)
    handle = tempfile.NamedTemporaryFile(
        "w", encoding="utf-8", dir=target.parent, prefix=f".{target.name}.", suffix=".tmp", delete=False
    )
    try:
        with handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(handle.name, target)
    except BaseException:
        Path(handle.name).unlink(missing_ok=True)
        raise


def read_text(path: str | os.PathLike) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ModelFormatError(f"{path} is not a ubpe model (not UTF-8 text): {exc}") from None


def parse_json(text: str, what: str) -> Any:
    try:
        return json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise ModelFormatError(f"{what} is not valid JSON (corrupt or truncated?): {exc}") from None


# -- our format ---------------------------------------------------------------------------


def checksum(body: dict) -> str:
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def wrap_body(body: dict) -> str:
    return json.dumps(
        {"format": FORMAT_NAME, "format_version": FORMAT_VERSION, "checksum": checksum(body), "body": body},
        ensure_ascii=False,
    )


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


def vocabulary_to_json(vocab) -> dict:
    bounds = vocab.piece_offsets.tolist()
    flat = vocab.piece_symbols.tolist()
    return {
        "n_base": vocab.n_base,
        "merges": vocab.merges.tolist(),
        "pieces": [flat[bounds[t] : bounds[t + 1]] for t in range(vocab.n_merged)],
        "weights": [float(w) for w in vocab.weights.tolist()],
        "ranks": vocab.ranks.tolist(),
    }


def vocabulary_from_json(data: Any):
    from ..vocabulary import Vocabulary

    try:
        n_base = _int(data["n_base"], "n_base")
        pieces = data["pieces"]
        weights = [float(w) for w in data["weights"]]
        merges = np.asarray(data["merges"], dtype=np.int64).reshape(-1, 2)
        ranks = [_int(r, "rank") for r in data["ranks"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ModelFormatError(f"the vocabulary is malformed: {exc}") from None
    if not (len(pieces) == len(weights) == len(merges) == len(ranks)):
        raise ModelFormatError("the vocabulary's pieces, weights, merges and ranks differ in length")
    if not all(math.isfinite(w) for w in weights):
        raise ModelFormatError("the vocabulary has a weight that is not a finite number")
    if len(merges) and (merges.min() < -1 or merges.max() >= n_base + len(merges)):
        raise ModelFormatError("the vocabulary has a merge with an id outside it")
    try:
        return Vocabulary.from_pieces(
            n_base, [[_int(s, "piece symbol") for s in p] for p in pieces], weights, merges=merges, ranks=ranks
        )
    except TypeError as exc:
        raise ModelFormatError(f"the vocabulary is malformed: {exc}") from None


def _int(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelFormatError(f"{what} must be an integer, got {str(value)[:40]}")
    return value


# -- reference JSON -----------------------------------------------------------------------


def infer_symbol_type(model: dict) -> type:
    """The symbol type of a reference JSON model, which stores alphabet keys as strings.

    Typed JSON values elsewhere in the model decide first (break/stop tokens, known words);
    otherwise keys that all read as canonical integers (``"0"``, ``"17"``) mean int, and
    anything else str. A str alphabet made only of digits therefore needs ``token_type=str``.
    """
    for field in ("break_tokens", "stop_tokens"):
        values = model.get(field) or []
        if values and all(isinstance(v, str) for v in values):
            return str
        if values and all(isinstance(v, int) and not isinstance(v, bool) for v in values):
            return int
    words = list((model.get("known_words") or {}).values())
    if words and all(isinstance(w, str) for w in words):
        return str
    if words and all(isinstance(w, list) for w in words):
        flat = [s for w in words for s in w]
        if flat and all(isinstance(s, int) and not isinstance(s, bool) for s in flat):
            return int
        if flat and all(isinstance(s, str) for s in flat):
            return str
    keys = list(model.get("alphabet", {}).keys())
    if keys and all(_is_canonical_int(k) for k in keys):
        return int
    return str


def _is_canonical_int(text: str) -> bool:
    try:
        return str(int(text)) == text
    except ValueError:
        return False
