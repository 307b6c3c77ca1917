"""llama.cpp's unigram tokenizer (GGUF ``t5``: :class:`LlamaUnigram`): a sentencepiece unigram
model run by llama.cpp's rules where they differ from sentencepiece's.

>>> LlamaUnigram.variant
'gguf:t5'
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ubpe_native._spm import SpmNormalizer
from ubpe_native._spm_pipeline import SpmPipeline

from ..errors import ModelFormatError
from ..text.normalizers import Normalizer
from .imported import USER_DEFINED, ImportedTokenizer
from .sentencepiece import SPACE, SentencePieceUnigram, _i32, blob_offsets

__all__ = ["LlamaUnigram"]


#: architectures whose ``<mask>`` token swallows the whitespace before it (llama.cpp's
#: ``LLAMA_TOKEN_ATTR_LSTRIP``, set by ``general.architecture`` in ``llama_vocab::impl::load``)
_MASK_LSTRIP_ARCHITECTURES = ("nomic-bert-moe", "jina-bert-v3")
_MASK = "<mask>"


class LlamaUnigram(SentencePieceUnigram):
    """llama.cpp's unigram tokenizer (GGUF ``t5``, ``llm_tokenizer_ugm``), id for id.

    The pieces, scores and ``precompiled_charsmap`` are a sentencepiece unigram model's, and
    the normalizer and the Viterbi kernel are `SentencePieceUnigram`'s, run with llama.cpp's
    rules where they differ from sentencepiece's (each one checked against llama.cpp built from
    the pinned sdist, ``tests/spec/test_llama_vocabs.py``):

    * special tokens are cut out of the text first (user-defined ones always, control ones with
      ``parse_special``), and every fragment between them is normalized on its own -- a dummy
      prefix in front of each (sentencepiece normalizes the whole text once);
    * with ``remove_extra_whitespaces`` a ``▁`` goes in front of every word, the first one too,
      even when ``add_space_prefix`` is false (sentencepiece: only with ``add_dummy_prefix``);
    * the dummy prefix goes in front of the first character that is no space, so a text of
      spaces only gets none (sentencepiece: at the start of any text);
    * unused pieces are matched and chosen like normal ones (sentencepiece never picks them:
      ``[PAD250001]`` is one id here, nine there);
    * a user-defined piece scores 0 in the lattice (sentencepiece: ``0.1 * (bytes - 1)``);
    * where the text starts like a user-defined piece, that start is not normalized, whole
      piece or not (llama.cpp's matcher returns the longest path it walked: with ``ab``
      user-defined, the ``a`` of ``a`` + U+0323 is not composed with its accent);
    * path scores add up in double precision without sentencepiece's float32 rounding and
      renormalisation, so near ties may resolve differently;
    * no byte fallback: a character no piece covers is the unknown id, one per run;
    * ``decode`` writes every token's text (``<unk>``, control tokens), as
      ``llama_detokenize(..., unparse_special=true)`` does, minus the dummy prefix when
      ``add_space_prefix``.

    Defaults when the file says nothing: ``add_bos`` false, ``add_eos`` true,
    ``add_space_prefix`` true, ``remove_extra_whitespaces`` false.
    """

    variant = "gguf:t5"

    def __init__(self, tokens: list[str], scores: np.ndarray, *, token_types: np.ndarray,
                 precompiled_charsmap: bytes, specials: dict[str, int | None] | None = None,
                 flags: dict[str, Any] | None = None, name: str = "", architecture: str = "",
                 where: str = "<tokens>"):
        flags = dict(flags or {})
        add_space_prefix = True if flags.get("add_space_prefix") is None else bool(flags["add_space_prefix"])
        remove_extra = bool(flags.get("remove_extra_whitespaces") or False)
        flags.update(add_space_prefix=add_space_prefix,
                     add_bos=bool(flags.get("add_bos") or False),
                     add_eos=True if flags.get("add_eos") is None else bool(flags["add_eos"]))
        user = tuple(t for t, kind in zip(tokens, np.asarray(token_types).tolist()) if kind == USER_DEFINED and t)
        try:
            normalizer = Normalizer(precompiled_charsmap, add_dummy_prefix=add_space_prefix or remove_extra,
                                    remove_extra_whitespaces=remove_extra, escape_whitespaces=True,
                                    protected=user, protect_prefixes=True)
        except ModelFormatError as exc:
            raise ModelFormatError(f"{where}: {exc}") from None
        self.architecture = architecture
        self._init_char_model(tokens, scores, token_types, specials, flags, name, None, where, normalizer)
        self._kernel = self._build_lattice(llama=True)
        # the C normalizer puts the dummy prefix in front of a text of spaces too (with spaces
        # kept, such a text must go the general way: _prepare), and has no llama.cpp matcher
        # of user-defined pieces
        general = (add_space_prefix and not remove_extra) or bool(user)
        self._pipeline = None if general else self._build_llama_unigram_pipeline()

    @property
    def _llama_text(self) -> bool:
        return True

    def _build_llama_unigram_pipeline(self) -> SpmPipeline:
        """The normalizer and the lattice in C, for texts without a user-defined token (a text
        holding one is handed back to the general path, which cuts it first)."""
        norm = self.normalizer
        native = SpmNormalizer(
            np.asarray(norm._array or [], dtype=np.uint32), norm._replacements, norm.add_dummy_prefix,
            norm.remove_extra_whitespaces, norm.escape_whitespaces, False, b"", np.zeros(1, np.int64), _i32([]))
        user = [t.encode("utf-8", "surrogatepass") for t, _, _, _ in self._special_table(False)]
        return SpmPipeline(native, self._kernel, False, b"".join(user), blob_offsets(user))

    def _native(self, text: str) -> list[int]:
        # (the normalizer wrote bytes that are no UTF-8 as surrogateescape code points)
        return self._kernel.encode(text.encode("utf-8", "surrogateescape")).tolist()

    def _strip_flags(self, token: int) -> tuple[bool, bool]:
        return self.texts[token] == _MASK and self.architecture in _MASK_LSTRIP_ARCHITECTURES, False

    def _fragments(self, text: str, parse_special: bool) -> list[str | int]:
        return ImportedTokenizer._fragments(self, text, parse_special)

    def _prepare(self, fragments: list[str | int]) -> list[str | int]:
        """Each text fragment normalized on its own (llama.cpp's ``normalize``); empty ones go,
        and one of spaces only has no dummy prefix."""
        out: list[str | int] = []
        for fragment in fragments:
            if isinstance(fragment, str):
                fragment = self.normalizer(fragment)
                if self.normalizer.add_dummy_prefix and not fragment.strip(SPACE):
                    fragment = fragment[1:]
                if not fragment:
                    continue
            out.append(fragment)
        return out

    @staticmethod
    def _user_defined_score(text: str) -> float:
        return 0.0

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(remove_extra_whitespaces=self.normalizer.remove_extra_whitespaces,
                    architecture=self.architecture)
        return info
