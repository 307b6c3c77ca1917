"""Mistral's tekken files (``tekken_240718.json``, ``tekken_240911.json``, ``tekken.json``),
read as mistral-common 1.13.1 reads them (``Tekkenizer.from_file`` in
``mistral_common/tokens/tokenizers/tekken.py``), into a :class:`~ubpe.models.tekken.TekkenBPE`.

The file is one JSON object:

* ``config``: ``pattern`` (tiktoken's ``pat_str``), ``default_vocab_size`` (all ids, special
  ones included: 131,072), ``default_num_special_tokens`` (1,000), ``version`` (``"v3"``...;
  one of mistral-common's ``TokenizerVersion`` names), ``num_vocab_tokens`` (unused);
* ``vocab``: ``{"rank", "token_bytes" (base64), "token_str"}`` in rank order, the first 256
  the single bytes; only the first ``default_vocab_size - default_num_special_tokens`` are
  kept (the shipped files hold 150,000 and keep 130,072), and only those are checked;
* ``special_tokens`` (optional up to version v7, required after): ``{"rank", "token_str",
  "is_control"}`` in id order. Without it, mistral-common's 20 tokens of ``v3``
  (:data:`LEGACY_SPECIAL_TOKENS`: ``<unk>`` ``<s>`` ``</s>`` ``[INST]`` ...); either way the list
  is made up to ``default_num_special_tokens`` with fillers ``<SPECIAL_k>`` (``k`` its id);
* ``image``, ``audio``, ``multimodal``, ``model_settings_builder``: not text, not read
  (mistral-common's two version rules on them are checked).

Ids: special token ``k`` has id ``k``; the mergeable token of rank ``r`` has id
``r + default_num_special_tokens``. Everything mistral-common asserts is checked here and
refused with a :class:`ModelFormatError` naming the file and the field. Two checks are stricter
than its lenient spots: ``token_bytes`` must be strict base64 (mistral-common's decoder drops
stray characters), and a special token's ``rank`` must be its place in the list (mistral-common
looks ids up by ``rank`` but decodes by place, so a file where they differ is read two ways there).

>>> detect(b'{"config": {"pattern": "x", "default_vocab_size": 5, "default_num_special_tokens": 1')
True
>>> detect(b'{"vocab": [{"rank": 0, "token_bytes": "AA==", "token_str": "\\\\u0000"}'), detect(b'{"vocab": {"a": 0}}')
(True, False)
"""

from __future__ import annotations

import base64
import binascii
import os
from collections.abc import Mapping
from operator import itemgetter
from typing import Any

from ubpe_native._numpy import np

from ..errors import InvalidParameterError, ModelFormatError
from ..files import gc_paused, parse_json, read_text
from ..text.presets import PATTERNS
from .format import Format
from .sniff import tekken as detect

N_BYTES = 256
#: mistral-common 1.13.1's ``TokenizerVersion`` names, oldest first
VERSIONS = ("v1", "v2", "v3", "v7", "v11", "v13", "v15")
#: the last version whose file may leave out ``special_tokens``, the last that may name its
#: image section ``multimodal``, the first that may hold ``model_settings_builder``
LAST_WITHOUT_SPECIALS, LAST_MULTIMODAL, FIRST_MODEL_SETTINGS = "v7", "v11", "v15"
#: mistral-common's ``Tekkenizer.DEPRECATED_SPECIAL_TOKENS``: the special tokens of a file
#: without ``special_tokens``, ids 0..19
LEGACY_SPECIAL_TOKENS = (
    "<unk>", "<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]", "[/AVAILABLE_TOOLS]", "[TOOL_RESULTS]",
    "[/TOOL_RESULTS]", "[TOOL_CALLS]", "[IMG]", "<pad>", "[IMG_BREAK]", "[IMG_END]", "[PREFIX]", "[MIDDLE]",
    "[SUFFIX]", "[SYSTEM_PROMPT]", "[/SYSTEM_PROMPT]", "[TOOL_CONTENT]",
)
#: the most special tokens a file may ask for (each becomes a token, fillers included);
#: Mistral's files ask for 1,000
MAX_SPECIAL_TOKENS = 1 << 16
_VOCAB_KEYS = frozenset({"rank", "token_bytes", "token_str"})

# a vocabulary or special-token entry as Mistral writes them, or the config's two sizes


def read(path: str | os.PathLike) -> Any:
    """The :class:`~ubpe.models.tekken.TekkenBPE` of a tekken file."""
    where = os.fsdecode(path)
    with gc_paused():
        data = parse_json(read_text(path, "a tekken file"), where)
        return from_data(data, where)


def from_data(data: Any, where: str = "<tekken>") -> Any:
    """The tokenizer of a parsed tekken file (see the module docstring for what is checked)."""
    from ..models.tekken import FILLER_TEMPLATE, TekkenBPE

    if not isinstance(data, dict):
        raise ModelFormatError(f"{where}: a tekken file is a JSON object, not {_kind(data)}")
    config = _field(data, "config", dict, where)
    version = config.get("version")
    if version not in VERSIONS:
        raise ModelFormatError(f"{where}: config.version {version!r} is none of mistral-common's {', '.join(VERSIONS)}")
    _check_sections(data, version, where)
    pattern = _pattern(config, where)
    n_special = _size(config, "default_num_special_tokens", where, MAX_SPECIAL_TOKENS, "the most ubpe reads")
    vocab = _field(data, "vocab", list, where)
    vocab_size = _size(config, "default_vocab_size", where, len(vocab) + n_special,
                       f"the {len(vocab)} entries of vocab and the {n_special} special tokens")
    n_ranks = vocab_size - n_special
    if n_ranks < N_BYTES:
        raise ModelFormatError(
            f"{where}: config.default_vocab_size {vocab_size} minus config.default_num_special_tokens "
            f"{n_special} leaves {n_ranks} ranks; byte-level BPE needs the {N_BYTES} single bytes")
    specials = _special_tokens(data, version, n_special, where)
    specials += [FILLER_TEMPLATE.format(id=k) for k in range(len(specials), n_special)]
    if len(set(specials)) != n_special:
        raise ModelFormatError(f"{where}: special_tokens name a filler {_repeated(specials)!r} that the file also names")
    tokens = _token_arrays(vocab, n_ranks)
    try:
        if tokens is not None:
            try:
                return TekkenBPE.from_tekken_arrays(*tokens, specials, pattern=pattern, version=version)
            except ModelFormatError:
                pass  # a token twice...: `_token_bytes` names the entry
        token_bytes = _token_bytes(vocab, n_ranks, where)
        return TekkenBPE.from_tekken(token_bytes, specials, pattern=pattern, version=version)
    except InvalidParameterError as exc:
        raise ModelFormatError(f"{where}: {exc}") from None


def _token_arrays(vocab: list, n_ranks: int) -> tuple[np.ndarray, np.ndarray] | None:
    """The bytes of the first ``n_ranks`` entries of ``vocab`` as arrays (``pieces``, ``offsets``:
    entry ``r``'s bytes are ``pieces[offsets[r]:offsets[r + 1]]``), decoded in one pass in C,
    when every entry is regular: as `_token_bytes` wants it and its base64 in the form
    ``parse_lines`` reads. ``None`` otherwise: `_token_bytes` then names the faulty entry (as it
    does when the arrays hold a token twice)."""
    entries = vocab[:n_ranks]
    try:
        # C loops (map), two passes over the entries (each entry is a cache miss): the three
        # names (a KeyError if one is missing, a TypeError on anything but an object), and no
        # fourth key
        rows = list(map(itemgetter("rank", "token_bytes", "token_str"), entries))
        if set(map(len, entries)) != {len(_VOCAB_KEYS)}:
            return None
        ranks = list(map(itemgetter(0), rows))
        # equal to their places, and (as `_token_bytes` checks) no bool: only 0 and 1 could be one
        if ranks != list(range(len(entries))) or bool in {type(rank) for rank in ranks[:2]}:
            return None
        data = "\n".join(map(itemgetter(1), rows)).encode("ascii")
    except (KeyError, TypeError, UnicodeEncodeError):  # a key missing, a field that is no str, not ASCII
        return None
    if data.count(b"\n") != len(entries) - 1 or b"\r" in data:  # one line per entry
        return None
    from ubpe_native._base64_lines import parse_lines  # (here: detection imports this module for every file)

    tokens = parse_lines(data, False)
    if tokens is None or len(tokens[2]) != len(entries):  # a field the fast path does not read, or empty
        return None
    pieces, offsets, _ = tokens
    lengths = np.diff(offsets)
    first = pieces[offsets[:N_BYTES]] if len(entries) >= N_BYTES else None
    if (lengths.min(initial=1) < 1 or first is None or lengths[:N_BYTES].max() != 1
            or not np.array_equal(first, np.arange(N_BYTES))):
        return None  # an empty token or a wrong single byte: `_token_bytes` says which
    return pieces, offsets


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _field(data: Mapping, name: str, kind: type, where: str, prefix: str = "") -> Any:
    value = data.get(name)
    if not isinstance(value, kind):
        label = {dict: "an object", list: "an array", str: "a string"}[kind]
        raise ModelFormatError(f"{where}: {prefix}{name} must be {label}, not {_kind(value)}"
                               + (" (missing)" if name not in data else ""))
    return value


def _size(config: Mapping, name: str, where: str, largest: int, bound: str) -> int:
    value = config.get(name)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ModelFormatError(f"{where}: config.{name} must be an integer, not {_kind(value)}")
    if not 0 <= value <= largest:
        raise ModelFormatError(f"{where}: config.{name} is {value}, not in 0..{largest} ({bound})")
    return value


def _pattern(config: Mapping, where: str) -> str:
    pattern = _field(config, "pattern", str, where, "config.")
    if pattern in PATTERNS:  # ubpe would read a preset's name as the preset; tiktoken as a regex
        raise ModelFormatError(f"{where}: config.pattern {pattern!r} is a word, not a pre-tokenization regex")
    import regex  # (when a file is read: detecting one imports no regex engine)

    try:
        regex.compile(pattern)
    except regex.error as exc:
        raise ModelFormatError(f"{where}: config.pattern is not a valid regex: {exc}") from None
    return pattern


def _check_sections(data: Mapping, version: str, where: str) -> None:
    """mistral-common's version rules on the sections that are not text."""
    number = VERSIONS.index(version)
    if data.get("multimodal") and number > VERSIONS.index(LAST_MULTIMODAL):
        raise ModelFormatError(f"{where}: multimodal: a {version} file names its image section 'image'")
    if data.get("model_settings_builder") is not None and number < VERSIONS.index(FIRST_MODEL_SETTINGS):
        raise ModelFormatError(f"{where}: model_settings_builder: a {version} file cannot hold one "
                               f"({FIRST_MODEL_SETTINGS} and later)")


def _special_tokens(data: Mapping, version: str, n_special: int, where: str) -> list[str]:
    """The texts of the special tokens the file names, in id order."""
    listed = data.get("special_tokens")
    if listed is None:
        if VERSIONS.index(version) > VERSIONS.index(LAST_WITHOUT_SPECIALS):
            raise ModelFormatError(f"{where}: special_tokens: a {version} file must list its special tokens")
        texts = list(LEGACY_SPECIAL_TOKENS)
    else:
        if not isinstance(listed, list):
            raise ModelFormatError(f"{where}: special_tokens must be an array, not {_kind(listed)}")
        texts = []
        for k, entry in enumerate(listed):
            if not isinstance(entry, dict):
                raise ModelFormatError(f"{where}: special_tokens[{k}] must be an object, not {_kind(entry)}")
            text, rank = entry.get("token_str"), entry.get("rank")
            if not isinstance(text, str) or not text:
                raise ModelFormatError(f"{where}: special_tokens[{k}].token_str must be a non-empty string")
            if isinstance(rank, bool) or rank != k:
                raise ModelFormatError(f"{where}: special_tokens[{k}].rank is {rank!r}, not its place {k}")
            texts.append(text)
        if len(set(texts)) != len(texts):
            raise ModelFormatError(f"{where}: special_tokens: {_repeated(texts)!r} is listed twice")
    if len(texts) > n_special:
        raise ModelFormatError(f"{where}: special_tokens: {len(texts)} tokens, more than "
                               f"config.default_num_special_tokens ({n_special})")
    return texts


def _repeated(texts: list[str]) -> str:
    """The first text that comes twice in ``texts``."""
    seen: set[str] = set()
    for text in texts:
        if text in seen:
            return text
        seen.add(text)
    raise ValueError("no text repeats")


def _token_bytes(vocab: list, n_ranks: int, where: str) -> list[bytes]:
    """The bytes of the first ``n_ranks`` entries of ``vocab``, entry ``r`` of rank ``r``."""
    pieces: list[bytes] = []
    first_of: dict[bytes, int] = {}
    for rank, entry in enumerate(vocab[:n_ranks]):
        if not isinstance(entry, dict) or entry.keys() != _VOCAB_KEYS:
            keys = sorted(entry) if isinstance(entry, dict) else _kind(entry)
            raise ModelFormatError(f"{where}: vocab[{rank}] must be an object with rank, token_bytes and "
                                   f"token_str, not {keys}")
        if entry["rank"] != rank or isinstance(entry["rank"], bool):
            raise ModelFormatError(f"{where}: vocab[{rank}].rank is {entry['rank']!r}, not its place {rank}")
        encoded = entry["token_bytes"]
        try:
            piece = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise ModelFormatError(f"{where}: vocab[{rank}].token_bytes {str(encoded)[:40]!r} is not base64") from None
        if rank < N_BYTES and piece != bytes([rank]):
            raise ModelFormatError(f"{where}: vocab[{rank}].token_bytes is {piece!r}, not the byte {bytes([rank])!r}")
        if not piece:
            raise ModelFormatError(f"{where}: vocab[{rank}].token_bytes is empty")
        if piece in first_of:
            raise ModelFormatError(f"{where}: vocab[{rank}].token_bytes {piece!r} repeats vocab[{first_of[piece]}]")
        first_of[piece] = rank
        pieces.append(piece)
    return pieces


FORMAT = Format("tekken", "Mistral tekken JSON", detect, read, None)
