"""Mistral's tekken tokenizer: tiktoken's byte-level BPE behind a block of special tokens.

mistral-common's ``Tekkenizer`` (``mistral_common/tokens/tokenizers/tekken.py``) runs a
``tiktoken.Encoding`` on the file's ranks and then shifts every id by the number of special
tokens: ids ``0..n-1`` are the special tokens (``<unk>``, ``<s>``, ``</s>``, ``[INST]``, ...,
then ``<SPECIAL_k>`` fillers), and the mergeable token of rank ``r`` has id ``n + r``. Shifting
every rank by the same ``n`` keeps their order, so :class:`TekkenBPE` is a
:class:`~ubpe.models.bytelevel.ByteLevelBPE` built on the shifted ranks: its merges, its
pattern and every ubpe encoder (``encode_with(text, "fewest")``) run unchanged and return
tekken's ids. What differs from tiktoken's surface is mistral-common's:

* ``encode(text, bos=False, eos=False)`` never finds special tokens in the text (``"<s>"`` is
  three characters of text, as ``Tekkenizer.encode`` has it); ``allowed_special`` still cuts
  named ones out, as tiktoken does; in the one vocabulary (:mod:`ubpe.text.specials`)
  ``add_special`` puts the BOS in front (as a request starts) and ``parse_special`` cuts out
  every special token;
* ``decode`` drops special tokens (mistral-common's ``SpecialTokenPolicy.IGNORE``) unless
  ``special_token_policy="keep"``, and decodes each run of mergeable tokens between them on
  its own, as ``Tekkenizer.decode`` does; ``decode_bytes`` and ``pieces`` give special tokens
  as their text (``"keep"``), for the views.

>>> ranks = [bytes([b]) for b in range(256)] + [b"ab", b"abc"]
>>> tok = TekkenBPE.from_tekken(ranks, ["<unk>", "<s>", "</s>"], pattern=r"\\S+|\\s+")
>>> tok.encode("abc <s>", bos=True)
[1, 260, 35, 63, 118, 65]
>>> tok.decode([1, 260, 2]), tok.decode([1, 260, 2], special_token_policy="keep")
('abc', '<s>abc</s>')
>>> tok.n_vocab, tok.num_special_tokens
(261, 3)
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Sequence
from itertools import groupby
from typing import AbstractSet, Any, Literal

from ubpe_native._numpy import np

from ..encoders import Encoding
from ..errors import InvalidParameterError, ModelFormatError, UnknownTokenError
from ..pieces import checked_ids
from .bytelevel import ByteLevelBPE
from .chunks import FlatIds, framed, id_lists

#: mistral-common's ``SpecialTokenPolicy`` values: what ``decode`` does with a special token
SPECIAL_TOKEN_POLICIES = ("ignore", "keep", "raise")
BOS, EOS = "<s>", "</s>"
#: the text of the special tokens mistral-common makes up when a file names fewer than its count
FILLER_TEMPLATE = "<SPECIAL_{id}>"
_FILLER = re.compile(r"<SPECIAL_[0-9]+>")
#: how many named special tokens ``describe`` lists (then "...")
_SHOWN_SPECIALS = 20


class TekkenBPE(ByteLevelBPE):
    """A tekken tokenizer (``tekken_*.json``): special tokens at ids ``0..n-1``, then the
    byte-level ranks shifted by ``n``. Built by :mod:`ubpe.io.tekken` (``ubpe.load``) or
    :meth:`from_tekken`; read-only (the source file is the model)."""

    variant = "tekken"
    can_save = False
    #: mistral-common encodes with tiktoken: its code point classes (`ByteLevelBPE.unicode`)
    unicode = "tiktoken"

    def __init__(self) -> None:
        super().__init__()
        #: the file's ``config.version`` (``"v3"``, ``"v7"``, ...), ``None`` if not from a file
        self.version: str | None = None

    @classmethod
    def from_tekken(
        cls, token_bytes: Sequence[bytes], special_tokens: Sequence[str], *, pattern: str, version: str | None = None
    ) -> TekkenBPE:
        """A tokenizer from the bytes of the mergeable tokens in rank order (``token_bytes[r]``
        has rank ``r``; the first 256 are the single bytes) and the special tokens in id order
        (their count is the shift)."""
        shift = len(special_tokens)
        ranks = {piece: shift + rank for rank, piece in enumerate(token_bytes)}
        if len(ranks) != len(token_bytes):
            raise ModelFormatError("two mergeable tokens have the same bytes")
        specials = {text: token for token, text in enumerate(special_tokens)}
        if len(specials) != shift:
            raise ModelFormatError("two special tokens have the same text")
        tok = cls.from_mergeable_ranks(ranks, pattern=pattern, special_tokens=specials)
        tok.version = version
        return tok

    @classmethod
    def from_tekken_arrays(
        cls, pieces: np.ndarray, offsets: np.ndarray, special_tokens: Sequence[str], *, pattern: str,
        version: str | None = None,
    ) -> TekkenBPE:
        """:meth:`from_tekken` of the mergeable tokens as arrays (no Python object per token):
        rank ``r`` is the bytes ``pieces[offsets[r]:offsets[r + 1]]``."""
        shift = len(special_tokens)
        specials = {text: token for token, text in enumerate(special_tokens)}
        if len(specials) != shift:
            raise ModelFormatError("two special tokens have the same text")
        ranks = shift + np.arange(len(offsets) - 1, dtype=np.int64)
        tok = cls.from_token_arrays(pieces, offsets, ranks, pattern=pattern, special_tokens=specials)
        tok.version = version
        return tok

    def with_pattern(self, pattern: str) -> TekkenBPE:
        """The same tokens, ids and special tokens, pre-tokenized by ``pattern``."""
        tok = super().with_pattern(pattern)
        tok.version = self.version
        return tok  # type: ignore[return-value]

    def fit(self, *args: Any, **kwargs: Any) -> TekkenBPE:
        raise InvalidParameterError("a tekken tokenizer is read from its file; fit a ByteLevelBPE instead")

    # -- mistral-common's surface ----------------------------------------------------------

    @property
    def num_special_tokens(self) -> int:
        """How many ids come before the mergeable tokens (mistral-common's shift)."""
        return len(self.special_tokens)

    @property
    def bos_id(self) -> int:
        return self._special_id(BOS)

    @property
    def eos_id(self) -> int:
        return self._special_id(EOS)

    def _special_id(self, text: str) -> int:
        try:
            return self.special_tokens[text]
        except KeyError:
            raise UnknownTokenError(f"this tekken tokenizer has no {text!r} special token") from None

    def encode(  # type: ignore[override]
        self,
        text: str,
        bos: bool = False,
        eos: bool = False,
        *,
        add_special: bool = False,
        parse_special: bool = False,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = (),
    ) -> list[int]:
        """mistral-common's ids of ``text`` (``Tekkenizer.encode(text, bos, eos)``): special
        tokens in the text are plain text unless named in ``allowed_special`` (every one:
        ``parse_special``); ``add_special`` is ``bos=True``."""
        ids = super().encode(text, parse_special=parse_special, allowed_special=allowed_special,
                             disallowed_special=disallowed_special)
        return self._framed(ids, bos or add_special, eos)

    def encode_batch(  # type: ignore[override]
        self,
        text: Sequence[str],
        *,
        bos: bool = False,
        eos: bool = False,
        threads: int | None = None,
        num_threads: int | None = None,
        add_special: bool = False,
        parse_special: bool = False,
        allowed_special: Literal["all"] | AbstractSet[str] = frozenset(),
        disallowed_special: Literal["all"] | Collection[str] = (),
    ) -> list[list[int]]:
        """:meth:`encode` of every text, on ``threads`` threads (same ids as one by one)."""
        return id_lists(*self._flat_batch(text, threads, bos=bos, eos=eos, num_threads=num_threads,
                                          add_special=add_special, parse_special=parse_special,
                                          allowed_special=allowed_special, disallowed_special=disallowed_special))

    def _flat_batch(self, text: Sequence[str], threads: int | None, *, bos: bool = False,  # type: ignore[override]
                    eos: bool = False, add_special: bool = False,
                    disallowed_special: Literal["all"] | Collection[str] = (), **options: Any) -> FlatIds:
        ids, offsets = super()._flat_batch(text, threads, disallowed_special=disallowed_special, **options)
        if len(offsets) == 1:  # no text: no BOS or EOS asked of the model
            return ids, offsets
        return framed(ids, offsets, [self.bos_id] if bos or add_special else [], [self.eos_id] if eos else [])

    def _framed(self, ids: list[int], bos: bool, eos: bool) -> list[int]:
        if bos:
            ids.insert(0, self.bos_id)
        if eos:
            ids.append(self.eos_id)
        return ids

    def _own_encodings(self, doc: str, top_n: int, options: dict[str, Any]) -> list[Encoding]:
        """``encode_with``'s default: :meth:`encode` (mistral-common's ids, no special token
        read from the text), score 0; with options, ``ranked`` runs as any other encoder."""
        if options:
            return super()._own_encodings(doc, top_n, options)
        if top_n != 1:
            raise InvalidParameterError("the byte-level encoder gives one encoding: top_n must be 1")
        return [(self.encode(doc), 0.0)]

    def decode(self, ids: Iterable[int], errors: str = "replace", special_token_policy: str = "ignore") -> str:
        """The text of ``ids`` as ``Tekkenizer.decode`` writes it: special tokens dropped
        (``"ignore"``), written as their text (``"keep"``) or refused (``"raise"``); each run
        of mergeable tokens decoded on its own (bytes that are not UTF-8 follow ``errors``)."""
        if special_token_policy not in SPECIAL_TOKEN_POLICIES:
            raise InvalidParameterError(
                f"`special_token_policy` must be one of {', '.join(SPECIAL_TOKEN_POLICIES)}, got {special_token_policy!r}")
        ids = checked_ids(ids)
        shift = self.num_special_tokens
        texts: list[str] = []
        for special, run in groupby(ids, lambda token: token < shift):
            group = list(run)
            if not special:
                texts.append(self.decode_bytes(group).decode("utf-8", errors=errors))
            elif special_token_policy == "keep" or min(group) < 0:  # negative ids: decode_bytes refuses
                texts.append(self.decode_bytes(group).decode("utf-8"))
            elif special_token_policy == "raise":
                raise InvalidParameterError(f"the ids hold special tokens {group[:5]} (special_token_policy='raise')")
        return "".join(texts)

    def decode_batch(self, batch: Iterable[Iterable[int]]) -> list[str]:
        return [self.decode(ids) for ids in batch]

    def describe(self) -> dict[str, Any]:
        """Sizes and the id layout, pattern, and the special tokens by id (fillers counted)."""
        info = super().describe()
        shift = self.num_special_tokens
        version = f"tekken {self.version}: " if self.version else ""
        info["vocabulary"] = (f"{version}{self.n_vocab} ids: {shift} special (0..{shift - 1}), then "
                              f"{len(self.token_ids)} ranks at rank + {shift} "  # type: ignore[arg-type]
                              f"(256 bytes + {self.vocabulary.n_merged} merged)")  # type: ignore[union-attr]
        by_id = sorted(self.special_tokens, key=self.special_tokens.__getitem__)
        named = [text for text in by_id if not _FILLER.fullmatch(text)]
        shown = ", ".join(named[:_SHOWN_SPECIALS]) + (", ..." if len(named) > _SHOWN_SPECIALS else "")
        fillers = len(by_id) - len(named)
        info["special tokens"] = (shown or "none named") + (f", then {fillers} fillers <SPECIAL_k>" if fillers else "")
        return info

    def __repr__(self) -> str:
        if self.vocabulary is None:
            return "TekkenBPE(unfitted)"
        return f"TekkenBPE(n_vocab={self.n_vocab}, special_tokens={self.num_special_tokens}, version={self.version!r})"

