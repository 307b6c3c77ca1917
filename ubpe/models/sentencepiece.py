"""Sentencepiece-style string models: BPE by piece scores (llama.cpp's ``llama`` GGUF type).

Text becomes one string: a space in front (the *dummy prefix*, at the start and after every
special token), every space replaced by ``▁``. Its characters are the starting symbols; of all
adjacent pairs whose concatenation is a token, the one forming the token of highest score
merges first, the leftmost on ties (llama.cpp's ``llm_tokenizer_spm``). A character that is no
token is written as its UTF-8 bytes' ``<0xXX>`` tokens (byte fallback), or the unknown token.

Speed: ``encode`` and ``encode_batch`` run the whole text pipeline in C
(`ubpe_native._spm_pipeline.SpmPipeline`: normalizer, dummy prefix, merges or Viterbi), a batch
in runs of consecutive documents, one per thread, each a few calls without the GIL; a text the
pipeline cannot take alone (a llama.cpp text holding a user-defined token, ``parse_special``)
goes the general way (`CharModel._general_encode`) in its place.

>>> tok = SentencePieceBPE(["<unk>", "▁", "a", "b", "▁a", "ab", "▁ab", "<0x63>"],
...                        np.array([0, -1, -1, -1, -2, -3, -4, 0], np.float32),
...                        token_types=np.array([2, 1, 1, 1, 1, 1, 1, 6]))
>>> tok.encode("ab c")
[6, 1, 7]
>>> tok.decode([6, 1, 7])
'ab c'

A ``.model`` file's model is built from the tables that `ubpe_native._spm_proto` reads and
derives in C (`SentencePieceBPE._from_tables`, `SentencePieceUnigram._from_tables`): its load
and first encodes import no numpy; the texts, scores and types are made when first asked for.
Its BPE kernel merges by the pieces' texts, as sentencepiece does (no merge rules are derived
at load); the same model built from a list of pieces uses the derived rules, which give the
same ids (`tests/kernels/test_spm_rules.py`).

What these models share with the other character models (the C pipeline's one-text and batch
calls, the tables' lazy attributes) is `ubpe.models.char_model.CharModel`.
"""

from __future__ import annotations

import bisect

from ubpe_native._numpy import np
from ubpe_native._spm import SpmBPE, SpmNormalizer
from ubpe_native._spm_pipeline import SpmPipeline
from ubpe_native._spm_proto import bpe_tables, unigram_tables
from ubpe_native._unigram import UnigramLattice

from ..errors import ModelFormatError
from .char_model import SPACE, CharModel, _i32, blob_offsets
from .imported import CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED
from ..text.normalizers import Normalizer

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ubpe_native._merges import PairMerges


class SentencePieceBPE(CharModel):
    """Score-ordered BPE over characters with ``▁`` and byte fallback (see the module docstring).

    ``tokens`` are the pieces, ``scores`` their scores (higher merges first), ``token_types``
    llama.cpp's token types (1 normal, 2 unknown, 3 control, 4 user-defined, 5 unused, 6 byte).
    With a ``normalizer`` the model is a sentencepiece ``.model`` BPE: the text is normalized
    as sentencepiece does and encoded by `ubpe_native._spm.SpmBPE` (sentencepiece's own loop:
    user-defined pieces never merge, unused pieces merge and are split again, a run of unknown
    characters is one unknown id when there are no byte pieces).
    """

    variant = "gguf:llama"

    def __init__(self, tokens: list[str], scores: np.ndarray | None, *,
                 token_types: np.ndarray | None = None, specials: dict[str, int | None] | None = None,
                 flags: dict[str, Any] | None = None, name: str = "", variant: str | None = None,
                 where: str = "<tokens>", normalizer: Normalizer | None = None):
        self._init_char_model(tokens, scores, token_types, specials, flags, name, variant, where,
                              normalizer)
        if normalizer is None:  # llama.cpp's: the same rules for the general path and the C pipeline
            rules = self._merge_rules(np.ones(len(self.texts), dtype=bool))
            self._kernel = self._build_kernel(rules)
            self._pipeline = self._build_llama_pipeline(rules)
        else:
            self._kernel = self._build_kernel()
            self._pipeline = self._build_pipeline(self._kernel)

    @classmethod
    def _from_tables(cls, tables: tuple, *, name: str, where: str) -> SentencePieceBPE:
        """A ``.model`` file's BPE model from `ubpe_native._spm_proto.read_model_proto`'s
        tables, built without numpy: the kernel merges by the pieces' texts, as sentencepiece
        does (`ubpe_native._spm.SpmBPE` given the pieces; no rules derived at load), with the
        units, fallbacks and flags of `ubpe_native._spm_proto.bpe_tables` (what
        `_build_spm_kernel` derives in Python); the rest when first asked for
        (`CharModel._init_from_tables`)."""
        tok = cls.__new__(cls)
        user = tok._init_from_tables(tables, name, where, "spm:bpe")
        blob, offsets, scores, types, _ = tables
        unk = tok.special_ids["unk"]
        *rules, fallback, collapse_unk, split_words = bpe_tables(blob, offsets, types, scores, unk, False)
        tok._kernel = SpmBPE(len(types), *rules, unk, fallback, collapse_unk, split_words,
                             pieces=(blob, offsets, types, scores))
        tok._pipeline = tok._build_pipeline(tok._kernel, user)
        return tok

    def _merge_rules(self, mergeable: np.ndarray) -> dict[str, Any]:
        """Every way to cut a mergeable piece in two known symbols, as a pair rule (rank: the
        piece's place among the distinct scores, highest first; equal scores share a rank, so
        the leftmost pair wins the tie); characters that are no token get ids ``n + j``.

        Derived once per machine and file content (0.3-1.5 s of Python for a 32k vocabulary,
        against sentencepiece's 0.04 s load), then read from the machine's cache
        (`ubpe.tables_cache`), keyed by everything the rules depend on."""
        from ..tables_cache import cached_arrays, hasher  # (llama.cpp's models: a .model file's rules are derived in C)

        n = len(self.texts)
        key = hasher("\0".join(self.texts).encode("utf-8", "surrogatepass"))
        for part in (np.fromiter(map(len, self.texts), dtype=np.int64, count=n), np.asarray(self.scores, np.float64),
                     np.asarray(mergeable, dtype=bool)):
            key.update(np.ascontiguousarray(part).tobytes())
        key.update(repr((self.normalizer is None, self.special_ids.get("unk"))).encode())
        packed = cached_arrays("spm-rules", key.hexdigest(), lambda: _pack_rules(self._derive_merge_rules(mergeable)))
        extra = {chr(c): n + j for j, c in enumerate(packed["extra"].tolist())}
        return dict(left=packed["left"], right=packed["right"], result=packed["result"], extra=extra,
                    rank=packed["rank"], units=list(map(chr, packed["units"].tolist())),
                    unit_ids=packed["unit_ids"].tolist(), expand_offsets=packed["expand_offsets"],
                    expand_ids=packed["expand_ids"], fallback=packed["fallback"].tolist())

    def _derive_merge_rules(self, mergeable: np.ndarray) -> dict[str, Any]:
        """`_merge_rules`, derived from the pieces."""
        text_to_id = self._text_to_id
        n = len(self.texts)
        extra: dict[str, int] = {}  # characters that are no token, as merge operands

        def symbol(text: str) -> int | None:
            token = text_to_id.get(text)
            if token is None and len(text) == 1:
                token = extra.setdefault(text, n + len(extra))
            return token

        distinct, rank_of_token = np.unique(-self.scores.astype(np.float64), return_inverse=True)
        # Both halves of a cut are shorter than the piece and are tokens or single characters:
        # only cuts at such lengths are tried, so a piece far longer than the others costs one
        # pass, not a lookup of every one of its cuts (quadratic in its length: a 256 KiB piece
        # took 21 s).
        lengths = sorted({len(text) for text in self.texts} | {1})
        has_length = set(lengths)
        left, right, result, rank = [], [], [], []
        for token, text in enumerate(self.texts):
            if not mergeable[token]:
                continue
            size = len(text)
            if size > 1:
                symbol(text[:1])  # its id as a character that is no token, numbered in the same order
            longest = lengths[bisect.bisect_left(lengths, size) - 1] if size > 1 else 0
            for cut in range(max(1, size - longest), min(size - 1, longest) + 1):
                if cut not in has_length or size - cut not in has_length:
                    continue
                a = symbol(text[:cut])
                if a is None:
                    continue
                b = symbol(text[cut:])
                if b is None:
                    continue
                left.append(a)
                right.append(b)
                result.append(token)
                rank.append(int(rank_of_token[token]))
        units = sorted({c for text in self.texts for c in text} | set(extra))
        unit_ids = [symbol(c) for c in units]
        expansions = [self._byte_fallback(c) for c in extra]
        offsets = np.zeros(len(expansions) + 1, dtype=np.int64)
        np.cumsum([len(e) for e in expansions], out=offsets[1:])
        unk = self.special_ids.get("unk")
        fallback = [self._byte_token(b) for b in range(256)]
        return dict(left=_i32(left), right=_i32(right), result=_i32(result), extra=extra,
                    rank=np.asarray(rank, dtype=np.int64), units=units,
                    unit_ids=unit_ids, expand_offsets=offsets,
                    expand_ids=_i32([t for e in expansions for t in e]),
                    fallback=[(-1 if unk is None else unk) if t is None else t for t in fallback])

    def _build_kernel(self, rules: dict[str, Any] | None = None) -> PairMerges | SpmBPE:
        if self.normalizer is not None:
            return self._build_spm_kernel()
        from ubpe_native._merges import PairMerges, pack_units  # (llama.cpp's; a .model file's load needs it not)

        if rules is None:
            rules = self._merge_rules(np.ones(len(self.texts), dtype=bool))
        encoded_units = [c.encode("utf-8", "surrogatepass") for c in rules["units"]]
        keep = [k for k, e in enumerate(encoded_units) if 1 <= len(e) <= 4]
        return PairMerges(
            len(self.texts), rules["left"], rules["right"], rules["result"], rules["rank"],
            rules["expand_offsets"], rules["expand_ids"],
            pack_units([encoded_units[k] for k in keep]), _i32([rules["unit_ids"][k] for k in keep]),
            _i32(rules["fallback"]), True, b"", np.zeros(1, dtype=np.int64), _i32([]))

    def _build_llama_pipeline(self, rules: dict[str, Any]) -> SpmPipeline:
        """llama.cpp's text handling in C: the dummy prefix and ``▁`` for spaces, then the
        merges (`SpmBPE` with the rules of the `PairMerges` kernel); a text holding a
        user-defined token (cut out first, the dummy prefix after it) is handed back."""
        units = [c.encode("utf-8", "surrogatepass") for c in rules["units"]]
        model = SpmBPE(
            len(self.texts), rules["left"], rules["right"], rules["result"], rules["rank"],
            np.zeros(len(self.texts), np.uint8), b"".join(units), blob_offsets(units), _i32(rules["unit_ids"]),
            np.zeros(len(units), np.uint8), rules["expand_ids"], rules["expand_offsets"],
            int(self.special_ids["unk"]), _i32(rules["fallback"]), False, not self._joins_space(rules))
        normalizer = SpmNormalizer(np.zeros(0, np.uint32), b"", self.add_space_prefix, False, True, False, b"",
                                   np.zeros(1, np.int64), _i32([]))
        user = [t.encode("utf-8", "surrogatepass") for t, _, _, _ in self._special_table(False)]
        return SpmPipeline(normalizer, model, False, b"".join(user), blob_offsets(user))

    def _build_spm_kernel(self) -> SpmBPE:
        """sentencepiece's own loop: unused pieces merge and are split again, user-defined
        pieces are frozen symbols, without byte pieces a run of unknown symbols is one id."""
        rules = self._merge_rules(np.isin(self.token_types, (NORMAL, USER_DEFINED, UNUSED)))
        units = [(c.encode("utf-8", "surrogatepass"), i, 0)
                 for c, i in zip(rules["units"], rules["unit_ids"])]
        units += [(t.encode("utf-8", "surrogatepass"), i, 1) for t, i in self._user_defined()]
        offsets = np.zeros(len(units) + 1, dtype=np.int64)
        np.cumsum([len(u[0]) for u in units], out=offsets[1:])
        unused = self.token_types == UNUSED
        return SpmBPE(
            len(self.texts), rules["left"], rules["right"], rules["result"], rules["rank"],
            unused.astype(np.uint8), b"".join(u[0] for u in units), offsets,
            _i32([u[1] for u in units]), np.array([u[2] for u in units], dtype=np.uint8),
            rules["expand_ids"], rules["expand_offsets"], int(self.special_ids["unk"]),
            _i32(rules["fallback"]), bool(self._collapse_unk),
            not unused[rules["result"]].any() and not self._joins_space(rules))

    def _joins_space(self, rules: dict[str, Any]) -> bool:
        """Whether a rule joins a symbol to one that starts with ``▁`` (else the words that
        ``▁`` starts merge apart, and `SpmBPE` may encode and cache them one by one)."""
        text_of = {i: c for c, i in rules["extra"].items()}
        n = len(self.texts)
        return any((self.texts[i] if i < n else text_of[i]).startswith(SPACE)
                   for i in set(rules["right"].tolist()))  # (np.unique imports numpy.ma)

    def _native(self, text: str) -> list[int]:
        data = text.encode("utf-8", "surrogatepass")
        if self.normalizer is not None:
            return self._kernel.encode(data).tolist()
        return self._collapsed(self._kernel.encode(data, np.array([0, len(data)], dtype=np.int64)))


# unigram weights: a base symbol that is no piece (only byte tokens spell it)
UNSPELT_WEIGHT = -1e6
#: the unknown piece scores this much below the lowest normal piece (sentencepiece's
#: ``kUnkPenalty``, llama.cpp's ``unknown_token_score_penalty``)
UNK_PENALTY = 10.0


class SentencePieceUnigram(CharModel):
    """A sentencepiece unigram model: the Viterbi best path over piece scores (log-probabilities),
    computed exactly as sentencepiece does (`ubpe_native._unigram`). ``additive`` with the
    scores as weights is the same objective in ubpe's path kernel."""

    variant = "spm:unigram"
    _cuts_user_defined = False

    def __init__(self, tokens: list[str], scores: np.ndarray, *, token_types: np.ndarray,
                 specials: dict[str, int | None] | None = None, flags: dict[str, Any] | None = None,
                 name: str = "", where: str = "<tokens>", normalizer: Normalizer):
        self._init_char_model(tokens, scores, token_types, specials, flags, name, None, where,
                              normalizer)
        self._kernel = self._build_lattice()
        self._pipeline = self._build_pipeline(self._kernel)

    @classmethod
    def _from_tables(cls, tables: tuple, *, name: str, where: str) -> SentencePieceUnigram:
        """A ``.model`` file's unigram model from `ubpe_native._spm_proto.read_model_proto`'s
        tables: the lattice's tables made in C (`ubpe_native._spm_proto.unigram_tables`,
        what `_build_lattice` makes), the rest when first asked for
        (`CharModel._init_from_tables`)."""
        tok = cls.__new__(cls)
        user = tok._init_from_tables(tables, name, where, None)
        blob, offsets, scores, types, _ = tables
        *lattice, unk_score, fallback = unigram_tables(blob, offsets, types, scores)
        if unk_score is None:
            raise ModelFormatError(f"{where}: a unigram model needs normal pieces (their scores set the "
                                   "unknown piece's)")
        tok._kernel = UnigramLattice(*lattice, tok.special_ids["unk"], unk_score, fallback, double_sums=False)
        tok._pipeline = tok._build_pipeline(tok._kernel, user)
        return tok

    def _build_lattice(self, *, llama: bool = False) -> UnigramLattice:
        """The Viterbi kernel over the normal, user-defined and unused pieces: sentencepiece's
        (unused pieces never chosen, user-defined ones scored by length, byte fallback, float32
        sums) or, with ``llama``, llama.cpp's ``llm_tokenizer_ugm`` (unused pieces chosen like
        normal ones, user-defined ones scored 0, no byte fallback, double sums)."""
        in_trie = np.isin(self.token_types, (NORMAL, USER_DEFINED, UNUSED))
        chosen = [i for i in np.flatnonzero(in_trie).tolist() if self.texts[i]]
        encoded = [self.texts[i].encode("utf-8", "surrogatepass") for i in chosen]
        normal = self.token_types == NORMAL
        if not normal.any():
            raise ModelFormatError(f"{self.where}: a unigram model needs normal pieces (their scores set the "
                                   "unknown piece's)")
        min_score = float(self.scores[normal].min())
        user_defined = self.token_types[chosen] == USER_DEFINED
        scores = self.scores[chosen].astype(np.float32)
        if llama:
            scores[user_defined] = 0.0
        fallback = [-1] * 256 if llama else [self._byte_token(b) for b in range(256)]
        return UnigramLattice(
            b"".join(encoded), blob_offsets(encoded),
            _i32([i if llama or self.token_types[i] != UNUSED else -1 for i in chosen]), scores,
            (user_defined & (not llama)).astype(np.uint8),
            int(self.special_ids["unk"]), np.float32(min_score) - np.float32(UNK_PENALTY),
            _i32([-1 if t is None else t for t in fallback]), double_sums=llama)

    def _native(self, text: str) -> list[int]:
        return self._kernel.encode(text.encode("utf-8", "surrogatepass")).tolist()

    @staticmethod
    def _user_defined_score(text: str) -> float:
        """A user-defined piece's score in the lattice (sentencepiece: ``0.1 * (bytes - 1)``)."""
        return float(np.float32(0.1 * (len(text.encode("utf-8", "surrogatepass")) - 1)))

    def unigram_weights(self) -> np.ndarray:
        """One weight per id of :attr:`vocabulary`: its piece's log-probability (a user-defined
        piece: its lattice score ``0.1 * (bytes - 1)``; a base symbol spelt only by byte tokens:
        ``UNSPELT_WEIGHT``). With them ``additive`` is this model's
        Viterbi, ``sample`` its subword regularization, and ``ambiguity`` (their default here)
        its distribution over segmentations."""
        _, vocab_to_model, base_expansion = self._vocabulary_parts()
        scores = self.token_log_probs()
        base = [scores[e[0]] if len(e) == 1 else UNSPELT_WEIGHT for e in base_expansion]
        return np.concatenate([np.asarray(base, dtype=np.float64), scores[vocab_to_model]])

    def token_log_probs(self) -> np.ndarray:
        """Per id, what sentencepiece's lattice adds for the token: its piece's score (the
        log-probability), a user-defined piece's ``0.1 * (bytes - 1)``, the unknown token's
        lowest score minus 10 (``kUnkPenalty``), 0 for a control token."""
        scores = self.scores.astype(np.float64)
        for i in np.flatnonzero(self.token_types == USER_DEFINED).tolist():  # their lattice score
            scores[i] = self._user_defined_score(self.texts[i])
        normal = self.token_types == NORMAL
        scores[self.token_types == UNKNOWN] = (np.float32(scores[normal].min()) if normal.any() else 0.0) - UNK_PENALTY
        scores[self.token_types == CONTROL] = 0.0
        return scores

    def _default_weights(self) -> np.ndarray:
        return self.unigram_weights()


def _pack_rules(rules: dict[str, Any]) -> dict[str, np.ndarray]:
    """`SentencePieceBPE._merge_rules`' dict as arrays alone (what the machine's cache keeps):
    characters as code points, the extra characters in the order of their ids."""
    return {"left": rules["left"], "right": rules["right"], "result": rules["result"], "rank": rules["rank"],
            "extra": np.array([ord(c) for c in rules["extra"]], dtype=np.uint32),
            "units": np.array([ord(c) for c in rules["units"]], dtype=np.uint32),
            "unit_ids": np.asarray(rules["unit_ids"], dtype=np.int64), "expand_offsets": rules["expand_offsets"],
            "expand_ids": rules["expand_ids"], "fallback": np.asarray(rules["fallback"], dtype=np.int64)}
