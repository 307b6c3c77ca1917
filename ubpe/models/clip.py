"""CLIP's BPE (OpenAI CLIP, open_clip's ``SimpleTokenizer``), id for id.

CLIP cleans the text (:func:`ubpe.text.clip.clean`: ftfy, HTML entities, whitespace, lower
case), cuts it into words with its regex (:func:`ubpe.text.clip.word_regex`), spells each word's
UTF-8 bytes in GPT-2's printable alphabet and marks the word's last symbol with ``</w>``, then
merges pairs by rank. Its vocabulary is fixed by the merges file: the 256 byte characters
(ids 0..255, in ``bytes_to_unicode`` order), the same with ``</w>`` (256..511), one token per
merge line (512 on) and ``<start_of_text>``, ``<end_of_text>`` last. Decoding joins the tokens'
bytes and reads every ``</w>`` as a space (so a decoded text ends with one).

The merging is ubpe's pair-ranked kernel (`ubpe_native._merges.PairMerges`, as for
:class:`~ubpe.models.ranked_bpe.ImportedBPE`) over 512 units: unit ``b`` is byte ``b`` inside a
word, unit ``256 + b`` the byte ``b`` that ends it (``b`` + ``</w>``). The same 512 units are the
base of :attr:`~ubpe.models.imported.EncoderBridge.vocabulary`, so every ubpe encoder runs on
CLIP's tokens. That machinery is :class:`EndOfWordBPE`, which HF's ``tokenizer.json`` models
with an ``end_of_word_suffix`` share (:class:`~ubpe.models.hf.HFEndOfWordBPE`).

>>> tok = CLIPBPE([("a", "b"), ("ab", "c</w>")])
>>> tok.encode("ABC abc ab")  # the last "ab" is a, b</w>: no rule joins those
[513, 513, 64, 321]
>>> tok.decode(tok.encode("ABC ab", add_special=True))
'<start_of_text>abc ab <end_of_text>'
>>> tok.tokenize(["abc", "abc abc abc"], context_length=4).tolist()
[[514, 513, 515, 0], [514, 513, 513, 515]]
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ubpe_native._merges import DROPPED, PairMerges, pack_units
from ubpe_native._numpy import ID_DTYPE, np

from ..errors import InvalidParameterError, ModelFormatError
from ..text.byte_chars import BYTE_TO_CHAR, CHAR_TO_BYTE, N_BYTES
from ..text.clip import clean, require_ftfy, word_regex
from .imported import CONTROL, NORMAL, ImportedTokenizer, check_doc

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ..vocabulary import Vocabulary

END_OF_WORD = "</w>"
START_OF_TEXT, END_OF_TEXT = "<start_of_text>", "<end_of_text>"
#: CLIP's vocabulary size (``SimpleTokenizer`` reads the first ``VOCAB_SIZE - 256 - 2`` merge
#: lines of its file; the file holds more)
VOCAB_SIZE = 49152
N_MERGES = VOCAB_SIZE - N_BYTES - 2
#: every CLIP model's context length (open_clip's ``DEFAULT_CONTEXT_LENGTH``)
CONTEXT_LENGTH = 77
#: units of the merge kernel and base ids of the vocabulary: 256 bytes, then 256 word-final bytes
N_UNITS = 2 * N_BYTES
_I32 = "int32"


def _unit_char(unit: int) -> str:
    """The character the kernel reads for a unit (code point ``unit``: 1 or 2 UTF-8 bytes)."""
    return chr(unit)


def word_units(word: bytes) -> str:
    """A word's bytes as the kernel's units: code points 0..255, the last one shifted by 256
    (the byte that ends the word).

    >>> [ord(c) for c in word_units("aé".encode())]
    [97, 195, 425]
    """
    chars = word.decode("latin-1")
    return chars[:-1] + _unit_char(N_BYTES + ord(chars[-1])) if chars else ""


def unit_texts(suffix: str) -> list[str]:
    """The token text of every unit: byte ``b``'s character (GPT-2's alphabet), then the same
    with ``suffix``.

    >>> texts = unit_texts("</w>"); texts[ord("a")], texts[256 + ord(" ")]
    ('a', 'Ġ</w>')
    """
    chars = [BYTE_TO_CHAR[b] for b in range(N_BYTES)]
    return chars + [c + suffix for c in chars]


class EndOfWordBPE:
    """Pair-ranked BPE over bytes where the byte that ends a word is a symbol of its own (CLIP's
    ``</w>``, HF's ``end_of_word_suffix``): `ubpe_native._merges.PairMerges` over the 512 units
    of :func:`word_units`, and ubpe's :attr:`vocabulary` over the same units. The host sets it
    up with :meth:`_setup_merges` and gives words as bytes."""

    texts: list[str]

    def _setup_merges(self, rules: np.ndarray, unit_ids: Sequence[int | None], unknown: int | None) -> None:
        """``rules``: rows ``(left, right, result, rank)`` (one per pair); ``unit_ids[u]``: the
        token of unit ``u``, ``None`` if none: as HF's ``merge_word`` has it, the native
        encoding takes it for ``unknown`` (which merges as a token), or drops it before merging
        (ubpe's encoders see a unit of its own that stands for ``unknown`` or nothing)."""
        n = len(self.texts)
        missing = [u for u, token in enumerate(unit_ids) if token is None]
        ids = list(unit_ids)
        for k, u in enumerate(missing):
            ids[u] = n + k
        expansion = [] if unknown is None else [unknown]
        self._rules = rules
        self._unit_ids = ids
        self._unit_expansion = [[token] if token is not None else list(expansion) for token in unit_ids]
        self._kernel = PairMerges(
            n, rules[:, 0].astype(_I32), rules[:, 1].astype(_I32), rules[:, 2].astype(_I32),
            np.ascontiguousarray(rules[:, 3], dtype=np.int64),
            np.arange(len(missing) + 1, dtype=np.int64) * len(expansion), np.asarray(expansion * len(missing), _I32),
            pack_units([_unit_char(u).encode("utf-8") for u in range(N_UNITS)]),
            np.asarray([(DROPPED if unknown is None else unknown) if token is None else token for token in unit_ids], _I32),
            np.full(N_BYTES, -1, _I32), True, b"", np.zeros(1, np.int64), np.zeros(0, _I32))

    def _merge_words(self, words: list[bytes]) -> list[int]:
        """The ids of ``words`` (UTF-8 bytes each), merged word by word."""
        units = [word_units(w).encode("utf-8") for w in words if w]
        if not units:
            return []
        bounds = np.zeros(len(units) + 1, dtype=np.int64)
        np.cumsum([len(u) for u in units], out=bounds[1:])
        return self._kernel.encode(np.frombuffer(b"".join(units), dtype=np.uint8), bounds).tolist()

    @staticmethod
    def _word_parts(words: list[bytes]) -> list[np.ndarray]:
        """``words`` as parts of base ids (the units) for ubpe's encoders."""
        return [np.fromiter(map(ord, word_units(w)), dtype=ID_DTYPE, count=len(w)) for w in words if w]

    def _build_vocabulary(self) -> tuple[Vocabulary, np.ndarray, list[list[int]]]:
        """Base ids: the 512 units; a merged token's piece: its units, from the merge rules in
        rank order (a token's piece is the one its first rule builds)."""
        symbols: dict[int, tuple[int, ...]] = {token: (unit,) for unit, token in enumerate(self._unit_ids)}
        for left, right, result, _ in self._rules[np.argsort(self._rules[:, 3], kind="stable")].tolist():
            if result not in symbols and left in symbols and right in symbols:
                symbols[result] = symbols[left] + symbols[right]
        merged = [(token, piece) for token, piece in symbols.items() if len(piece) > 1]
        from ..vocabulary import Vocabulary  # (not at import: it imports dataclasses)
        vocabulary = Vocabulary.from_pieces(N_UNITS, [list(piece) for _, piece in merged], np.zeros(len(merged)),
                                            ranks=np.arange(len(merged), dtype=np.int64))
        return vocabulary, np.asarray([token for token, _ in merged], dtype=np.int64), self._unit_expansion

    def _recorded_merges(self) -> dict[int, tuple[int, int]]:
        merges: dict[int, tuple[int, int]] = {}
        for left, right, result, _ in self._rules.tolist():
            merges.setdefault(result, (left, right))
        return merges


class CLIPBPE(EndOfWordBPE, ImportedTokenizer):
    """CLIP's tokenizer from its merge pairs in rank order (``("i", "n")``, ...): see the module
    docstring. Built by :mod:`ubpe.io.clip` (``ubpe.load`` on ``bpe_simple_vocab_16e6.txt.gz``);
    read-only.

    A pair ``("", "")`` is the empty token ``SimpleTokenizer`` reads from the empty line that
    ends a file shorter than its cut: a token that no rule makes.

    ``encode(text)`` is ``SimpleTokenizer.encode`` (no start/end tokens; with
    ``add_special=True`` they frame the ids), :meth:`tokenize` its ``__call__`` (a padded array
    of ``context_length`` ids per text), ``decode`` its ``decode``. Special tokens spelled in the
    text are always those tokens, as in CLIP (``parse_special`` is accepted and changes nothing).
    """

    variant = "clip"
    symbol_unit = "byte"

    def __init__(self, merges: Sequence[tuple[str, str]], *,
                 special_tokens: Sequence[str] = (START_OF_TEXT, END_OF_TEXT),
                 context_length: int = CONTEXT_LENGTH, name: str = "", where: str = "<clip>"):
        require_ftfy()  # say which extra to install when the file is read, not at the first encode
        if len(special_tokens) < 2:
            raise InvalidParameterError("CLIP needs at least its start and end tokens")
        base = list(BYTE_TO_CHAR.values())
        merges = [tuple(pair) for pair in merges]
        texts = [*base, *(c + END_OF_WORD for c in base), *(a + b for a, b in merges), *special_tokens]
        types = np.full(len(texts), NORMAL, dtype=np.int32)
        types[len(texts) - len(special_tokens):] = CONTROL
        self.special_tokens = tuple(special_tokens)
        n_plain = len(texts) - len(special_tokens)
        # SimpleTokenizer's encoder dict: of two tokens with one text, the later id wins
        self._ids = dict(zip(texts, range(len(texts))))
        self._init_common(texts, types, {"bos": n_plain, "eos": n_plain + 1},
                          {"add_bos": True, "add_eos": True}, name, where)
        self.context_length = self._checked_length(context_length)
        self.n_merges = len(merges)
        self._words = word_regex(self.special_tokens)
        self._special_words = {text: self._ids[text] for text in self.special_tokens}
        self._raw = [self._token_bytes(text) for text in texts]
        self._setup_merges(self._merge_rules(merges), [self._ids[c] for c in unit_texts(END_OF_WORD)], None)

    @staticmethod
    def _token_bytes(text: str) -> bytes:
        """What a token stands for: its characters' bytes, ``</w>`` left as written (decode
        reads it as a space over the joined bytes, as CLIP does)."""
        return bytes(CHAR_TO_BYTE[c] for c in text)

    def _merge_rules(self, merges: list[tuple[str, str]]) -> np.ndarray:
        """Rows ``(left, right, result, rank)``; of two lines with one pair the later rank
        wins (``SimpleTokenizer``'s ``bpe_ranks`` dict)."""
        ranks = dict(zip(merges, range(len(merges))))
        ranks.pop(("", ""), None)  # an empty line read as a token (see ubpe.io.clip): no rule
        try:
            return np.array([(self._ids[a], self._ids[b], self._ids[a + b], rank)
                             for (a, b), rank in ranks.items()], dtype=np.int64).reshape(-1, 4)
        except KeyError as exc:
            raise ModelFormatError(f"{self.where}: merge operand {exc.args[0]!r} is no CLIP token") from None

    @staticmethod
    def _checked_length(context_length: Any) -> int:
        if isinstance(context_length, bool) or not isinstance(context_length, int) or context_length < 1:
            raise InvalidParameterError(f"`context_length` must be a positive int, got {context_length!r}")
        return context_length

    # -- the text in front of the model ------------------------------------------------------

    def _fragments(self, text: str, parse_special: bool) -> list[str | int]:
        """The cleaned text cut at the special tokens CLIP's regex finds in it. A stretch
        between two is cut into the same words by the regex alone (a match never crosses the
        start of the next special token, and none looks behind or ahead)."""
        cleaned = clean(check_doc(text))
        if not any(special in cleaned for special in self._special_words):
            return [cleaned] if cleaned else []
        out: list[str | int] = []
        start = 0
        for match in self._words.finditer(cleaned):
            token = self._special_words.get(match.group())
            if token is not None:
                if match.start() > start:
                    out.append(cleaned[start:match.start()])
                out.append(token)
                start = match.end()
        if start < len(cleaned):
            out.append(cleaned[start:])
        return out

    def _words_of(self, text: str) -> list[bytes]:
        return [word.encode("utf-8") for word in self._words.findall(text)]

    def _native(self, text: str) -> list[int]:
        return self._merge_words(self._words_of(text))

    def _parts(self, text: str) -> list[np.ndarray]:
        return self._word_parts(self._words_of(text))

    # -- CLIP's framing and decoding -----------------------------------------------------------

    def tokenize(self, texts: str | Iterable[str], context_length: int | None = None) -> np.ndarray:
        """open_clip's ``tokenizer(texts, context_length)``: one row per text of
        ``context_length`` ids (default :attr:`context_length`, 77): ``<start_of_text>``, the
        text's ids, ``<end_of_text>``, then zeros; a longer row is cut and ends with
        ``<end_of_text>``."""
        if isinstance(texts, str):
            texts = [texts]
        length = self.context_length if context_length is None else self._checked_length(context_length)
        rows = self.encode_batch(list(texts), add_special=True)
        out = np.zeros((len(rows), length), dtype=np.int64)
        eot = self.special_ids["eos"]
        for k, ids in enumerate(rows):
            if len(ids) > length:
                ids = ids[:length]
                ids[-1] = eot
            out[k, :len(ids)] = ids
        return out

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids`` joined, every ``</w>`` read as a space (CLIP reads it in the
        joined text, so two tokens can spell one)."""
        return b"".join(self._raw[i] for i in self._check_ids(ids)).replace(END_OF_WORD.encode(), b" ")

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """``SimpleTokenizer.decode``: special tokens written as their text; bytes that are not
        UTF-8 follow ``errors``."""
        return self.decode_bytes(ids).decode("utf-8", errors=errors)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(n_merges=self.n_merges, context_length=self.context_length,
                    special_tokens=list(self.special_tokens))
        return info
