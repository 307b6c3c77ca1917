"""Special tokens of byte-level models: their checks and tiktoken's allowed/disallowed policy.

A special token is a string (``"<|endoftext|>"``) with an id of its own, outside the
mergeable tokens. ``encode`` turns those in ``allowed`` into their ids; by default any other
one in the text is an error (:class:`DisallowedSpecialTokenError`), as in tiktoken.

>>> policy = SpecialTokens({"<|a|>": 9, "<|ab|>": 10})
>>> sorted(policy.allowed("all")), sorted(policy.disallowed({"<|a|>"}, "all"))
(['<|ab|>', '<|a|>'], ['<|ab|>'])
>>> [(piece, special) for piece, special in policy.segments("x<|ab|>y", {"<|ab|>"})]
[('x', False), ('<|ab|>', True), ('y', False)]

**The one special-token vocabulary.** Every family's ``encode`` and ``encode_batch`` (and so
``encode_batch_to_numpy``) take the same two keywords, keyword-only, both ``False`` by default:

* ``add_special``: put the tokens the model frames a text with around its ids - BOS/EOS as
  the file says (llama.cpp's ``add_special``), ``[CLS] ... [SEP]``, HF's post-processor
  (``add_special_tokens``), CLIP's start/end of text, tekken's BOS (as mistral-common starts a
  request, and llama.cpp's tekken GGUF files: ``add_bos_token`` true, ``add_eos_token``
  false); nothing where the model has no such tokens (tiktoken's, ubpe's own);
* ``parse_special``: the special tokens written in the text become their ids (llama.cpp's
  ``parse_special``, tiktoken's ``allowed_special="all"``, minbpe's ``allowed_special="all"``);
  ``False`` leaves special-token text to the system's own rule - plain text (llama.cpp,
  sentencepiece, mistral-common, minbpe), an error (tiktoken's default
  ``disallowed_special="all"``: :class:`DisallowedSpecialTokenError`), or cut out all the same
  (HF's added tokens and CLIP's, which their tokenizers always cut out).

The peers' own names stay, as aliases with exactly their meaning: tiktoken's
``allowed_special`` / ``disallowed_special`` on the byte-level families (``ByteLevelBPE``,
``TekkenBPE``), mistral-common's ``bos`` / ``eos`` on ``TekkenBPE`` (added to what
``add_special`` adds). UBPE and UBPEClassic have no special tokens: the two keywords change
nothing there (their ubpe 0.3.0 ``encode`` is otherwise unchanged).

>>> tiktoken_allowed(True, frozenset()), tiktoken_allowed(False, {"<|a|>"})
('all', {'<|a|>'})
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from collections.abc import Collection, Iterator, Mapping

from ubpe_native._numpy import numpy_types

from ..errors import DisallowedSpecialTokenError, InvalidParameterError
from .._lazy import re  # (imported when first used: with enum, ~2 ms of a cold load)

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import AbstractSet, Literal

# tiktoken ranks are u32, our ids 31-bit
MAX_RANK = 2**31 - 2
#: the one special-token vocabulary: the keywords every family's encode / encode_batch takes
SPECIAL_KEYWORDS = ("add_special", "parse_special")


def special_options(add_special: bool, parse_special: bool) -> dict[str, bool]:
    """The one vocabulary's keywords that ask for something (the defaults left out, so that a
    family's batch takes its fastest path for ``encode_batch(docs)`` as for
    ``encode_batch(docs, add_special=False)``).

    >>> special_options(True, False)
    {'add_special': True}
    """
    return {name: True for name, value in zip(SPECIAL_KEYWORDS, (add_special, parse_special)) if value}


def tiktoken_allowed(parse_special: bool, allowed_special: Literal["all"] | AbstractSet[str]
                     ) -> Literal["all"] | AbstractSet[str]:
    """tiktoken's ``allowed_special`` for the one vocabulary's ``parse_special`` and the alias
    as given: ``parse_special=True`` is ``allowed_special="all"``; naming some of them as well
    is a contradiction (:class:`InvalidParameterError`)."""
    if not parse_special:
        return allowed_special
    if allowed_special and allowed_special != "all":
        raise InvalidParameterError("parse_special=True allows every special token: pass it or "
                                    "allowed_special=..., not both")
    return "all"


@functools.lru_cache(maxsize=64)
def special_regex(tokens: frozenset[str]) -> re.Pattern:
    """A regex matching any of ``tokens``; of two starting at one place the longer wins.
    Literals alone: the `re` module compiles them (tekken's 1,000 specials in milliseconds,
    where the `regex` module took a large part of a second)."""
    return re.compile("|".join(re.escape(t) for t in sorted(tokens, key=lambda t: (-len(t), t))))


class SpecialTokens:
    """Checked ``text -> id`` special tokens and tiktoken's rules for finding them in text."""

    def __init__(self, special_tokens: Mapping[str, int] | None = None):
        specials = {}
        for text, token in (special_tokens or {}).items():
            if not isinstance(text, str) or not text:
                raise InvalidParameterError(f"special tokens must be non-empty str, got {text!r}")
            if (isinstance(token, bool) or not isinstance(token, (int, *numpy_types("integer")))
                    or not 0 <= token <= MAX_RANK):
                raise InvalidParameterError(f"special token {text!r} has an invalid id {token!r}")
            specials[text] = int(token)
        if len(set(specials.values())) != len(specials):
            owners: dict[int, list[str]] = {}
            for text, token in specials.items():
                owners.setdefault(token, []).append(text)
            token, texts = next((t, names) for t, names in owners.items() if len(names) > 1)
            raise InvalidParameterError(f"two special tokens share an id: {texts[0]!r} and {texts[1]!r} are both {token}")
        self.ids: dict[str, int] = specials
        self._names = frozenset(specials)  # one object: its hash is computed once (special_regex's cache key)

    def allowed(self, allowed_special: Literal["all"] | AbstractSet[str]) -> AbstractSet[str]:
        """The special tokens ``allowed_special`` names (all of this model's unknown: error)."""
        if allowed_special == "all":
            return self._names
        if not allowed_special:  # the default: nothing to check (tekken's 1,000 specials: 10 µs a call)
            return frozenset()
        names = self._names
        allowed = set(allowed_special)
        unknown = allowed - names
        if unknown:
            raise InvalidParameterError(f"{sorted(unknown)[:3]} are not special tokens of this tokenizer")
        return allowed

    def disallowed(self, allowed: AbstractSet[str], disallowed_special: Literal["all"] | Collection[str]) -> AbstractSet[str]:
        """The special tokens that must not appear in the text."""
        if disallowed_special == "all":
            return self._names - allowed if allowed else self._names
        return set(disallowed_special)

    def check(self, text: str, disallowed: AbstractSet[str]) -> None:
        """Raise :class:`DisallowedSpecialTokenError` if ``text`` holds one of ``disallowed``."""
        if not disallowed:
            return
        found = special_regex(frozenset(disallowed)).search(text)
        if found:
            raise DisallowedSpecialTokenError(
                f"the text holds the disallowed special token {found.group()!r}; pass it in "
                "`allowed_special` to encode it as a special token, or exclude it from "
                "`disallowed_special` (e.g. `disallowed_special=()`) to encode it as text"
            )

    def segments(self, text: str, allowed: AbstractSet[str]) -> Iterator[tuple[str, bool]]:
        """``text`` cut at the ``allowed`` special tokens: ``(piece, is_special)`` in order."""
        start = 0
        if allowed:
            for found in special_regex(frozenset(allowed)).finditer(text):
                yield text[start : found.start()], False
                yield found.group(), True
                start = found.end()
        yield text[start:], False
