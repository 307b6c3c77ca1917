"""ubpe 0.3.0's JSON (the reference's ``dumps``/``loads``), read and written.

The fields are ``n_tokens``, ``alphabet`` (symbol -> id), ``known_words`` (id -> word),
``break_tokens``, ``regex_str``, ``stop_tokens``, ``mapper`` (token -> pair or piece) and
``weights`` (token -> idf). JSON object keys are strings, so the symbol type is lost; we infer
it (see :func:`infer_symbol_type`). The file does not say whether it holds a universal or a
classic model: :func:`guess_variant` reads it off the mapper.

What the format cannot hold (the symbol type, the merges and ranks of a universal model, the
variant) :func:`dumps` carries in one more key, ``"ubpe_model"``: our model body (see
:mod:`ubpe.io.ours`) with a checksum of the reference's fields. The reference's ``loads``
reads its fields by name and ignores the key (``tests/golden/ubpe030_extra_key.json``
records that); our :func:`loads` restores the exact model from it while the checksum matches
the reference's fields, and otherwise (a file edited by another tool) warns and reads the
reference's fields only.

>>> from ubpe import UBPE
>>> tok = UBPE(alphabet="ab", n_tokens=4)
>>> tok.fit(["abab", "abba"], quiet=True)
>>> import json
>>> text = dumps(tok)
>>> detect(text.encode()), guess_variant(json.loads(text))
(True, 'universal')
>>> loads(text).tokens_mapper == tok.tokens_mapper
True
"""

from __future__ import annotations

import itertools
import math
import operator
import os
import warnings
from array import array

from ..errors import IgnoredInputWarning, InvalidParameterError, ModelFormatError, UBPEError
from ..files import parse_json, read_text, write_atomically
from .format import Format
from .sniff import UBPE030_FIELDS, ubpe030 as detect
from .ours import BODIES, CLASSIC, UNIVERSAL, checksum

TYPE_CHECKING = False  # (typing's, without importing typing: see ubpe.files)
if TYPE_CHECKING:
    from typing import Any

    from ..vocabulary import Vocabulary


# the key that carries what the reference's fields cannot hold (the reference ignores it)
EXTRA_KEY = "ubpe_model"

#: The fields of a ubpe 0.3.0 dump; its JSON object starts with one of them (the reference
#: writes n_tokens first; other writers may not keep the order).
FIELDS = UBPE030_FIELDS
# optional fields: (name, type, JSON name); a falsy value means "none"
OPTIONAL = (("known_words", dict, "object"), ("break_tokens", list, "array"), ("stop_tokens", list, "array"),
            ("regex_str", str, "string"))


def read(path: str | os.PathLike, *, variant: str | None = None, token_type: type | None = None) -> Any:
    """The tokenizer in a ubpe 0.3.0 JSON file; ``variant`` (universal or classic) picks the
    class, default: :func:`guess_variant`."""
    return loads(read_text(path), variant=variant, token_type=token_type, what=str(path))


def write(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write ``tokenizer`` (a ``UBPE`` or ``UBPEClassic``) as ubpe 0.3.0 JSON, atomically."""
    write_atomically(path, dumps(tokenizer))


def dumps(tok: Any) -> str:
    """The model as ubpe 0.3.0's JSON (loadable by the reference's ``loads``)."""
    model = _fields(tok)
    model[EXTRA_KEY] = {"fields_checksum": checksum(_as_read(model)), "body": BODIES[tok.variant][0](tok)}
    import json  # (here: reading a reference's file needs no json.dumps, and json compiles regexes)

    return json.dumps(model)


def _fields(tok: Any) -> dict[str, Any]:
    """The reference's fields of ``tok`` (what :func:`dumps` writes beside its body)."""
    if getattr(tok, "variant", None) not in (UNIVERSAL, CLASSIC):
        raise InvalidParameterError(
            f"ubpe 0.3.0 JSON holds universal and classic models, not {getattr(tok, 'variant', type(tok).__name__)} ones"
        )
    pipeline = tok.split_pipeline
    bad = [s for s in pipeline.alphabet.symbols[:1] if not isinstance(s, (str, int, float))]
    if bad:
        raise ModelFormatError(
            f"ubpe 0.3.0's JSON cannot hold {type(bad[0]).__name__} symbols; use `save` instead"
        )
    model: dict[str, Any] = {"n_tokens": tok.n_tokens, "alphabet": tok.alphabet}
    if pipeline.known_words:
        model["known_words"] = {i: (w if isinstance(w, str) else list(w)) for w, i in pipeline.known_words.items()}
    if pipeline.break_tokens:
        model["break_tokens"] = sorted(pipeline.break_tokens)
    if pipeline.regex_str:
        model["regex_str"] = pipeline.regex_str
    if pipeline.stop_tokens:
        model["stop_tokens"] = sorted(pipeline.stop_tokens)
    model["mapper"] = tok.tokens_mapper["backward"]
    model["weights"] = tok.tokens_weights
    return model


def _as_read(fields: dict) -> dict:
    """The reference's fields as a reader sees them (object keys become str)."""
    import json

    return json.loads(json.dumps(fields))


def _reference_fields(tok: Any) -> dict:
    """The reference's fields of ``tok``, as :func:`dumps` writes them and a reader sees them
    (without writing the body and its checksum: a load checks a file's body against its fields
    with this)."""
    return _as_read(_fields(tok))


def loads(
    dump: str, *, variant: str | None = None, token_type: type | None = None, what: str = "the model"
) -> Any:
    """A tokenizer from ubpe 0.3.0's JSON; ``token_type`` is inferred when not given."""
    model = parse_json(dump, what)
    if not isinstance(model, dict) or not isinstance(model.get("alphabet"), dict):
        raise ModelFormatError(f"{what} has no `alphabet` object")
    exact = _from_extra_key(model, what)
    if exact is not None and variant in (None, exact.variant) and token_type in (None, exact.symbol_type):
        return exact  # else the caller reads the reference's fields otherwise, as it asked
    for field in ("mapper", "weights"):
        if not isinstance(model.get(field), dict):
            raise ModelFormatError(f"{what} has no `{field}` object")
    for field, kind, name in OPTIONAL:
        if model.get(field) and not isinstance(model[field], kind):
            raise ModelFormatError(f"{what}'s `{field}` must be a JSON {name}, not {type(model[field]).__name__}")
    columns = _columns(model["mapper"])  # (read once: the variant's guess and the entries)
    guessed = guess_variant(model, columns)
    if variant == UNIVERSAL and guessed == CLASSIC:
        raise ModelFormatError(
            f"{what} holds a classic model (its mapper maps tokens to pairs of merged ids), not a universal one"
        )
    variant = variant or guessed
    if variant not in (UNIVERSAL, CLASSIC):
        raise InvalidParameterError(f"ubpe 0.3.0 JSON holds a universal or classic model, not a {variant} one")
    if token_type is None:
        token_type = infer_symbol_type(model)
    from ..alphabet import Alphabet  # (the model's modules, when a model is read: see ubpe.io.format)
    from ..models.ubpe import UBPE, UBPEClassic
    from ..splitting import make_pipeline

    try:
        alphabet = Alphabet.from_spec({token_type(k): v for k, v in model["alphabet"].items()})
    except (ValueError, TypeError, OverflowError) as exc:
        raise ModelFormatError(f"the model's alphabet does not fit token_type {token_type.__name__}: {exc}") from None
    known_words = None
    if model.get("known_words"):  # falsy values (null, {}, []) mean none, as in the reference
        try:
            known_words = {(w if isinstance(w, str) else tuple(w)): int(i) for i, w in model["known_words"].items()}
        except (TypeError, ValueError, OverflowError) as exc:
            raise ModelFormatError(f"the model's known_words are malformed: {exc}") from None
    pipeline = make_pipeline(
        alphabet,
        known_words=known_words,
        break_tokens=_typed_tokens(model.get("break_tokens"), token_type),
        regex_str=model.get("regex_str"),
        stop_tokens=_typed_tokens(model.get("stop_tokens"), token_type),
    )
    n_base = len(alphabet) + len(pipeline.known_words or {})
    vocabulary = _vocabulary(model["mapper"], model["weights"], n_base, classic=variant == CLASSIC, columns=columns)
    cls = UBPEClassic if variant == CLASSIC else UBPE
    return cls.restore(pipeline, n_tokens=len(vocabulary), vocabulary=vocabulary)


def _from_extra_key(model: dict, what: str) -> Any:
    """The exact model that :func:`dumps` carried in ``EXTRA_KEY``, or None (no key, or a
    key that no longer matches the reference's fields: then a warning says what is lost)."""
    extra = model.pop(EXTRA_KEY, None)
    if extra is None:
        return None
    fields_match = isinstance(extra, dict) and extra.get("fields_checksum") == checksum(model)
    body = extra.get("body") if isinstance(extra, dict) else None
    if fields_match and isinstance(body, dict) and body.get("variant") in (UNIVERSAL, CLASSIC):
        try:
            exact = BODIES[body["variant"]][1](body, what)
        except UBPEError as exc:
            reason = str(exc)
        else:
            _check_body_matches_fields(exact, model, what)
            return exact
    else:
        reason = "it does not match the reference's fields (the file was edited by another tool?)"
    warnings.warn(
        f"{what}: the `{EXTRA_KEY}` key is ignored: {reason}; the model is read from the ubpe 0.3.0 "
        "fields only, which do not hold a universal model's merges and ranks nor the symbol type",
        IgnoredInputWarning,
        stacklevel=4,
    )
    return None


def _check_body_matches_fields(exact: Any, model: dict, what: str) -> None:
    """Refuse a file whose ``ubpe_model`` body (not covered by its checksum, which covers the
    reference's fields) says another model than the fields do: ubpe 0.3.0 reads the fields, we
    would read the body, and the two would give other ids."""
    try:
        written = _reference_fields(exact)
    except UBPEError as exc:
        raise ModelFormatError(f"{what}: the `{EXTRA_KEY}` body holds a model the reference's fields cannot: {exc}") from None
    for field in sorted(set(written) | set(model)):
        if written.get(field) != model.get(field):
            raise ModelFormatError(
                f"{what}: the `{EXTRA_KEY}` body disagrees with the field `{field}` (the file was edited?): "
                "ubpe 0.3.0 would read another model from its fields")


def guess_variant(model: dict, columns: tuple[list, list | None] | None = None) -> str:
    """Universal or classic (the reference's JSON does not say): a classic mapper maps tokens
    to pairs that may hold merged ids; a universal one to runs of base ids only. (``columns``:
    `_columns` of its mapper, where the caller has them.)"""
    sizes = [len(model[k]) if isinstance(model.get(k), dict) else 0 for k in ("alphabet", "known_words")]
    n_base = sum(sizes)
    values, flat = columns if columns is not None else _columns(model.get("mapper"))
    if values and flat is not None and set(map(len, values)) == {2}:  # (the usual file, in C loops)
        return CLASSIC if max(flat) >= n_base else UNIVERSAL
    if values and set(map(type, values)) == {list} and set(map(len, values)) == {2}:
        if any(isinstance(x, int) and x >= n_base for x in itertools.chain.from_iterable(values)):
            return CLASSIC
    return UNIVERSAL


def _columns(mapper: Any) -> tuple[list, list | None]:
    """A mapper's values, and all their items in one list where every value is a list and
    every item an int (a writer's file), else None.

    >>> _columns({"3": [0, 1], "4": [3, 2]}), _columns({"3": [0, 1.0]})[1]
    (([[0, 1], [3, 2]], [0, 1, 3, 2]), None)
    """
    values = list(mapper.values()) if isinstance(mapper, dict) else []
    if not values or set(map(type, values)) != {list}:
        return values, None
    flat = list(itertools.chain.from_iterable(values))
    return values, flat if set(map(type, flat)) == {int} else None


def _vocabulary(mapper: dict, weights: dict, n_base: int, *, classic: bool,
                columns: tuple[list, list | None] | None = None) -> Vocabulary:
    from ..vocabulary import Vocabulary

    columns = columns if columns is not None else _columns(mapper)
    usual = _usual_entries(mapper, weights, n_base, classic, columns)
    seqs, token_weights = usual if usual is not None else _checked_entries(mapper, weights, n_base, classic)
    if classic and usual is not None:  # (the usual entries' ids are the mapper's flat column)
        # the pairs checked (ints from 0, below the vocabulary's size): their ids as they are
        return Vocabulary._of_pairs(n_base, seqs, token_weights, None, array("i", columns[1]))
    if classic:
        return Vocabulary.from_pairs(n_base, seqs, token_weights)  # (pairs: no numpy)
    return Vocabulary.from_pieces(n_base, seqs, token_weights)


def _checked_entries(mapper: dict, weights: dict, n_base: int, classic: bool) -> tuple[list, list]:
    """``(sequences, weights)`` of the tokens in id order, each field checked one by one (any
    file: :func:`_usual_entries` reads the usual one faster), or ModelFormatError naming
    what is wrong."""
    try:
        entries = sorted((int(k), tuple(map(int, v))) for k, v in mapper.items())
        weight_of = {int(k): float(v) for k, v in weights.items()}
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelFormatError(f"the model's mapper or weights are malformed: {exc}") from None
    ids = [token for token, _ in entries]
    if ids != list(range(n_base, n_base + len(ids))):
        raise ModelFormatError(f"the model's tokens must be the ids {n_base}..{n_base + len(ids) - 1}, each once")
    if not all(math.isfinite(w) for w in weight_of.values()):
        raise ModelFormatError("the model's weights must be finite numbers (NaN or infinity found)")
    if set(weight_of) != set(ids):
        raise ModelFormatError("the model's weights and mapper name different tokens")
    seqs = [seq for _, seq in entries]
    token_weights = [weight_of[t] for t in ids]
    limit = n_base + len(ids) if classic else n_base  # a pair names any token, a piece base ids
    for token, seq in entries:  # (min, max and `in`: C loops, no Python frame per id)
        if not seq or min(seq) < 0 or max(seq) >= limit or token in seq:
            raise ModelFormatError(f"the model's `mapper`: token {token} maps to {list(seq)[:8]}, not to "
                                   f"{'a pair of other ids' if classic else 'base ids'} below {limit}")
    if classic and any(len(s) != 2 for s in seqs):
        raise ModelFormatError("a classic model maps every token to a pair")
    return seqs, token_weights


def _usual_entries(mapper: dict, weights: dict, n_base: int, classic: bool,
                   columns: tuple[list, list | None] | None = None) -> tuple[list, list] | None:
    """``(sequences, weights)`` of the usual file, the tokens in id order from ``n_base``, each
    a list of ints (a pair for a classic model, base ids for a universal one), the weights
    finite numbers under the same keys in the same order: what :func:`_checked_entries` checks, in
    C loops (``map``, ``min``, ``max``) rather than a Python frame per token. None for any
    other file, which :func:`_checked_entries` reads and names the fault of. (``columns``:
    `_columns` of the mapper, where the caller has them.)

    >>> _usual_entries({"3": [0, 1], "4": [3, 2]}, {"3": 1, "4": 0.5}, 3, True)
    ([(0, 1), (3, 2)], [1.0, 0.5])
    >>> _usual_entries({"4": [3, 2], "3": [0, 1]}, {"3": 1, "4": 0.5}, 3, True) is None  # (not in order)
    True
    """
    keys = list(mapper)
    try:
        # (the json module hands both objects the same key strings: the weights' check is one
        # of identity; the mapper's keys read as ints once)
        if list(weights) != keys or list(map(int, keys)) != list(range(n_base, n_base + len(keys))):
            return None
        token_weights = list(map(float, weights.values()))
    except (TypeError, ValueError, OverflowError):
        return None
    values, flat = columns if columns is not None else _columns(mapper)
    # (a sum of floats is finite only where every one is)
    if flat is None or not math.isfinite(sum(token_weights)) or min(flat) < 0:
        return None
    if classic:
        if set(map(len, values)) != {2} or max(flat) >= n_base + len(keys):
            return None
        lefts, rights = flat[0::2], flat[1::2]
        ids = range(n_base, n_base + len(keys))
        if any(map(operator.eq, lefts, ids)) or any(map(operator.eq, rights, ids)):
            return None  # (a token made of itself)
        return list(zip(lefts, rights)), token_weights
    if 0 in map(len, values) or max(flat) >= n_base:
        return None
    return list(map(tuple, values)), token_weights


def _typed_tokens(values: Any, token_type: type) -> list[Any] | None:
    if values is None:
        return None
    if not isinstance(values, list):
        raise ModelFormatError("break/stop tokens must be a list")
    try:
        return [token_type(v) for v in values]
    except (TypeError, ValueError, OverflowError) as exc:
        raise ModelFormatError(f"break/stop tokens do not fit token_type: {exc}") from None


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
    known = model.get("known_words")
    words = list(known.values()) if isinstance(known, dict) else []
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


FORMAT = Format("ubpe030", "ubpe 0.3.0 JSON", detect, read, write, hints=("variant", "token_type"))
