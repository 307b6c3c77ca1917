"""llama.cpp GGUF vocabularies: read the tokenizer of a ``.gguf`` file.

Only the header and the key-value section are read: a vocabulary-only file and a 40 GB model
cost the same. The layout, magic, value types and key names are those of the ``gguf`` package
(llama.cpp's own Python reader), spelled here (`ValueType`, `Keys`) because importing that
package takes longer than reading a file; its ``GGUFReader`` is not used because it turns every array
element into a field object and took 9.4 s on llama.cpp's test vocabularies (6 s on Qwen2's
152k tokens alone) where this reader takes a fraction of a second. Every length is checked
against the file size, so a truncated or corrupt file is one clear `ModelFormatError`.

Where a file is odd, it is read as llama.cpp reads it (``gguf.cpp`` and ``llama-vocab.cpp`` of
the llama-cpp-python 0.3.36 sdist): a string ends at its first NUL byte (llama.cpp reads strings
through ``c_str()``), an empty token is ``[EMPTY_<id>]``, an unused or undefined token decodes
to nothing; what llama.cpp refuses or aborts on is refused (a metadata key empty or given twice,
an array of arrays, a token given twice); and a token type outside llama.cpp's enum (0..6),
which it would read as undefined and no converter writes, is refused as corrupt.

The tokenizer type (``tokenizer.ggml.model``) picks the model:

* ``gpt2`` -> :class:`ubpe.models.ranked_bpe.ImportedBPE` (byte-level BPE with the
  pre-tokenizer named by ``tokenizer.ggml.pre``, as llama.cpp applies it);
* ``llama`` -> :class:`ubpe.models.sentencepiece.SentencePieceBPE` (score-ordered merges, ``▁``,
  dummy prefix, byte fallback);
* ``bert`` -> :class:`ubpe.models.wordpiece.WordPiece` (llama.cpp's WPM: BERT's normalization,
  greedy longest-match-first, ``[CLS] ... [SEP]`` with ``add_special``);
* ``t5`` (llama.cpp's UGM) -> :class:`ubpe.models.llama_unigram.LlamaUnigram` (sentencepiece's
  unigram model and normalizer with its ``precompiled_charsmap``, run by llama.cpp's rules);
* ``gemma4`` -> :class:`ubpe.models.gemma4.Gemma4BPE` (merges by rank over characters, ``▁``
  for spaces, no dummy prefix, lines and newline runs apart, ``<0xXX>`` byte fallback).

What ``encode(..., add_special=True)`` adds follows llama.cpp's reading of the file: the
``add_bos_token`` / ``add_eos_token`` keys where present, else llama.cpp's defaults (``llama``:
a BOS; ``gpt2``: a BOS for the Llama 3 pre-tokenizers, `ubpe.text.pretokenizers.ADDS_BOS`,
nothing for the others), with llama.cpp's default special ids (`DEFAULT_SPECIAL_IDS`) where
the file names none.

Others (rwkv, ...) raise `ModelFormatError` naming the type and the supported ones.

>>> detect(b"GGUF\\x03\\x00\\x00\\x00"), detect(b"{}")
(True, False)
"""

from __future__ import annotations

import mmap
import os
import struct
from pathlib import Path
from typing import Any

from ubpe_native._numpy import np

from ..errors import ModelFormatError
from ..files import gc_paused
from .format import Format
from .sniff import GGUF_MAGIC, gguf as detect

#: A GGUF file's first four bytes.
MAGIC = GGUF_MAGIC
SUPPORTED_VERSIONS = (2, 3)
SUPPORTED_MODELS = ("gpt2", "llama", "bert", "t5", "gemma4")
# Largest key or string we accept (a chat template is a few kB; tokens are short).
MAX_STRING_BYTES = 1 << 24
#: llama.cpp's special token ids for a tokenizer type whose file names none (llama_vocab::impl::load);
#: an id the file gives, if it is a token, wins.
DEFAULT_SPECIAL_IDS: dict[str, dict[str, int]] = {"gpt2": {"bos": 11, "eos": 11}, "llama": {"bos": 1, "eos": 2, "unk": 0},
                                                  "t5": {"eos": 1, "unk": 2, "pad": 0}}
# Largest array we accept (vocabularies hold up to a few hundred thousand entries).
MAX_ARRAY_LENGTH = 1 << 26
MAX_KV_COUNT = 1 << 20
#: llama.cpp's token types are 0..6 (``LLAMA_TOKEN_TYPE_UNDEFINED`` .. ``LLAMA_TOKEN_TYPE_BYTE``);
#: it reads any other value as undefined, which no converter writes: such a file is refused
MAX_TOKEN_TYPE = 6


class ValueType:
    """GGUF's value types (``gguf.GGUFValueType``; the GGUF spec's ``gguf_type``)."""

    UINT8, INT8, UINT16, INT16, UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY, UINT64, INT64, FLOAT64 = range(13)


class Keys:
    """The tokenizer's metadata keys (``gguf.Keys.Tokenizer``, llama.cpp's ``LLM_KV_TOKENIZER_*``).

    The names are the `gguf` package's, spelled here because importing that package costs
    0.3-2 s (its ``vocab`` module imports mistral-common, pydantic and PIL), more than reading a
    128k vocabulary; ``tests/spec/test_gguf.py`` checks them against it."""

    MODEL = "tokenizer.ggml.model"
    PRE = "tokenizer.ggml.pre"
    LIST = "tokenizer.ggml.tokens"
    TOKEN_TYPE = "tokenizer.ggml.token_type"
    SCORES = "tokenizer.ggml.scores"
    MERGES = "tokenizer.ggml.merges"
    BOS_ID = "tokenizer.ggml.bos_token_id"
    EOS_ID = "tokenizer.ggml.eos_token_id"
    UNK_ID = "tokenizer.ggml.unknown_token_id"
    SEP_ID = "tokenizer.ggml.seperator_token_id"  # sic, as llama.cpp spells it
    PAD_ID = "tokenizer.ggml.padding_token_id"
    ADD_BOS = "tokenizer.ggml.add_bos_token"
    ADD_EOS = "tokenizer.ggml.add_eos_token"
    ADD_PREFIX = "tokenizer.ggml.add_space_prefix"
    REMOVE_EXTRA_WS = "tokenizer.ggml.remove_extra_whitespaces"
    PRECOMPILED_CHARSMAP = "tokenizer.ggml.precompiled_charsmap"


#: the magic as a little-endian uint32 (``gguf.GGUF_MAGIC``)
MAGIC_NUMBER = 0x46554747
_SCALAR_FORMATS = {ValueType.UINT8: "<B", ValueType.INT8: "<b", ValueType.UINT16: "<H", ValueType.INT16: "<h",
                   ValueType.UINT32: "<I", ValueType.INT32: "<i", ValueType.FLOAT32: "<f", ValueType.BOOL: "<?",
                   ValueType.UINT64: "<Q", ValueType.INT64: "<q", ValueType.FLOAT64: "<d"}


class _Cursor:
    """Reads little-endian values from a buffer, every read checked against its end."""

    def __init__(self, data: memoryview | bytes, where: str):
        self.data = data
        self.pos = 0
        self.where = where

    def take(self, n: int) -> memoryview:
        if n < 0 or self.pos + n > len(self.data):
            raise ModelFormatError(f"{self.where}: truncated GGUF file (needs {n} bytes at offset "
                                   f"{self.pos}, the file has {len(self.data)})")
        view = memoryview(self.data)[self.pos : self.pos + n]
        self.pos += n
        return view

    def unpack(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        return struct.unpack_from(fmt, self.take(size))[0]

    def string(self) -> str:
        n = self.unpack("<Q")
        if n > MAX_STRING_BYTES:
            raise ModelFormatError(f"{self.where}: a string of {n} bytes at offset {self.pos}: corrupt file")
        return _as_llama_cpp_reads(bytes(self.take(n)))


    def strings(self, n: int) -> list[str]:
        """``n`` strings back to back, read in C (`ubpe_native._tables.length_prefixed`) and
        decoded at once."""
        from ubpe_native._tables import length_prefixed

        try:
            joined, self.pos, nul_inside = length_prefixed(self.data, self.pos, n, MAX_STRING_BYTES)
        except ValueError as exc:
            raise ModelFormatError(f"{self.where}: truncated GGUF file or corrupt string array ({exc})") from None
        if not n:
            return []
        if not nul_inside:
            try:
                return joined.decode("utf-8").split("\0")
            except UnicodeDecodeError:
                return [r.decode("utf-8", "surrogateescape") for r in joined.split(b"\0")]
        self.pos -= len(joined) - (n - 1) + 8 * n  # strings holding NUL: read them one by one
        return [self.string() for _ in range(n)]


def _as_llama_cpp_reads(raw: bytes) -> str:
    """A GGUF string as llama.cpp reads it: through ``c_str()`` (``gguf_get_arr_str``,
    ``gguf_get_val_str``), so it ends at its first NUL byte; UTF-8, or its bytes kept as
    surrogates where it is not.

    >>> _as_llama_cpp_reads(b"Hello\\x00 world"), _as_llama_cpp_reads(b"\\xff")
    ('Hello', '\\udcff')
    """
    raw = raw.split(b"\0", 1)[0]
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("utf-8", "surrogateescape")




def _read_value(cursor: _Cursor, value_type: int) -> Any:
    types, formats = ValueType, _SCALAR_FORMATS
    if value_type == types.STRING:
        return cursor.string()
    if value_type in formats:
        return cursor.unpack(formats[value_type])
    if value_type != types.ARRAY:
        raise ModelFormatError(f"{cursor.where}: unknown value type {value_type} at offset {cursor.pos}")
    item_type = cursor.unpack("<I")
    n = cursor.unpack("<Q")
    if n > MAX_ARRAY_LENGTH:
        raise ModelFormatError(f"{cursor.where}: an array of {n} items: corrupt file")
    if item_type == types.STRING:
        return cursor.strings(n)
    if item_type in formats:
        dtype = np.dtype(formats[item_type])
        return np.frombuffer(cursor.take(n * dtype.itemsize), dtype=dtype).copy()
    if item_type == types.ARRAY:  # llama.cpp's gguf_init refuses arrays of arrays (no recursion here)
        raise ModelFormatError(f"{cursor.where}: an array of arrays at offset {cursor.pos} "
                               "(llama.cpp refuses nested GGUF arrays)")
    raise ModelFormatError(f"{cursor.where}: unknown array item type {item_type}")


def read_metadata(path: str | os.PathLike) -> dict[str, Any]:
    """The key-value section of a GGUF file: ``{key: value}`` (arrays of numbers as numpy
    arrays, arrays of strings as lists). Tensors are not read.

    Raises `ModelFormatError` if the file is not GGUF, of an unsupported version, or truncated.
    """
    where = str(path)
    try:
        with open(path, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size < 4:
                raise ModelFormatError(f"{where}: not a GGUF file (too short)")
            with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as data:
                cursor = _Cursor(data, where)
                try:
                    return _read_kv(cursor)
                finally:
                    cursor.data = b""  # release the map's exported buffer before it closes
    except OSError as exc:
        raise ModelFormatError(f"{where}: cannot read: {exc}") from None


def _read_kv(cursor: _Cursor) -> dict[str, Any]:
    if struct.unpack("<I", cursor.take(4))[0] != MAGIC_NUMBER:
        raise ModelFormatError(f"{cursor.where}: not a GGUF file (bad magic)")
    version = cursor.unpack("<I")
    if version not in SUPPORTED_VERSIONS:
        raise ModelFormatError(f"{cursor.where}: GGUF version {version} is not supported "
                               f"(supported: {SUPPORTED_VERSIONS})")
    cursor.unpack("<Q")  # tensor count
    n_kv = cursor.unpack("<Q")
    if n_kv > MAX_KV_COUNT:
        raise ModelFormatError(f"{cursor.where}: {n_kv} metadata entries: corrupt file")
    metadata: dict[str, Any] = {}
    for _ in range(n_kv):
        key = cursor.string()
        if not key:  # llama.cpp's gguf_init refuses both
            raise ModelFormatError(f"{cursor.where}: an empty metadata key at offset {cursor.pos}")
        if key in metadata:
            raise ModelFormatError(f"{cursor.where}: the metadata key {key[:80]!r} is given twice")
        value_type = cursor.unpack("<I")
        metadata[key] = _read_value(cursor, value_type)
    return metadata


def read(path: str | os.PathLike):
    """The tokenizer of a GGUF file (see the module docstring for the models)."""
    with gc_paused():
        metadata = read_metadata(path)
        return from_metadata(metadata, where=str(path))


def from_metadata(metadata: dict[str, Any], *, where: str = "<gguf>"):
    """The tokenizer described by GGUF metadata (as `read_metadata` returns it)."""
    keys = Keys
    model = metadata.get(keys.MODEL)
    if model is None:
        raise ModelFormatError(f"{where}: the GGUF file holds no tokenizer ({keys.MODEL} missing)")
    tokens = metadata.get(keys.LIST)
    if not isinstance(tokens, list) or not tokens:
        raise ModelFormatError(f"{where}: {keys.LIST} must be a non-empty array of strings")
    n = len(tokens)
    tokens = _llama_cpp_tokens(tokens, keys.LIST, where)
    token_types = _array(metadata, keys.TOKEN_TYPE, n, where)
    if token_types is not None:
        outside = np.flatnonzero((token_types < 0) | (token_types > MAX_TOKEN_TYPE))
        if len(outside):
            k = int(outside[0])
            raise ModelFormatError(f"{where}: {keys.TOKEN_TYPE}[{k}] is {token_types[k]}, not a llama.cpp token "
                                   f"type (0..{MAX_TOKEN_TYPE}: undefined, normal, unknown, control, user-defined, "
                                   "unused, byte)")
    scores = _array(metadata, keys.SCORES, n, where)
    specials = {name: _token_id(metadata, key, n, where) for name, key in (
        ("bos", keys.BOS_ID), ("eos", keys.EOS_ID), ("unk", keys.UNK_ID), ("pad", keys.PAD_ID))}
    for special, token in DEFAULT_SPECIAL_IDS.get(model, {}).items():  # llama.cpp's, where the file has none
        if specials[special] is None and token < n:
            specials[special] = token
    flags = {name: metadata.get(key) for name, key in (
        ("add_bos", keys.ADD_BOS), ("add_eos", keys.ADD_EOS), ("add_space_prefix", keys.ADD_PREFIX))}
    name = str(metadata.get("general.name", ""))
    if model == "gpt2":
        from ..models.ranked_bpe import ImportedBPE
        from ..text.pretokenizers import ADDS_BOS

        merges = metadata.get(keys.MERGES)
        if not isinstance(merges, list):
            raise ModelFormatError(f"{where}: a gpt2 tokenizer needs {keys.MERGES} (an array of strings)")
        pre = str(metadata.get(keys.PRE, "default"))
        if flags["add_bos"] is None:  # llama.cpp's default for the pre-tokenizer (Llama 3: a BOS)
            flags["add_bos"] = pre in ADDS_BOS
        return ImportedBPE(tokens, merges, pre=pre, token_types=token_types, specials=specials,
                           flags=flags, name=name, where=where)
    if model == "bert":
        return _bert(metadata, tokens, token_types, specials, name, where)
    if model == "llama":
        from ..models.sentencepiece import SentencePieceBPE

        return SentencePieceBPE(tokens, scores, token_types=token_types, specials=specials,
                                flags=flags, name=name, variant="gguf:llama", where=where)
    if model == "t5":
        from ..models.llama_unigram import LlamaUnigram

        if scores is None or token_types is None:
            raise ModelFormatError(f"{where}: a t5 (unigram) tokenizer needs {keys.SCORES} and {keys.TOKEN_TYPE}")
        if not np.all(np.isfinite(scores)):
            raise ModelFormatError(f"{where}: {keys.SCORES} holds a NaN or infinite score")
        if specials["unk"] is None:
            raise ModelFormatError(f"{where}: a t5 (unigram) tokenizer needs an unknown token ({keys.UNK_ID})")
        charsmap = metadata.get(keys.PRECOMPILED_CHARSMAP, np.zeros(0, np.uint8))
        if not isinstance(charsmap, np.ndarray) or charsmap.dtype not in (np.uint8, np.int8):
            raise ModelFormatError(f"{where}: {keys.PRECOMPILED_CHARSMAP} must be an array of bytes")
        flags["remove_extra_whitespaces"] = metadata.get(keys.REMOVE_EXTRA_WS)
        return LlamaUnigram(tokens, scores, token_types=token_types, precompiled_charsmap=charsmap.tobytes(),
                            specials=specials, flags=flags, name=name,
                            architecture=str(metadata.get("general.architecture", "")), where=where)
    if model == "gemma4":
        from ..models.gemma4 import Gemma4BPE

        merges = metadata.get(keys.MERGES)
        if not isinstance(merges, list):
            raise ModelFormatError(f"{where}: a gemma4 tokenizer needs {keys.MERGES} (an array of strings)")
        return Gemma4BPE(tokens, merges, scores=scores, token_types=token_types, specials=specials,
                         flags=flags, name=name, where=where)
    raise ModelFormatError(f"{where}: GGUF tokenizer model {model!r} is not supported; "
                           f"supported: {', '.join(SUPPORTED_MODELS)}")


def _bert(metadata: dict[str, Any], tokens: list[str], token_types: np.ndarray | None,
          specials: dict[str, int | None], name: str, where: str):
    """llama.cpp's WPM tokenizer (:class:`ubpe.models.wordpiece.WordPiece`): its special ids
    (``[CLS]`` as BOS, ``[SEP]``) and ``BertNormalizer`` options, llama.cpp's defaults where
    the file has none (lowercase; strip accents as lowercase)."""
    from ..models.wordpiece import WordPiece

    keys = Keys
    specials = {**specials, "sep": _token_id(metadata, keys.SEP_ID, len(tokens), where)}
    lowercase = bool(metadata.get("tokenizer.ggml.normalizer.lowercase", True))
    strip_accents = bool(metadata.get("tokenizer.ggml.normalizer.strip_accents", lowercase))
    return WordPiece(tokens, token_types=token_types, specials=specials, lowercase=lowercase,
                     strip_accents=strip_accents, name=name, where=where)


def _llama_cpp_tokens(tokens: list[str], key: str, where: str) -> list[str]:
    """The vocabulary as llama.cpp's ``llama_vocab::impl::load`` takes it: an empty token
    becomes ``[EMPTY_<id>]`` (with a warning there), and a token given twice is refused (there
    ``GGML_ASSERT(id_to_token.size() == token_to_id.size())`` aborts)."""
    if "" in tokens:
        tokens = [token or f"[EMPTY_{i}]" for i, token in enumerate(tokens)]
    if len(set(tokens)) != len(tokens):
        first: dict[str, int] = {}
        for i, token in enumerate(tokens):
            if first.setdefault(token, i) != i:
                raise ModelFormatError(f"{where}: {key}[{i}] ({token[:40]!r}) is token {first[token]} again "
                                       "(llama.cpp refuses a vocabulary with a token twice)")
    return tokens


def _array(metadata: dict[str, Any], key: str, n: int, where: str) -> np.ndarray | None:
    values = metadata.get(key)
    if values is None:
        return None
    if not isinstance(values, np.ndarray) or len(values) < n:
        raise ModelFormatError(f"{where}: {key} must be a numeric array of at least {n} items")
    return values[:n]


def _token_id(metadata: dict[str, Any], key: str, n: int, where: str) -> int | None:
    value = metadata.get(key)
    if value is None:
        return None
    if isinstance(value, (str, list, np.ndarray)) or not 0 <= int(value) < 2**32:
        raise ModelFormatError(f"{where}: {key} is not a token id")
    return int(value) if int(value) < n else None


def read_vocab_tests(path: str | os.PathLike) -> list[tuple[str, list[int]]]:
    """llama.cpp's tokenizer test cases beside a vocabulary: ``<path>.inp`` holds the inputs
    separated by ``\\n__ggml_vocab_test__\\n``, ``<path>.out`` one line of ids per input (as
    llama.cpp's ``test-tokenizer-0`` reads them). Returns ``[(text, ids)]`` in file order."""
    base = Path(path)
    raw = Path(f"{base}.inp").read_bytes().decode("utf-8")
    inputs = raw.split("\n__ggml_vocab_test__\n")
    if raw.endswith("\n__ggml_vocab_test__\n"):
        inputs = inputs[:-1]
    lines = Path(f"{base}.out").read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines = lines[:-1]
    if len(inputs) != len(lines):
        raise ModelFormatError(f"{base}: {len(inputs)} inputs but {len(lines)} expected outputs")
    return [(text, [int(t) for t in line.split()]) for text, line in zip(inputs, lines)]


def write(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write ``tokenizer`` as a vocabulary-only GGUF file (:mod:`ubpe.io.write.gguf`)."""
    from .write.gguf import write as write_gguf

    write_gguf(tokenizer, path)


FORMAT = Format("gguf", "llama.cpp GGUF vocabulary", detect, read, write)
