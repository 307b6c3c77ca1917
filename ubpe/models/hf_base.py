"""What every HF model family shares, apart from the models themselves: the pipeline around a
model (:class:`HFPipeline`, :class:`HFPipelineMixin`: added tokens, normalizer, pre-tokenizer,
decoder, post-processor), the vocabulary's texts and types, and the merge rules read from a
tokenizer.json (:class:`JsonMerges`, `_merge_rules`). The BPE families are :mod:`ubpe.models.hf`,
WordPiece :mod:`ubpe.models.wordpiece`; this module imports neither, so that loading a WordPiece
file imports no BPE model (issue 36: a small file's load is mostly imports).

>>> from ubpe.text.hf_pipeline import AddedTokens, PreTokenizer
>>> pipe = HFPipeline(AddedTokens([], lambda t: t), [], PreTokenizer([]), None, prefix=[101], suffix=[102])
>>> _texts_and_types({"a": 0, "b": 1}, pipe, None, False)[0]
['a', 'b']
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import operator
from array import array
from collections.abc import Sequence

from ubpe_native._numpy import np
from ubpe_native._vocab import vocab_ids

from ..errors import ModelFormatError
from ..files import parse_json
from ..text.hf_pipeline import BYTE_LEVEL_REGEX, UNICODE, AddedTokens, PreTokenizer, decode_tokens
from ..text.presets import PATTERNS
from .chunks import docs_matching, text_lengths
from .imported import BYTE, CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, check_doc, indexes_of

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

QWEN2_REGEX = PATTERNS["llama3"].replace(r"\p{N}{1,3}", r"\p{N}")
#: HF regexes that the kernel's scanner splits (`ubpe.models.hf`'s ``_SCANNED``; valid by
#: construction: their compile waits for a text that needs it)
SCANNED_REGEXES = frozenset({BYTE_LEVEL_REGEX, PATTERNS["llama3"], QWEN2_REGEX})


class HFPipeline:
    """What surrounds an HF model: added tokens, normalizer steps, pre-tokenizer, decoder
    steps (``None``: no decoder) and the post-processor's tokens around one sequence."""

    def __init__(self, added: AddedTokens, normalizer: list[tuple], pre: PreTokenizer, decoder: list[tuple] | None,
                 prefix: list[int] | None = None, suffix: list[int] | None = None):
        self.added, self.normalizer, self.pre, self.decoder = added, normalizer, pre, decoder
        self.prefix = [] if prefix is None else prefix
        self.suffix = [] if suffix is None else suffix


class _Segment:
    """A normalized stretch of text between added tokens; ``first``: it starts the text."""

    __slots__ = ("text", "first")

    def __init__(self, text: str, first: bool):
        self.text = text
        self.first = first


#: the largest id a tokenizer.json may name (int32, one below its largest value)
_MAX_ID = (1 << 31) - 2


def _texts_and_types(vocab: dict[str, int], pipeline: HFPipeline, unk: str | None,
                     byte_fallback: bool) -> tuple[list[str], array, dict[int, str]]:
    """Every id's text and type (an ``array.array('i')``), and the vocabulary's text of each id
    an added token spells otherwise (merge rules name the vocabulary's). The vocabulary's ids
    are distinct (`ubpe.io.hf_import` checks)."""
    added = pipeline.added.tokens
    top, in_order = vocab_ids(vocab, _MAX_ID) or (max(vocab.values(), default=-1), False)
    n = 1 + max(top, *(t.id for t in added), -1)
    if n == len(vocab) and (in_order or all(map(operator.eq, vocab.values(), range(n)))):
        texts = list(vocab)  # the usual file: the vocabulary in id order
    else:
        texts = [""] * n
        for text, i in vocab.items():
            texts[i] = text
    if top + 1 == len(vocab):  # (distinct ids: every one below top)
        types = array("i", [NORMAL]) * n
        types[len(vocab):] = array("i", [UNUSED]) * (n - len(vocab))
    else:
        types = array("i", [UNUSED]) * n
        for i in vocab.values():
            types[i] = NORMAL
    if byte_fallback:
        for text, i in vocab.items():
            if len(text) == 6 and text.startswith("<0x") and text.endswith(">"):
                types[i] = BYTE
    if unk is not None and unk in vocab:
        types[vocab[unk]] = UNKNOWN
    shadowed = {}
    for token in added:
        if types[token.id] != UNUSED and texts[token.id] != pipeline.added.spelling(token):
            shadowed[token.id] = texts[token.id]
        texts[token.id] = pipeline.added.spelling(token)
        types[token.id] = CONTROL if token.special else USER_DEFINED
    return texts, types, shadowed


class JsonMerges:
    """A tokenizer.json's merge rules as the bytes of their JSON array, left undecoded by
    `ubpe.io.hf_import.read` (``count`` rules, ``"a b"`` lines or ``["a", "b"]`` lists): what
    `_merge_rules` reads in C, without a Python string per rule; any other reader sees the
    decoded list."""

    __slots__ = ("data", "count", "where", "_rules")

    def __init__(self, data: bytes, count: int, where: str):
        self.data, self.count, self.where, self._rules = data, count, where, None

    def __len__(self) -> int:
        return self.count

    def rules(self) -> list:
        """The decoded list (the json module's, once; :class:`ModelFormatError` if it is no JSON,
        as `ubpe.files.parse_json` names it: nested too deep, a number too long...)."""
        if self._rules is None:  # (the bytes were checked as UTF-8)
            self._rules = parse_json(self.data.decode("utf-8"), f"{self.where} (its merges)")
        return self._rules

    def __iter__(self):
        return iter(self.rules())

    def __getitem__(self, index):
        return self.rules()[index]

    def __getstate__(self) -> tuple:
        return self.data, self.count, self.where

    def __setstate__(self, state: tuple) -> None:
        self.data, self.count, self.where = state
        self._rules = None


def _merge_rules(vocab: dict[str, int], merges: Sequence, where: str
                 ) -> tuple[array, array, array, array]:
    """``(left, right, result, rank)`` (``array.array`` of int32, int64 ranks) of the merge
    rules (``(left, right)`` pairs, or the file's ``"left right"`` lines or ``[left, right]``
    lists, or their JSON bytes: `JsonMerges`), looked up in C (`ubpe_native._tables.pair_ids_in`, `pair_ids_in_json`); of
    two rules for one pair the first place is kept with the last one's rank (HF builds a map
    from the list); every operand and result must be a token (as HF requires)."""
    from ubpe_native._tables import pair_ids_in, pair_ids_in_json  # (a WordPiece file has no merges)

    found = pair_ids_in_json(vocab, merges.data) if isinstance(merges, JsonMerges) and len(merges) else None
    if found is not None and len(found[0]) == len(merges):
        rules = merges  # (read again only to name a rule that uses no token)
    else:  # a list, or JSON rules the C reader does not read exactly: decoded, and named below
        rules = merges.rules() if isinstance(merges, JsonMerges) else merges
        rules = rules if isinstance(rules, list) else list(rules)
        try:
            found = pair_ids_in(vocab, rules)
        except ValueError as exc:
            raise ModelFormatError(f"{where}: {exc}") from None
    if found is None:  # some rule is no "a b" line nor pair of exact strings
        for rule in rules:
            if isinstance(rule, str):
                if rule.count(" ") != 1:  # HF splits "a b" at its one space
                    raise ModelFormatError(f"{where}: merge {rule!r} is not two tokens separated by one space")
            elif not (isinstance(rule, (list, tuple)) and len(rule) == 2 and all(isinstance(t, str) for t in rule)):
                raise ModelFormatError(f'{where}: merge {rule!r:.80} is neither "a b" nor ["a", "b"]')
        rules = [str(rule) if isinstance(rule, str) else (str(rule[0]), str(rule[1])) for rule in rules]
        found = pair_ids_in(vocab, rules)
    left, right, result, repeated = found  # array('i') columns
    n = len(left)
    keep, rank = None, array("q", range(n))
    if repeated:  # first places in order, each with the rank of its pair's last rule
        left, right, result = (np.frombuffer(column, np.int32) for column in (left, right, result))
        key = (left.astype(np.int64) + 1) << 32 | (right.astype(np.int64) + 1)
        first = np.unique(key, return_index=True)[1]
        last = n - 1 - np.unique(key[::-1], return_index=True)[1]
        order = np.argsort(first, kind="stable")
        keep, rank = first[order], last[order].astype(np.int64)
        left, right, result = (array("i", column[keep].tobytes()) for column in (left, right, result))
        rank = array("q", rank.tobytes())
    for k, column in enumerate((left, right, result)):
        missing = indexes_of(column, (-1,), first=True)
        if missing:
            place = missing[0] if keep is None else int(keep[missing[0]])
            a, b = _rule_texts(rules[place])
            raise ModelFormatError(f"{where}: merge {a!r} {b!r} uses {(a, b, a + b)[k]!r}, "
                                   "which is not in the vocabulary")
    return left, right, result, rank


def _merge_scores(n: int, result: array, rank: array) -> np.ndarray:
    """Each token's score for ubpe's own encoders, which order pieces by it: minus one minus
    the rank of the first rule that makes it (0 for a token no rule makes)."""
    scores = np.zeros(n, dtype=np.float32)
    first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, np.asarray(result, np.int64), np.asarray(rank, np.int64))
    made = first < np.iinfo(np.int64).max
    scores[made] = -1.0 - first[made].astype(np.float32)
    return scores


def _rule_texts(rule) -> tuple[str, str]:
    """A merge rule's two texts (a pair, or a ``"left right"`` line)."""
    return tuple(rule.split(" ")) if isinstance(rule, str) else (rule[0], rule[1])




class HFPipelineMixin:
    """The HF text pipeline around a model's ``_encode_segment`` (see the module docstring)."""

    pipeline: HFPipeline
    #: whose Unicode classifies code points for the kernel's scanner and programs
    #: (`ubpe.text.patterns.code_point_classes`): HF tokenizers' (Oniguruma's)
    unicode = UNICODE

    def _setup_pipeline(self, pipeline: HFPipeline) -> None:
        self.pipeline = pipeline
        self._special_added = {t.id for t in pipeline.added.tokens if t.special}

    def _setup_bpe(self, vocab: dict[str, int], merges: Sequence[tuple[str, str]], pipeline: HFPipeline,
                   unk: str | None, name: str, where: str) -> tuple:
        """What HF's byte-level BPE models set up alike (:class:`~ubpe.models.hf.HFByteLevelBPE`,
        :class:`~ubpe.models.hf_clip.HFEndOfWordBPE`): the vocabulary's texts and types, the
        pipeline, the merge count; returns ``(texts, types, shadowed, (left, right, result, rank))``."""
        texts, types, shadowed = _texts_and_types(vocab, pipeline, unk, False)
        self._init_common(texts, types, {"unk": vocab.get(unk) if unk else None}, None, name, where)
        self._setup_pipeline(pipeline)
        self.pre = "hf"
        self.pretokenizer = pipeline.pre
        self.n_merges = len(merges)
        return texts, types, shadowed, _merge_rules(vocab, merges, where)

    def _fragments(self, text: str, parse_special: bool) -> list:
        check_doc(text)
        return [part if isinstance(part, int) else _Segment(part[0], part[1] == 0)
                for part in self.pipeline.added.split(text)]

    def _prepare(self, fragments: list) -> list:
        return fragments

    def encode(self, doc: str, *, add_special: bool = False, parse_special: bool = False) -> list[int]:
        """HF's ``Tokenizer.encode(doc, add_special_tokens=add_special).ids``."""
        prefix, suffix = self._special_ends(add_special)
        ids: list[int] = list(prefix)
        for fragment in self._fragments(doc, True):
            if isinstance(fragment, int):
                ids.append(fragment)
            else:
                ids.extend(self._encode_segment(fragment))
        ids.extend(suffix)
        return ids

    def _special_ends(self, add_special: bool) -> tuple[list[int], list[int]]:
        """The ids HF's post-processor puts before and after a text's with ``add_special``."""
        return (list(self.pipeline.prefix), list(self.pipeline.suffix)) if add_special else ([], [])

    def _native(self, text: str) -> list[int]:
        return self._encode_segment(_Segment(text, True))

    def _scanned_ids(self, segment: _Segment) -> list[int]:
        """A segment's ids from one kernel call that splits it (the scanner, or the program of
        the pre-tokenizer's steps: ``_scanner``) and merges its words."""
        text = segment.text
        return self._scan_ids(text) if text else []  # type: ignore[attr-defined]

    def decode(self, ids, errors: str = "replace", *, skip_special: bool = True) -> str:
        """HF's ``Tokenizer.decode(ids, skip_special_tokens=skip_special)``."""
        ids = self._check_ids(ids)  # type: ignore[attr-defined]
        tokens = [self.texts[i] for i in ids  # type: ignore[attr-defined]
                  if not (skip_special and i in self._special_added)]
        return decode_tokens(self.pipeline.decoder, tokens)

    def _batch_input(self, docs: list[str], lengths: np.ndarray,
                     parse_special: bool) -> tuple[str, np.ndarray, np.ndarray | None]:
        """Documents without added tokens are one segment each, normalized: the kernel
        encodes those (added tokens are matched in the raw or the normalized text, as HF does)."""
        added = self.pipeline.added
        raw = "".join(docs)
        skip = docs_matching(added.raw_pattern, raw, lengths)
        text = raw
        steps = self.pipeline.normalizer
        if steps:  # one Unicode normalization (Qwen2's NFC) is the C function itself
            from ..text.unicode import normalize  # (per batch of documents; its first import when a file needs it)

            one = functools.partial(normalize, steps[0][1]) \
                if len(steps) == 1 and steps[0][0] == "unicode" else added.normalizer
            texts = list(map(one, docs))
            text, lengths = "".join(texts), text_lengths(texts)
        inside = docs_matching(added.normalized_pattern, text, lengths)
        if skip is None or inside is None:
            return text, lengths, inside if skip is None else skip
        return text, lengths, skip | inside

    def _hf_description(self) -> dict[str, Any]:
        return {"normalizer": [step[0] for step in self.pipeline.normalizer],
                "pre_tokenizer": [step[0] for step in self.pipeline.pre.steps],
                "decoder": None if self.pipeline.decoder is None else [s[0] for s in self.pipeline.decoder],
                "added_tokens": len(self.pipeline.added.tokens),
                "post_processor": {"prefix": list(self.pipeline.prefix), "suffix": list(self.pipeline.suffix)}}
