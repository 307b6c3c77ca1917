"""llama.cpp's byte-level BPE (GGUF ``gpt2``), id for id.

:class:`ImportedBPE` is llama.cpp's ``gpt2`` model (what every imported model shares is in
:mod:`ubpe.models.imported`):
the text is cut by the pre-tokenizer that ``tokenizer.ggml.pre`` names
(:mod:`ubpe.text.pretokenizers`), each piece's bytes are merged by the merges list's
ranks (`ubpe_native._merges`), and tokens are GPT-2's byte-to-unicode strings.

>>> tok = ImportedBPE(["a", "b", "ab", "Ġ", "Ġab"], ["a b", "Ġ ab"], pre="gpt-2")
>>> tok.encode("ab ab b")
[2, 4, 3, 1]
>>> tok.decode([2, 4]), tok.pieces([4]), tok.id_to_piece(4)
('ab ab', [b' ab'], 'Ġab')
>>> tok.encode_with("ab ab", "fewest")
[([2, 4], 0.0)]
"""

from __future__ import annotations

import codecs
from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from array import array
from collections.abc import Callable, Iterable
from itertools import accumulate

from ubpe_native._hf_pretok import GPT2_SPELLING, ISOLATED, STEP_SPLIT, HFPreTokenizer
from ubpe_native._merges import PairMerges, pack_units
from ubpe_native._multipass import split_passes
from ubpe_native._numpy import ID_DTYPE, np
from ubpe_native._pretokenize import split_text
from ubpe_native._tables import StringIds

from .._lazy import LazyPattern
from .chunks import CUTTABLE_PATTERN_IDS, FlatIds, cuttable_unless, docs_matching, encode_chunk
from .imported import BYTE, CONTROL, NORMAL, SILENT_TYPES, UNUSED, BatchRuns, ImportedTokenizer, token_bytes
from .scan import Scan, whole_words  # (their home is scan.py: a character model's load imports no byte-level model)

__all__ = ["BYTE_TO_CHAR", "CHAR_TO_BYTE", "ImportedBPE", "Scan", "byte_level_raw", "byte_level_words",
           "cut_digits", "one_space_lines", "split_merges", "string_table", "whole_words",
           "BYTE", "CONTROL", "NORMAL", "UNUSED"]  # the token types, for the models built on this one
from ..text.patterns import (CLASS_BITS, NATIVE_PATTERNS, PATTERNS, code_point_class_buffer, code_point_classes,
                             native_pattern_id)
from ..text.pretokenizers import Pretokenizer, resolve_pre, scanner_unsafe, single_pattern
from ..text.byte_chars import BYTE_TO_CHAR, CHAR_TO_BYTE
from ..text.specials import special_regex

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ..vocabulary import Vocabulary


# Pre-tokenizer types that the kernel's scanner splits as llama.cpp does (see _words)
_SCANNED = {"gpt2": Scan(NATIVE_PATTERNS[PATTERNS["gpt2"]]), "llama3": Scan(NATIVE_PATTERNS[PATTERNS["llama3"]]),
            "qwen2": Scan(NATIVE_PATTERNS[PATTERNS["llama3"]], single_digits=True)}
_NUMBER_BIT = CLASS_BITS[r"\p{N}"]


def _scan_of(pre_type: str) -> Scan | None:
    """How the kernel splits text of ``pre_type``: a preset's scanner (``_SCANNED``), else the
    type's one regex compiled for the kernel's regex VM (Qwen3.5's), else None (a list of
    regexes: the regex path)."""
    if pre_type in _SCANNED:
        return _SCANNED[pre_type]
    pattern = single_pattern(pre_type)
    native = native_pattern_id(pattern, ImportedBPE.unicode) if pattern is not None else None
    return Scan(native) if native is not None else None




class ImportedBPE(ImportedTokenizer):
    """llama.cpp's byte-level BPE (GGUF ``tokenizer.ggml.model == "gpt2"``), id for id.

    ``tokens`` are GPT-2 byte-to-unicode strings, ``merges`` the ``"left right"`` lines in rank
    order, ``pre`` the ``tokenizer.ggml.pre`` value.
    """

    variant = "gguf:gpt2"
    symbol_unit = "byte"
    #: `encode` of a text without special tokens may be one kernel call: the class keeps
    #: ImportedTokenizer's fragments and ends and this class's `_native`
    _one_call = True
    #: `_passes_scan`, once made (the class's None: not yet, or no compiled programs)
    _program_scan: Scan | None = None
    #: whose Unicode classifies code points for the kernel's scanner
    #: (`ubpe.text.patterns.code_point_classes`): llama.cpp's, the peer whose file this is
    unicode = "llama.cpp"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._one_call = (cls._prepare is ImportedTokenizer._prepare and cls._native is ImportedBPE._native
                         and cls._special_ends is ImportedTokenizer._special_ends)

    def encode(self, doc: str, *, add_special: bool = False, parse_special: bool = False) -> list[int]:
        """The model's own ids for ``doc`` (`ImportedTokenizer.encode`); a text that holds no
        token cut out first and that the scanner or the compiled list of regexes splits is one
        kernel call."""
        if not add_special and self._one_call and type(doc) is str and doc:
            scan = self._scanner or self._program_scan or self._passes_scan()
            table = self._special_table(parse_special) if scan is not None else None
            if scan is not None and (not table or self._special_finders[parse_special].search(doc) is None):
                try:
                    ids = self._text_ids(scan)(doc)
                except UnicodeEncodeError:  # a lone surrogate: the general path names it
                    ids = None
                if ids is not None:
                    return ids
        return super().encode(doc, add_special=add_special, parse_special=parse_special)

    def __init__(self, tokens: list[str], merges: list[str], *, pre: str = "default",
                 token_types: np.ndarray | None = None, specials: dict[str, int | None] | None = None,
                 flags: dict[str, Any] | None = None, name: str = "", where: str = "<tokens>"):
        self._init_common(list(tokens), token_types, specials, flags, name, where)
        pre_type, self.ignore_merges = resolve_pre(pre)
        self.pre = pre
        self.pretokenizer = Pretokenizer.for_type(pre_type)
        self._scanner = _scan_of(pre_type)
        self.n_merges = len(merges)
        self._kernel = self._build_kernel(merges)

    @functools.cached_property
    def _raw(self) -> list[bytes | None]:
        """The bytes each token stands for (None: no string of the byte alphabet), made when
        first asked for (to decode, to match whole words, to write): a load that needs neither
        does not make 150k of them (~25 ms)."""
        return byte_level_raw(self.texts)

    def _build_kernel(self, merges: list[str]) -> PairMerges:
        n = len(self.texts)
        extra: dict[str, int] = {}  # merge operands and results that are no token
        text_ids: dict[str, int] = {}

        def text_to_id() -> dict[str, int]:  # built only if the C lookup is not enough
            if not text_ids:
                text_ids.update(zip(self.texts, range(n)))
            return text_ids

        def ids_of(texts: list[str]) -> list[int]:
            found = list(map(text_to_id().get, texts))
            if None in found:
                for k, token in enumerate(found):
                    if token is None:
                        found[k] = extra.setdefault(texts[k], n + len(extra))
            return found

        self._merge_lines = merges
        table, columns = _merge_ids(self.texts, merges)
        if columns is None:
            firsts, seconds, merged = self._merge_texts()
            left, right, result = ids_of(firsts), ids_of(seconds), ids_of(merged)
        else:  # the same ids, found in C; operands that are no token get theirs in line order
            left, right, result = columns
            missing = np.flatnonzero((left < 0) | (right < 0) | (result < 0)).tolist()
            if missing:
                firsts, seconds, merged = self._merge_texts()
                for column, texts in ((left, firsts), (right, seconds), (result, merged)):
                    for k in missing:
                        if column[k] < 0:
                            column[k] = ids_of([texts[k]])[0]
        if columns is None:
            units = ids_of([BYTE_TO_CHAR[b] for b in range(256)])
        else:
            units = [table.find(BYTE_TO_CHAR[b].encode("utf-8")) for b in range(256)]
            absent = [b for b in range(256) if units[b] < 0]
            for b, token in zip(absent, ids_of([BYTE_TO_CHAR[b] for b in absent]) if absent else []):
                units[b] = token
        # what llama.cpp writes for a symbol that is no token: its single ASCII bytes' tokens
        expansions = [[text_to_id()[chr(b)] for b in text.encode("utf-8", "surrogateescape") if b < 0x80 and chr(b) in text_to_id()]
                      for text in extra]
        offsets = np.zeros(len(expansions) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in expansions], out=offsets[1:])
        whole = byte_level_words(self.texts) if self.ignore_merges else whole_words([])
        i32 = lambda values: np.asarray(values, dtype=np.int32)  # noqa: E731
        return PairMerges(
            n, i32(left), i32(right), i32(result), np.arange(len(left), dtype=np.int64),
            offsets, i32([t for e in expansions for t in e]),
            pack_units([bytes([b]) for b in range(256)]), i32(units), np.full(256, -1, np.int32),
            False, *whole)

    def _words(self, text: str) -> tuple[bytes, np.ndarray]:
        """The pre-tokens of a text without special tokens: its UTF-8 bytes and their bounds.

        For the GPT-2, Llama 3 and Qwen2 pre-tokenizers the kernel's scanner (written for
        tiktoken's patterns of the first two) splits the text with llama.cpp's code point
        classes (`unicode`): they cut alike on every code point; so does Qwen3.5's one regex,
        compiled for the regex VM by llama.cpp's Unicode. The types that are lists of regexes
        run them on the regex VM (`_passes`) once a batch has compiled them, else with the
        `regex` module, whose Unicode is not llama.cpp's: a text holding a code point the two
        classify apart (`pretokenizers.scanner_unsafe`) compiles them first.
        """
        scan = self._scanner
        if scan is not None:
            data = text.encode("utf-8")
            bounds = split_text(np.frombuffer(data, dtype=np.uint8), code_point_classes(self.unicode), scan.pattern)
            return data, cut_digits(text, bounds, self.unicode) if scan.single_digits else bounds
        passes = self._passes(compile=scanner_unsafe(text))
        if passes is not None:
            data = text.encode("utf-8")
            return data, split_passes(data, (len(text),), passes)[0]
        return self._words_by_regex(text)

    def _passes(self, compile: bool = True) -> np.ndarray | None:
        """llama.cpp's list of regexes as regex VM programs, for a model the kernel's scanner
        does not split (falcon, starcoder, deepseek, default: `ubpe_native._multipass`); None:
        the scanner splits it, or the `regex` module does (or, without ``compile``, the
        programs are not compiled yet: a batch compiles them, once per process, 0.5-4 s; one
        text is not worth the wait)."""
        if self._scanner is not None or not isinstance(self.pretokenizer, Pretokenizer):
            return None
        return self.pretokenizer.vm_patterns(compile)

    def _words_by_regex(self, text: str) -> tuple[bytes, np.ndarray]:
        words = [w.encode("utf-8", "surrogatepass") for w in self.pretokenizer.split(text)]
        bounds = np.zeros(len(words) + 1, dtype=np.int64)
        np.cumsum([len(w) for w in words], out=bounds[1:])
        return b"".join(words), bounds

    def _native(self, text: str) -> list[int]:
        """llama.cpp's ids of a text without special tokens (split as `_words` says)."""
        if self._scanner is not None:
            return self._scan_ids(text)
        scan = self._passes_scan(compile=scanner_unsafe(text))  # (see `_words`)
        if scan is None:
            return self._native_by_regex(text)
        return self._text_ids(scan)(text)  # one call

    def _passes_scan(self, compile: bool = False) -> Scan | None:
        """`_passes` as a `Scan` whose program splits by each regex in turn, keeping matches and
        the text between them (HF's ``isolated`` splits: what ``_multipass`` does), so that
        `PairMerges.text_ids` encodes a text in one call and ``encode_texts`` a batch (faster
        than cutting the pieces first: falcon 27 -> 36 MB/s); made once the programs are compiled
        (None before, and without ``compile``, as `_passes`). The programs' ids are the
        process's: the scan is not pickled (it holds a kernel object)."""
        scan = self._program_scan
        if scan is None:
            passes = self._passes(compile)
            if passes is None:
                return None
            steps = np.array([(STEP_SPLIT, pattern_id, ISOLATED, 0) for pattern_id in passes.tolist()], np.int32)
            # the scanner's pattern is not read when a program gives the words
            scan = self._program_scan = Scan(0, program=HFPreTokenizer(steps, None, GPT2_SPELLING))
        return scan

    # -- the kernel's scanner, and encode_batch ------------------------------------------------

    def _scan_encode(self, data: bytes, lengths: Any, skip: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """``PairMerges.encode_texts`` of documents back to back in UTF-8 ``data`` (``lengths``:
        theirs in characters): ``(ids, offsets, status)``."""
        scan = self._scanner or self._passes_scan(compile=True)  # (`_batch_runs` checked there is one)
        return self._kernel.encode_texts(data, lengths, code_point_classes(self.unicode), scan.pattern,
                                         single_digits=scan.single_digits, prefix_space=scan.prefix_space,
                                         skip=skip, pretokenizer=scan.program)

    def _scan_ids(self, text: str) -> list[int]:
        """`_scan_encode` of one text with the scanner, as its id list, in one kernel call (a
        short text's cost is the call's: no arrays in between)."""
        return self._text_ids(self._scanner)(text)

    def _text_ids(self, scan: Scan) -> Callable[[str], list[int]]:
        """The kernel's str -> ids call with ``scan``'s arguments bound (`PairMerges.text_ids`),
        made once per scanner."""
        bound = self.__dict__.get("_bound_text_ids")
        if bound is None or bound[0] is not scan:
            bound = self._bound_text_ids = (scan, self._kernel.text_ids(
                code_point_class_buffer(self.unicode), scan.pattern, single_digits=scan.single_digits,
                prefix_space=scan.prefix_space, pretokenizer=scan.program))
        return bound[1]

    def _batch_runs(self, options: dict[str, Any]) -> BatchRuns | None:
        """The batch template's run encoder (`ImportedTokenizer._flat_batch`): when the
        kernel's scanner splits this model's text, a run of documents is split and merged in
        one kernel call without the GIL (:mod:`ubpe.models.chunks`); documents holding special
        tokens or code points the scanner leaves alone go through `encode`.

        >>> tok = ImportedBPE(["a", "b", "ab", "Ġ", "Ġab"], ["a b", "Ġ ab"], pre="gpt-2")
        >>> tok.encode_batch(["ab ab b", "", "ba"])
        [[2, 4, 3, 1], [], [1, 0]]
        """
        if (self._scanner is None and self._passes() is None) or not set(options) <= {"add_special", "parse_special"}:
            return None
        parse_special = bool(options.get("parse_special", False))

        def encode_run(docs: list, lengths: np.ndarray) -> FlatIds:
            return encode_chunk(docs, lengths, lambda d, n: self._batch_input(d, n, parse_special), self._scan_encode,
                                lambda doc: self.encode(doc, parse_special=parse_special))

        return encode_run, self._cuttable(parse_special)

    def _cuttable(self, parse_special: bool) -> Callable[[str], bool] | None:
        """Which long documents `encode_batch` may cut to share them among threads
        (:func:`.chunks.run_flat_chunks`): with a preset pattern that adds no space in front,
        those without special tokens; None: none."""
        scan = self._scanner
        if scan is None or scan.prefix_space or scan.pattern not in CUTTABLE_PATTERN_IDS:
            return None
        table = self._special_table(parse_special)
        return cuttable_unless(special_regex(frozenset(entry[0] for entry in table)) if table else None)

    def _batch_input(self, docs: list[str], lengths: np.ndarray,
                     parse_special: bool) -> tuple[str, np.ndarray, np.ndarray | None]:
        """``(text, lengths, skip)``: what the kernel encodes for ``docs`` (back to back), the
        lengths of its documents, and which ones it must leave to `encode` (they hold special
        tokens)."""
        text = "".join(docs)
        table = self._special_table(parse_special)
        pattern = special_regex(frozenset(entry[0] for entry in table)) if table else None
        return text, lengths, docs_matching(pattern, text, lengths)


    def _native_by_regex(self, text: str) -> list[int]:
        data, bounds = self._words_by_regex(text)
        return self._kernel.encode(data, bounds).tolist()

    def _parts(self, text: str) -> list[np.ndarray]:
        data, bounds = self._words(text)
        if not data:
            return []
        symbols = np.frombuffer(data, dtype=np.uint8).astype(ID_DTYPE)
        cuts = bounds.tolist()
        return [symbols[a:b] for a, b in zip(cuts, cuts[1:])]

    def _build_vocabulary(self) -> tuple[Vocabulary, np.ndarray, list[list[int]]]:
        rank_of: dict[bytes, int] = {}
        for rank, raw in enumerate(byte_level_raw(self._merge_texts()[2])):  # a token's rank: its first merge
            if raw is not None:
                rank_of.setdefault(raw, rank)
        base_expansion: list[list[int]] = [[] for _ in range(256)]
        pieces, model_ids, ranks = [], [], []
        for i, raw in enumerate(self._raw):
            if raw is None or self.token_types[i] != NORMAL:
                continue
            if len(raw) == 1:
                base_expansion[raw[0]] = [i]
            else:
                pieces.append(list(raw))
                model_ids.append(i)
                ranks.append(rank_of.get(raw, len(rank_of) + len(ranks)))
        order = np.argsort(np.asarray(ranks, dtype=np.int64), kind="stable")
        from ..vocabulary import Vocabulary  # (not at import: it imports dataclasses)
        vocabulary = Vocabulary.from_pieces(256, [pieces[k] for k in order], np.zeros(len(pieces)),
                                            ranks=np.arange(len(pieces), dtype=np.int64))
        return vocabulary, np.asarray(model_ids, dtype=np.int64)[order], base_expansion

    def _merge_texts(self) -> tuple[list[str], list[str], list[str]]:
        """``(lefts, rights, merged)`` of the merge rules, in rule order: cut anew each time
        from the merge lines (kept, they would be three more strings per rule for the object's
        life - 110 MB of gemma-4's 340 MB - for the few calls that build an encoder's tables)."""
        columns = getattr(self, "_merge_columns", None)
        return columns if columns is not None else split_merges(self._merge_lines)

    @property
    def merge_lines(self) -> list[str]:
        """The merges as the file gave them (``"left right"``, in rank order): what a writer
        writes back (:mod:`ubpe.io.write`)."""
        return list(self._merge_lines)

    def _recorded_merges(self) -> dict[int, tuple[int, int]]:
        """token -> (left, right) of the first merge line that creates it."""
        text_ids = self._text_index()
        merges: dict[int, tuple[int, int]] = {}
        for first, second, merged in zip(*self._merge_texts()):
            token, left, right = text_ids.get(merged), text_ids.get(first), text_ids.get(second)
            if token is not None and left is not None and right is not None:
                merges.setdefault(token, (left, right))
        return merges

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        out = []
        for i in self._check_ids(ids):
            raw, kind = self._raw[i], self.token_types[i]
            if kind in SILENT_TYPES:  # llama.cpp's token_to_piece writes nothing for them
                continue
            out.append(raw if raw is not None and kind in (NORMAL, BYTE)
                       else token_bytes(self.texts[i]))
        return b"".join(out)

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(pre=self.pre, pretokenizer=self.pretokenizer.name, n_merges=self.n_merges,
                    ignore_merges=self.ignore_merges)
        return info


@functools.cache
def _byte_level_codec() -> Any:
    """The GPT-2 alphabet as a charmap codec's encoding table: character -> the byte it stands
    for (`codecs.charmap_encode` runs it in C; any other character is an encoding error)."""
    return codecs.charmap_build("".join(BYTE_TO_CHAR[b] for b in range(256)))


def byte_level_raw(texts: list[str]) -> list[bytes | None]:
    """The bytes every GPT-2-alphabet string stands for, or None for one that is not such a
    string (one character, one byte: all texts are encoded at once in C, then cut; no numpy,
    which a tokenizer.json's load and ``pieces`` do not import).

    >>> byte_level_raw(["Ġa", "<一>", "ĠĠ", "a\\0b", ""])
    [b' a', None, b'  ', None, b'']
    """
    table = _byte_level_codec()
    try:
        blob = codecs.charmap_encode("".join(texts), "strict", table)[0]
    except UnicodeEncodeError:  # some text is no such string: each on its own
        return [_one_raw(text, table) for text in texts]
    out, at = [], 0
    for length in map(len, texts):
        out.append(blob[at:at + length])
        at += length
    return out


def _one_raw(text: str, table: Any) -> bytes | None:
    try:
        return codecs.charmap_encode(text, "strict", table)[0]
    except UnicodeEncodeError:
        return None


def byte_level_words(texts: list[str]) -> tuple[bytes, array, array]:
    """``(blob, offsets, ids)`` of the texts that stand for bytes, as `whole_words` gives them
    (llama.cpp's ``ignore_merges``: a word that is a token is that token), token ``k`` being
    ``texts[k]``. When every text is a non-empty string of the alphabet (Llama 3's 128k), with
    no bytes object per token: encoded at once, cut by their lengths.

    >>> blob, offsets, ids = byte_level_words(["Ġa", "<一>", "", "b"])
    >>> blob, offsets.tolist(), ids.tolist()
    (b' ab', [0, 2, 3], [0, 3])
    """
    try:
        blob = codecs.charmap_encode("".join(texts), "strict", _byte_level_codec())[0]
    except UnicodeEncodeError:
        blob = None
    if blob is None or "" in texts:
        return whole_words(list(zip(byte_level_raw(texts), range(len(texts)))))
    return blob, array("q", accumulate(map(len, texts), initial=0)), array("i", range(len(texts)))


def cut_digits(text: str, bounds: np.ndarray, unicode: str = "regex") -> np.ndarray:
    """``bounds`` (byte offsets of ``text``'s pieces) with every number character
    (``\\p{N}`` by the Unicode of ``unicode``: `ubpe.text.patterns.code_point_classes`) cut
    out as a piece of its own (`Scan.single_digits`).

    >>> cut_digits("ab 123", np.array([0, 2, 3, 6])).tolist()
    [0, 2, 3, 4, 5, 6]
    """
    if text.isascii() and not any(c.isdigit() for c in text):
        return bounds
    points = np.frombuffer(text.encode("utf-32-le", "surrogatepass"), dtype=np.uint32)
    numeric = (code_point_classes(unicode)[points] & _NUMBER_BIT) != 0
    if not numeric.any():
        return bounds
    widths = 1 + (points >= 0x80).astype(np.int64) + (points >= 0x800) + (points >= 0x10000)
    ends = np.cumsum(widths)
    return np.unique(np.concatenate([bounds, ends[numeric] - widths[numeric], ends[numeric]]))


_ONE_SPACE_LINES = LazyPattern(" [^\n]* ")  # a line with two spaces


def string_table(texts: list[str]) -> StringIds | None:
    """The texts' table (`ubpe_native._tables.StringIds`: text ``k`` has id ``k``), their UTF-8
    cut at NUL separators when no text holds one; None past what the table holds (2 GiB)."""
    blob = "\0".join(texts).encode("utf-8", "surrogatepass")
    nuls = np.flatnonzero(np.frombuffer(blob, dtype=np.uint8) == 0)
    if len(nuls) == len(texts) - 1:  # cut at the separators (no token holds a NUL)
        offsets = np.concatenate([[0], nuls + 1, [len(blob) + 1]]).astype(np.int64)
        starts, blob = offsets[:-1] - np.arange(len(texts)), blob.replace(b"\0", b"")
        offsets = np.append(starts, len(blob)).astype(np.int64)
    else:
        encoded = [t.encode("utf-8", "surrogatepass") for t in texts]
        blob, offsets = b"".join(encoded), np.zeros(len(encoded) + 1, dtype=np.int64)
        np.cumsum(list(map(len, encoded)), out=offsets[1:])
    try:
        return StringIds(blob, offsets)
    except ValueError:  # more than StringIds holds
        return None


def one_space_lines(data: bytes, n_lines: int, separator: int) -> tuple | None:
    """``(starts, cuts, ends)`` of ``n_lines`` lines joined by the byte ``separator`` (UTF-8
    ``data``) when each holds one space, after its first character (the k-th space is then
    line k's): `StringIds.pair_ids`' arguments; else None."""
    codes = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(codes == separator)
    cuts = np.flatnonzero(codes == 0x20)
    if len(ends) != n_lines - 1 or len(cuts) != n_lines:
        return None
    starts = np.concatenate([[0], ends + 1])
    ends = np.append(ends, len(data))
    return (starts, cuts, ends) if np.all((cuts > starts) & (cuts < ends)) else None


def _merge_ids(texts: list[str], merges: list[str]) -> tuple[StringIds | None, tuple | None]:
    """The texts' table (`string_table`) and the ids of every merge line's left, right and
    merged text (-1: no token), looked up in C; ``(None, None)`` when the lines are not all
    ``"left right"`` with one space (then `split_merges` and dicts do it)."""
    if not merges:
        return None, None
    data = "\n".join(merges).encode("utf-8", "surrogatepass")
    lines = one_space_lines(data, len(merges), 0x0A)
    table = string_table(texts) if lines is not None else None
    return (None, None) if table is None else (table, table.pair_ids(data, *lines))


def _one_space_each(joined: str, n_lines: int) -> bool:
    """Whether ``n_lines`` lines joined by newlines hold one space each."""
    return joined.count("\n") == n_lines - 1 and joined.count(" ") == n_lines \
        and not _ONE_SPACE_LINES.search(joined)


def split_merges(merges: list[str]) -> tuple[list[str], list[str], list[str]]:
    """``(lefts, rights, merged)`` of ``"left right"`` merge lines: cut at the first space after
    the first character; lines without one are left out. When every line has exactly one space,
    not in front, the cuts are made at once on the joined lines.

    >>> split_merges(["Ġ t", "a b", "  x"])
    (['Ġ', 'a', ' '], ['t', 'b', 'x'], ['Ġt', 'ab', ' x'])
    """
    joined = "\n".join(merges)
    if merges and _one_space_each(joined, len(merges)) and not joined.startswith(" ") and "\n " not in joined:
        parts = joined.replace("\n", " ").split(" ")
        return parts[0::2], parts[1::2], joined.replace(" ", "").split("\n")
    cuts = [line.find(" ", 1) for line in merges]
    pairs = [(line[:cut], line[cut + 1 :]) for line, cut in zip(merges, cuts) if cut > 0]
    return [a for a, _ in pairs], [b for _, b in pairs], [a + b for a, b in pairs]
