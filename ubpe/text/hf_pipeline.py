"""The text pipeline of an HF ``tokenizer.json``, as HF ``tokenizers`` runs it around its model.

``Tokenizer.encode`` (``tokenizers``' ``tokenizer/mod.rs``) cuts the added tokens out of the
text (:class:`AddedTokens`), normalizes every other segment (:func:`normalize`), cuts each one
into words with the pre-tokenizer (:class:`PreTokenizer`), and hands every word to the model;
``Tokenizer.decode`` turns ids back into token strings and runs the decoder
(:func:`decode_tokens`). Each component here is one of HF's, with HF's rules:

* a ``Split`` keeps, removes or merges the pattern's matches with their neighbours
  (``SplitDelimiterBehavior``); ``ByteLevel`` adds a space in front of a word that has none
  (``add_prefix_space``), cuts with GPT-2's regex (``use_regex``) and spells every byte as
  GPT-2's printable character; ``Metaspace`` writes spaces as ``▁`` and prepends one to every
  segment (``always``) or to the one at the start of the text (``first``);
* an added token matches leftmost-longest; ``lstrip`` / ``rstrip`` take the whitespace beside it
  (a match inside whitespace an earlier token took is still a token, unless its own ``lstrip``
  leaves it empty), ``single_word`` keeps it only between non-word characters; ``normalized`` tokens are
  matched in the normalized text (their content normalized too), the others in the raw text.

>>> pre = PreTokenizer([("split", regex.compile(r"\\s+"), "removed", False)])
>>> pre.words("a b  c", True)
['a', 'b', 'c']
>>> decode_tokens([("replace", regex.compile("▁"), " "), ("byte_fallback",), ("fuse",), ("strip", " ", 1, 0)],
...               ["▁hi", "<0xC3>", "<0xA9>", "▁x"])
'hié x'
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from .._fntools import namedtuple  # (collections.namedtuple without exec: ubpe._fntools)
from collections.abc import Callable, Sequence

from ubpe_native._numpy import np

from .._lazy import LazyModule, LazyPattern, regex
from .byte_chars import BYTE_TO_CHAR, CHAR_TO_BYTE, byte_chars, chars_bytes
from .literals import literal_finder
from .._lazy import re  # (imported when first used: with enum, ~2 ms of a cold load)

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from ubpe_native._hf_pretok import HFPreTokenizer

#: GPT-2's regex as HF's ``ByteLevel`` pre-tokenizer writes it (``pre_tokenizers/byte_level.rs``)
BYTE_LEVEL_REGEX = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
#: whose Unicode HF's pre-tokenizers classify code points by (Oniguruma's, read off
#: ``tokenizers``: `ubpe.text.peer_classes`), for the kernel's steps
UNICODE = "tokenizers"
# HF's SplitDelimiterBehavior, in the order of `ubpe_native._hf_pretok`'s enum (a step's behaviour is its index)
BEHAVIORS = ("removed", "isolated", "merged_with_previous", "merged_with_next", "contiguous")
_BYTES_TO_CHARS = "".join(BYTE_TO_CHAR[b] for b in range(256))
_LEADING_SPACE = LazyPattern(r"^\s+")
#: the modules of BERT's words and of ``tokenizers``' Unicode steps, imported when a pipeline
#: first runs one (a Metaspace or byte-level file's load needs neither)
_bert_words = LazyModule("ubpe.text.bert_words")
_unicode = LazyModule("ubpe.text.unicode")
_TRAILING_SPACE = LazyPattern(r"\s+$")
_WORD_CHAR = LazyPattern(r"\w")




# -- normalizers ------------------------------------------------------------------------------

#: A normalizer step: ``("unicode", form)``, ``("lowercase",)``, ``("prepend", text)``,
#: ``("replace", compiled pattern, content)``, ``("strip", left, right)``, ``("bert", BertNormalizer)``,
#: ``("precompiled", Precompiled)`` (:mod:`ubpe.text.precompiled`), ``("strip_accents",)``.
Normalizer = Sequence[tuple]


@functools.cache
def _combining_marks() -> re.Pattern:
    """What HF's ``StripAccents`` removes: ``is_combining_mark``, the category Mark of the
    Unicode tables ``tokenizers`` carries (`ubpe.text.bert_tables.MARKS`, read off it), not
    this Python's (485 code points fewer than Python 3.11's ``\\p{M}``, 2 more)."""
    from .bert_tables import MARKS

    return re.compile("[" + "".join(f"{chr(first)}-{chr(last)}" for first, last in MARKS) + "]+")


def normalize(steps: Normalizer, text: str) -> str:
    """``text`` after every normalizer step, in order.

    >>> normalize([("prepend", "▁"), ("replace", regex.compile(" "), "▁")], "a b")
    '▁a▁b'
    """
    for step in steps:
        kind = step[0]
        if kind == "unicode":  # with tokenizers' Unicode tables, not this Python's (ubpe.text.unicode)
            text = _unicode.normalize(step[1], text)
        elif kind == "lowercase":
            text = _unicode.lowercase(text)
        elif kind == "prepend":
            text = step[1] + text if text else text
        elif kind == "replace":  # content is literal: its backslashes escaped for the template
            text = step[1].sub(step[2].replace("\\", "\\\\"), text)
        elif kind == "strip":
            if step[1]:
                text = _LEADING_SPACE.sub("", text)
            if step[2]:
                text = _TRAILING_SPACE.sub("", text)
        elif kind in ("bert", "precompiled"):  # a callable stage of its own
            text = step[1](text)
        elif kind == "strip_accents":
            text = _combining_marks().sub("", text)
    return text


# -- pre-tokenizers ---------------------------------------------------------------------------


def split_spans(pattern: regex.Pattern, text: str, behavior: str, invert: bool) -> list[str]:
    """HF's ``NormalizedString::split``: the pieces of ``text`` cut at ``pattern``'s matches,
    which are dropped, kept alone, or joined to a neighbour as ``behavior`` says; empty
    pieces dropped.

    >>> split_spans(regex.compile("-"), "a-b--c", "merged_with_previous", False)
    ['a-', 'b-', '-', 'c']
    >>> split_spans(regex.compile("▁"), "▁a▁▁b", "merged_with_next", False)
    ['▁a', '▁', '▁b']
    """
    spans: list[tuple[int, int, bool]] = []
    previous = 0
    for found in pattern.finditer(text):
        start, end = found.span()
        if start > previous:
            spans.append((previous, start, invert))
        spans.append((start, end, not invert))
        previous = end
    if previous < len(text):
        spans.append((previous, len(text), invert))
    kept: list[list[int]] = []
    if behavior == "removed":
        kept = [[s, e] for s, e, match in spans if not match]
    elif behavior == "isolated":
        kept = [[s, e] for s, e, _ in spans]
    elif behavior == "contiguous":
        last = None
        for s, e, match in spans:
            if kept and match == last:
                kept[-1][1] = e
            else:
                kept.append([s, e])
            last = match
    elif behavior == "merged_with_previous":
        last = False
        for s, e, match in spans:
            if kept and match and not last:
                kept[-1][1] = e
            else:
                kept.append([s, e])
            last = match
    else:  # merged_with_next
        last = False
        for s, e, match in reversed(spans):
            if kept and match and not last:
                kept[-1][0] = s
            else:
                kept.append([s, e])
            last = match
        kept.reverse()
    return [text[s:e] for s, e in kept if e > s]


class PreTokenizer:
    """HF's pre-tokenizers as a list of steps, each applied to every word the previous left:

    * ``("split", compiled pattern, behavior, invert)`` (``Split``, ``Digits``, ``Punctuation``,
      ``Whitespace``, ``WhitespaceSplit`` are all this);
    * ``("byte_level", add_prefix_space, use_regex)``;
    * ``("metaspace", replacement, prepend_scheme, split)``;
    * ``("bert",)`` (``BertPreTokenizer``: :func:`~ubpe.text.bert_words.bert_words`).

    A word carries whether it starts the text (``first``), which ``Metaspace``'s ``first``
    scheme needs. With a ``byte_level`` step the words come out in GPT-2's alphabet.
    """

    name = "hf"

    def __init__(self, steps: Sequence[tuple]):
        self.steps = list(steps)
        self.byte_level = any(step[0] == "byte_level" for step in self.steps)
        self._byte_level_regex = LazyPattern(BYTE_LEVEL_REGEX)  # (compiled when Python splits)

    def native(self, end_of_word: bool = False, characters: tuple[np.ndarray | None, int, bool] | None = None,
               unicode: str = UNICODE) -> tuple[HFPreTokenizer | None, str | None]:
        """``(program, reason)``: these steps as `ubpe_native._hf_pretok.HFPreTokenizer`, which
        gives a byte-level model's words (``end_of_word``: as an end-of-word model's units)
        without the GIL, or None and why not: the kernel takes ``split`` steps whose pattern
        the regex VM compiles and ``byte_level`` steps, with one ``byte_level`` at least. For a
        character model (``characters``: its table of known code points or None, the code
        point an unknown one becomes or -1, whether a run of them becomes one) there is no
        ``byte_level`` step and the words are text, its unknown characters replaced. The
        ``split`` and ``byte_level`` steps classify code points by the Unicode of ``unicode``
        (`ubpe.text.patterns.code_point_classes`, `ubpe.text.regex_program`): HF's,
        Oniguruma's, by default; ``"regex"`` splits as `words` does (the `regex` module's).

        >>> PreTokenizer([("split", regex.compile(r"\\p{N}"), "isolated", False), ("byte_level", False, True)]).native()[1] is None
        True
        >>> PreTokenizer([("bert",), ("byte_level", False, True)]).native()[1]
        "the kernel does not run a 'bert' step"
        """
        # (here: a file whose pipeline the kernel does not run, BERT's, imports neither)
        from ubpe_native._hf_pretok import GPT2_SPELLING, STEP_BYTE_LEVEL, STEP_SPLIT, HFPreTokenizer

        rows = []
        for step in self.steps:
            if step[0] == "byte_level":
                rows.append((STEP_BYTE_LEVEL, int(step[1]), int(step[2]), 0))
                continue
            if step[0] != "split":
                return None, f"the kernel does not run a {step[0]!r} step"
            # (a pattern left uncompiled has the default flags: `ubpe.io.hf_import._valid_by_the_cache`)
            if not isinstance(step[1], LazyPattern) and step[1].flags != regex.compile("").flags:
                return None, f"the split pattern {step[1].pattern!r} has flags"
            from .regex_program import compile_pattern  # (a Split step's: Metaspace's pipeline imports no VM)

            compiled = compile_pattern(step[1].pattern, unicode)
            if compiled.pattern_id is None:
                return None, f"the regex VM does not take {step[1].pattern!r}: {compiled.reason}"
            rows.append((STEP_SPLIT, compiled.pattern_id, BEHAVIORS.index(step[2]), int(step[3])))
        if characters is not None:
            if self.byte_level:
                return None, "a byte_level step in a character model"
            known, sentinel, fuse = characters  # no byte_level step: the class table is not read
            return HFPreTokenizer(rows, None, GPT2_SPELLING, 0, known, sentinel, fuse), None
        if not self.byte_level:
            return None, "no byte_level step"
        from .class_tables import code_point_class_buffer

        return HFPreTokenizer(rows, code_point_class_buffer(unicode), GPT2_SPELLING, int(end_of_word)), None

    def words(self, text: str, first: bool, spell: bool = True) -> list[str]:
        """The words of one normalized segment; ``first``: the segment starts the text.
        ``spell=False``: a final ``ByteLevel`` step leaves the words as text (not in GPT-2's
        alphabet), for a model that takes their UTF-8 bytes."""
        words: list[tuple[str, bool]] = [(text, first)] if text else []
        last = len(self.steps) - 1
        for k, step in enumerate(self.steps):
            out: list[tuple[str, bool]] = []
            for word, at_start in words:
                pieces = self._apply(step, word, at_start, spell or k < last)
                out.extend((piece, at_start and j == 0) for j, piece in enumerate(pieces))
            words = out
        return [word for word, _ in words]

    def _apply(self, step: tuple, word: str, at_start: bool, spell: bool) -> list[str]:
        kind = step[0]
        if kind == "split":
            return split_spans(step[1], word, step[2], step[3])
        if kind == "bert":
            return _bert_words.bert_words(word)
        if kind == "byte_level":
            if step[1] and not word.startswith(" "):
                word = " " + word
            pieces = split_spans(self._byte_level_regex, word, "isolated", False) if step[2] else [word]
            return [byte_chars(piece) for piece in pieces] if spell else pieces
        # metaspace
        replacement, scheme, split = step[1], step[2], step[3]
        word = word.replace(" ", replacement)
        if not word.startswith(replacement) and (scheme == "always" or (scheme == "first" and at_start)):
            word = replacement + word
        if split:  # split_spans(replacement, merged_with_next), in one regex
            return _metaspace_words(replacement).findall(word)
        return [word] if word else []


def metaspace_split(word: str, replacement: str = "▁") -> list[str]:
    """``Metaspace``'s split of a word already written with ``replacement``: each replacement
    character starts a piece (HF's ``MergedWithNext``).

    >>> metaspace_split("a▁b▁▁c")
    ['a', '▁b', '▁', '▁c']
    """
    return _metaspace_words(replacement).findall(word)


@functools.lru_cache(maxsize=None)
def _metaspace_words(replacement: str) -> regex.Pattern:
    """``Metaspace``'s split: each replacement character starts a word.

    >>> _metaspace_words("▁").findall("a▁b▁▁c▁")
    ['a', '▁b', '▁', '▁c', '▁']
    >>> split_spans(regex.compile("▁"), "a▁b▁▁c▁", "merged_with_next", False)
    ['a', '▁b', '▁', '▁c', '▁']
    """
    r = regex.escape(replacement)
    return regex.compile(f"{r}[^{r}]*|[^{r}]+")


# -- added tokens -----------------------------------------------------------------------------


class AddedToken(namedtuple("AddedToken", "content id special single_word lstrip rstrip normalized",
                            defaults=(False,) * 5)):
    """One entry of ``added_tokens`` (`collections`' named tuple: no `dataclasses` on a load's
    path, and no `typing.NamedTuple`, which compiles each field's annotation)."""

    __slots__ = ()

    content: str
    id: int
    special: bool  # (default: False)
    single_word: bool  # (default: False)
    lstrip: bool  # (default: False)
    rstrip: bool  # (default: False)
    normalized: bool  # (default: False)


class AddedTokens:
    """HF's ``AddedVocabulary``: cut the added tokens out of a text (see the module docstring).

    >>> added = AddedTokens([AddedToken("<s>", 1, special=True, rstrip=True)], lambda t: t)
    >>> added.split("a <s>  b")
    [('a ', 0), 1, ('b', 7)]
    """

    def __init__(self, tokens: Sequence[AddedToken], normalizer: Callable[[str], str]):
        self.tokens = list(tokens)
        self.normalizer = normalizer
        self._raw = self._matcher([t for t in self.tokens if not t.normalized], lambda t: t)
        self._normalized = self._matcher([t for t in self.tokens if t.normalized], normalizer)

    def spelling(self, token: AddedToken) -> str:
        """How HF spells an added token (``id_to_token``, ``decode``): a ``normalized`` one
        by its normalized content.

        >>> AddedTokens([], lambda t: t.upper()).spelling(AddedToken("ab", 5, normalized=True))
        'AB'
        """
        return self.normalizer(token.content) if token.normalized else token.content

    def raw_match(self, text: str) -> bool:
        """Whether an added token matched in the raw text (``normalized=False``) occurs in ``text``.

        >>> AddedTokens([AddedToken("<s>", 1)], str.upper).raw_match("a<s>")
        True
        """
        return self._raw is not None and self._raw[0].search(text) is not None

    @property
    def raw_pattern(self) -> re.Pattern | None:
        """The pattern that finds the added tokens matched in the raw text (None: there are none)."""
        return self._raw[0] if self._raw else None

    @property
    def normalized_pattern(self) -> re.Pattern | None:
        """The pattern that finds the added tokens matched in the normalized text (None: there are none)."""
        return self._normalized[0] if self._normalized else None

    @staticmethod
    def _matcher(tokens: list[AddedToken], spell: Callable[[str], str]):
        table: dict[str, AddedToken] = {}
        for token in tokens:
            text = spell(token.content)
            if text:
                table.setdefault(text, token)
        if not table:
            return None
        # leftmost-longest, as HF's aho-corasick finds them: `str.find`s for a few, an
        # alternation longest first compiled by the `re` module for many (1/50 of the `regex`
        # module's time: Llama 3's 256 added tokens were 0.25 s of its 1.6 s load)
        pattern = literal_finder(table)
        return pattern, table

    def split(self, text: str) -> list[tuple[str, int] | int]:
        """``[(normalized segment, its offset in the text) or token id]``; segments are
        normalized, tokens are ids."""
        out: list[tuple[str, int] | int] = []
        for part in self._cut(text, self._raw, 0):
            if isinstance(part, int):
                out.append(part)
                continue
            segment, offset = part
            normalized = self.normalizer(segment)
            out.extend(self._cut(normalized, self._normalized, offset))
        return out

    def _cut(self, text: str, matcher, offset: int) -> list[tuple[str, int] | int]:
        if not text:
            return []
        if matcher is None:
            return [(text, offset)]
        pattern, table = matcher
        out: list[tuple[str, int] | int] = []
        done = 0
        for found in pattern.finditer(text):
            start, stop = found.span()
            token = table[found.group()]
            if token.single_word and (
                    (start > 0 and _WORD_CHAR.match(text[start - 1]))
                    or (stop < len(text) and _WORD_CHAR.match(text[stop]))):
                continue
            # a match that starts inside the whitespace a previous token's rstrip took is still a
            # token, as in HF's `find_matches` (``" "`` in ``"<s>  "`` with ``<s>`` stripping: <s>,
            # " ", " "); and text after it that the strip took is cut again (``"<s>\t \tx"``:
            # <s>, " ", then "\tx")
            if token.lstrip:
                start = max(done, start - (len(text[:start]) - len(_TRAILING_SPACE.sub("", text[:start]))))
            if token.rstrip:
                rest = text[stop:]
                stop += len(rest) - len(_LEADING_SPACE.sub("", rest))
            if start >= stop:
                # all of it inside what an earlier token's strip took, moved past by its own lstrip:
                # HF drops the empty token (`PreTokenizedString::split` keeps no empty split); where
                # its lstrip moved it past its end, HF panics ("AddedVocabulary bad split"), ubpe
                # drops it too
                continue
            if start > done:
                out.append((text[done:start], offset + done))
            out.append(token.id)
            done = stop
        if done < len(text):
            out.append((text[done:], offset + done))
        return out


# -- decoders ---------------------------------------------------------------------------------


def _byte_fallback(tokens: list[str]) -> list[str]:
    out: list[str] = []
    pending = bytearray()

    def flush() -> None:
        if pending:
            try:
                out.append(pending.decode("utf-8"))
            except UnicodeDecodeError:
                out.extend("\ufffd" for _ in pending)
            pending.clear()

    for token in tokens:
        if len(token) == 6 and token.startswith("<0x") and token.endswith(">"):
            try:
                pending.append(int(token[3:5], 16))
                continue
            except ValueError:
                pass
        flush()
        out.append(token)
    flush()
    return out


def _strip(token: str, content: str, start: int, stop: int) -> str:
    begin, end = 0, len(token)
    while begin < min(start, len(token)) and token[begin] == content:
        begin += 1
    for _ in range(stop):
        if end > begin and token[end - 1] == content:
            end -= 1
        else:
            break
    return token[begin:end]


def decode_tokens(steps: Sequence[tuple] | None, tokens: list[str]) -> str:
    """HF's ``Decoder::decode`` of token strings, and the join ``Tokenizer.decode`` makes
    (``" "`` without a decoder). Steps: ``("byte_level",)``, ``("replace", pattern, content)``,
    ``("byte_fallback",)``, ``("fuse",)``, ``("strip", content, start, stop)``,
    ``("metaspace", replacement, prepend)``, ``("wordpiece", prefix, cleanup)``."""
    if steps is None:
        return " ".join(tokens)
    for step in steps:
        kind = step[0]
        if kind == "byte_level":
            raw = b"".join(chars_bytes(t) if all(c in CHAR_TO_BYTE for c in t) else t.encode("utf-8", "surrogatepass")
                           for t in tokens)
            tokens = [raw.decode("utf-8", "replace")]
        elif kind == "replace":
            tokens = [step[1].sub(lambda _: step[2], t) for t in tokens]
        elif kind == "byte_fallback":
            tokens = _byte_fallback(tokens)
        elif kind == "fuse":
            tokens = ["".join(tokens)]
        elif kind == "strip":
            tokens = [_strip(t, step[1], step[2], step[3]) for t in tokens]
        elif kind == "metaspace":
            tokens = [t.replace(step[1], "" if i == 0 and step[2] else " ") for i, t in enumerate(tokens)]
        elif kind == "wordpiece":
            tokens = [_wordpiece_token(t, i, step[1], step[2]) for i, t in enumerate(tokens)]
    return "".join(tokens)


#: what HF's ``WordPiece`` decoder's ``cleanup`` replaces, in order (``decoders/wordpiece.rs``)
WORDPIECE_CLEANUP = ((" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re"))


def _wordpiece_token(token: str, index: int, prefix: str, cleanup: bool) -> str:
    """HF's ``WordPiece`` decoder on one token: after the first, a continuation (``##ing``)
    loses its prefix and any other token gets a space in front; ``cleanup`` then joins
    punctuation and contractions to the word before, token by token.

    >>> [_wordpiece_token(t, i, "##", True) for i, t in enumerate(["##a", "b", "##c", ".", "do"])]
    ['##a', ' b', 'c', '.', ' do']
    """
    if index:
        token = token[len(prefix):] if token.startswith(prefix) else " " + token
    if cleanup:
        for dirty, clean in WORDPIECE_CLEANUP:
            token = token.replace(dirty, clean)
    return token
