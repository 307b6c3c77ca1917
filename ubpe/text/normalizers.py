"""Sentencepiece's text normalizer: the precompiled character map, spaces and the dummy prefix.

A sentencepiece model carries its normalization rules (``nmt_nfkc`` by default) compiled into
``normalizer_spec.precompiled_charsmap``: a Darts double-array trie over UTF-8 strings whose
values point into a blob of NUL-terminated replacements. At each position the longest rule that
matches is applied, else one UTF-8 character is copied (a malformed byte becomes U+FFFD).
Then, as ``normalizer.cc`` does: leading, trailing and repeated spaces are removed
(``remove_extra_whitespaces``), a space is put in front (``add_dummy_prefix``) and spaces
become ``▁`` (``escape_whitespaces``).

>>> Normalizer(b"", add_dummy_prefix=True, remove_extra_whitespaces=True)("  Hello   world ")
'▁Hello▁world'
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import os
import sys
from array import array

from ..errors import ModelFormatError
from .._lazy import re  # (imported when first used: with enum, ~2 ms of a cold load)

SPACE = "▁"
_REPLACEMENT = "\ufffd"


def _utf8_length(lead: int) -> int:
    # sentencepiece's string_util::OneCharLen: by the high nibble of the lead byte
    return (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4)[lead >> 4]


class Normalizer:
    """``Normalizer(precompiled_charsmap, ...)(text) -> normalized text`` (module docstring).

    ``protected``: user-defined pieces, copied unnormalized where they match (longest first),
    as sentencepiece's prefix matcher does. ``protect_prefixes``: llama.cpp's matcher instead
    (``naive_trie::get_longest_prefix`` in ``llm_tokenizer_ugm``), which copies unnormalized
    the longest start of a protected piece that the text starts with, a whole piece or not --
    even part of a character, whose bytes are then no UTF-8 (the result holds them as
    ``surrogateescape`` code points).

    >>> Normalizer(b"", protected=("ab",), protect_prefixes=True)("a\u0301b ab")
    '▁a\u0301b▁ab'
    """

    def __init__(self, precompiled_charsmap: bytes, *, add_dummy_prefix: bool = True,
                 remove_extra_whitespaces: bool = True, escape_whitespaces: bool = True,
                 treat_whitespace_as_suffix: bool = False, protected: tuple[str, ...] = (),
                 protect_prefixes: bool = False):
        self.add_dummy_prefix = add_dummy_prefix
        self.remove_extra_whitespaces = remove_extra_whitespaces
        self.escape_whitespaces = escape_whitespaces
        self.treat_whitespace_as_suffix = treat_whitespace_as_suffix
        #: the rules as given (the model file's bytes; ``b""``: none), for writers
        self.precompiled_charsmap = bytes(precompiled_charsmap or b"")
        self._protected = sorted({p.encode("utf-8") for p in protected if p}, key=len, reverse=True)
        self._protect_prefixes = protect_prefixes
        self._array: array | None = None  # the trie's units (uint32)
        self._replacements = b""
        if precompiled_charsmap:
            self._load(bytes(precompiled_charsmap))

    # (made on the first text normalized here: a model's load, which normalizes in C, needs neither)
    @functools.cached_property
    def _free_run(self) -> re.Pattern | None:
        """ASCII bytes no rule starts with (nor a protected piece): runs of them are copied whole."""
        starts = {p[0] for p in self._protected}
        free = [b for b in range(0x21, 0x80) if b not in starts
                and (self._array is None or self._longest_rule(bytes([b]), 0)[0] == 0
                     and not self._rule_starts_with(b))]
        return re.compile(b"[" + b"".join(re.escape(bytes([b])) for b in free) + b"]+") if free else None

    @functools.cached_property
    def _ascii_table(self) -> dict[int, str] | None:
        """ASCII text: when no rule spans two ASCII bytes, rules apply byte by byte (a table)."""
        if self._protected or self._array is not None and self._ascii_pair_rule():
            return None
        table = {}
        for b in range(0x80):
            piece, used = self._prefix(bytes([b]), 0)
            if piece != bytes([b]):
                table[b] = piece.decode("utf-8")
        return table

    def _ascii_pair_rule(self) -> bool:
        """Whether some rule's key is two or more ASCII bytes (then the table is not enough)."""
        array = self._array
        unit = array[0]
        frontier = [(0 ^ ((unit >> 10) << ((unit & (1 << 9)) >> 6)), 0)]
        while frontier:
            node, depth = frontier.pop()
            for byte in range(1, 0x80):
                child = node ^ byte
                if child >= len(array) or array[child] & ((1 << 31) | 0xFF) != byte:
                    continue
                unit = array[child]
                if (unit >> 8) & 1 and depth + 1 >= 2:
                    return True
                if depth < 16:
                    frontier.append((child ^ ((unit >> 10) << ((unit & (1 << 9)) >> 6)), depth + 1))
        return False

    def _rule_starts_with(self, byte: int) -> bool:
        array = self._array
        unit = array[0]
        node = ((unit >> 10) << ((unit & (1 << 9)) >> 6)) ^ byte
        return node < len(array) and array[node] & ((1 << 31) | 0xFF) == byte

    def _load(self, blob: bytes) -> None:
        if len(blob) < 4:
            raise ModelFormatError("the precompiled charsmap is truncated")
        trie_size = int.from_bytes(blob[:4], "little")
        if trie_size % 4 or 4 + trie_size > len(blob):
            raise ModelFormatError("the precompiled charsmap is corrupt (bad trie size)")
        units = array("I", blob[4 : 4 + trie_size])  # (little-endian uint32: "I" is 4 bytes)
        if sys.byteorder == "big":
            units.byteswap()
        self._array = units
        self._replacements = blob[4 + trie_size :]

    def _longest_rule(self, data: bytes, pos: int) -> tuple[int, int]:
        """(length, value) of the longest charsmap rule matching at ``pos`` (0, 0 if none):
        Darts-clone's commonPrefixSearch."""
        array = self._array
        node = 0
        unit = array[0]
        node ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
        best = (0, 0)
        for i in range(pos, len(data)):
            node ^= data[i]
            if node >= len(array):
                break
            unit = array[node]
            if unit & ((1 << 31) | 0xFF) != data[i]:
                break
            node ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
            if (unit >> 8) & 1:
                if node >= len(array):
                    break
                best = (i + 1 - pos, array[node] & 0x7FFFFFFF)
        return best

    def _prefix(self, data: bytes, pos: int) -> tuple[bytes, int]:
        """(normalized bytes, bytes consumed) at ``pos`` (``NormalizePrefix``)."""
        if self._protect_prefixes:
            walked = max((len(os.path.commonprefix([data[pos : pos + len(p)], p])) for p in self._protected), default=0)
            if walked:
                return data[pos : pos + walked], walked
        for piece in self._protected:
            if data.startswith(piece, pos):
                return piece, len(piece)
        if self._array is not None:
            length, value = self._longest_rule(data, pos)
            if length and value < len(self._replacements):
                end = self._replacements.find(b"\0", value)
                return self._replacements[value : end if end >= 0 else None], length
        n = min(_utf8_length(data[pos]), len(data) - pos)
        try:
            data[pos : pos + n].decode("utf-8")
        except UnicodeDecodeError:
            return _REPLACEMENT.encode("utf-8"), 1
        return data[pos : pos + n], n

    def __call__(self, text: str) -> str:
        if self._ascii_table is not None and text.isascii():
            return self._ascii(text)
        return self._normalize(text)

    def _ascii(self, text: str) -> str:
        """`_normalize` of ASCII text when its rules are one byte each (same result, faster)."""
        text = text.translate(self._ascii_table)
        space = SPACE if self.escape_whitespaces else " "
        if self.remove_extra_whitespaces:
            text = " ".join([w for w in text.split(" ") if w])
        if not text:
            return ""
        text = text.replace(" ", space)
        if self.add_dummy_prefix:
            text = text + space if self.treat_whitespace_as_suffix else space + text
        return text

    def _normalize(self, text: str) -> str:
        data = text.encode("utf-8", "surrogatepass")
        pos = 0
        if self.remove_extra_whitespaces:
            while pos < len(data):
                piece, used = self._prefix(data, pos)
                if piece != b" ":
                    break
                pos += used
        if pos >= len(data):
            return ""
        space = SPACE.encode("utf-8") if self.escape_whitespaces else b" "
        out = bytearray()
        if not self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out += space
        previous_space = self.remove_extra_whitespaces
        free_run = self._free_run
        while pos < len(data):
            run = free_run.match(data, pos) if free_run is not None else None
            if run is not None:
                out += run.group()
                pos = run.end()
                previous_space = False
                continue
            piece, used = self._prefix(data, pos)
            if previous_space:
                piece = piece.lstrip(b" ")
            if piece:
                out += piece.replace(b" ", space)
                previous_space = piece.endswith(b" ")
            pos += used
            if not self.remove_extra_whitespaces:
                previous_space = False
        if self.remove_extra_whitespaces:
            while out.endswith(space):
                del out[-len(space):]
        if self.treat_whitespace_as_suffix and self.add_dummy_prefix:
            out += space
        return out.decode("utf-8", "surrogateescape" if self._protect_prefixes else "surrogatepass")


# -- BERT (HF tokenizers' BertNormalizer) ------------------------------------------------------

#: BERT's "Chinese characters" (the CJK ideograph blocks, as HF and llama.cpp list them: the
#: fifth range starts at 0x2B920 in both, where Extension E starts at 0x2B820)
CJK_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
              (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))
#: Rust's ``char::is_whitespace`` (Unicode's White_Space), which llama.cpp's table lists too
WHITESPACE = "\t\n\x0b\x0c\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a" \
             "\u2028\u2029\u202f\u205f\u3000"


def char_class(ranges) -> str:
    """A regex character class body for code point ranges ``[(first, last)]``.

    >>> char_class([(0x41, 0x43), (0x5F, 0x5F)])
    '\\\\U00000041-\\\\U00000043\\\\U0000005f'
    """
    return "".join(f"\\U{a:08x}" if a == b else f"\\U{a:08x}-\\U{b:08x}" for a, b in ranges)


class BertNormalizer:
    """HF ``tokenizers``' ``BertNormalizer`` (``normalizers/bert.rs``), with its Unicode tables
    (:mod:`ubpe.text.bert_tables`), in this order:

    * ``clean_text``: remove NUL, U+FFFD and control characters (Cc, Cf, Co; not tab, newline,
      carriage return), write every whitespace character as a space;
    * ``handle_chinese_chars``: a space on both sides of every CJK ideograph (:data:`CJK_RANGES`);
    * ``strip_accents`` (default: as ``lowercase``): NFD, then remove the nonspacing marks;
    * ``lowercase``: character by character (a final sigma stays ``σ``, as Rust's ``char::to_lowercase``).

    >>> BertNormalizer()("Héllo\\u00a0WORLD\\x00中文 ΑΣ")
    'hello world 中  文  ασ'
    """

    def __init__(self, clean_text: bool = True, handle_chinese_chars: bool = True, strip_accents: bool | None = None,
                 lowercase: bool = True):
        from . import bert_tables as tables
        from .._lazy import LazyPattern  # (the `regex` module when a text is normalized: `rewrite` needs none)

        self.clean_text = clean_text
        self.handle_chinese_chars = handle_chinese_chars
        self.strip_accents = lowercase if strip_accents is None else strip_accents
        self.lowercase = lowercase
        self._other = LazyPattern(f"[{char_class(tables.OTHER)}]+")
        self._space = LazyPattern(f"[{char_class((ord(c), ord(c)) for c in WHITESPACE)}]")
        self._cjk = LazyPattern(f"([{char_class(CJK_RANGES)}])")
        self._marks = LazyPattern(f"[{char_class(tables.NONSPACING_MARKS)}]+")
        # ASCII's removed characters by `str.translate`; other text's by the stdlib's engine
        # (several times faster than `regex` on a class of many ranges), compiled when first used
        self._ascii_removed = str.maketrans(dict.fromkeys(
            c for first, last in tables.OTHER for c in range(first, min(last, 0x7F) + 1)))

    def __call__(self, text: str) -> str:
        if self.clean_text:
            text = self._space.sub(" ", self._other.sub("", text))
        if self.handle_chinese_chars and not text.isascii():
            text = self._cjk.sub(r" \1 ", text)
        if self.strip_accents and not text.isascii():
            text = self._marks.sub("", self._nfd(text))
        if self.lowercase:
            text = self._lowered(text)
        return text

    def rewrite(self, text: str) -> str:
        """The steps that change characters: ``clean_text``'s removals, ``strip_accents``'s
        NFD and ``lowercase``, both with ``tokenizers``' tables (:mod:`ubpe.text.unicode`,
        whatever Python runs; the kernel's ``lower`` map,
        :func:`~ubpe.text.bert_words.bert_lower_map`, then changes nothing). The rest -
        whitespace written as a space, spaces around CJK ideographs, nonspacing marks
        removed - only decide where the pre-tokenizer cuts, and the WordPiece kernel does
        them by its classes (:func:`~ubpe.text.bert_words.bert_classes`): BERT's
        pre-tokenizer then cuts ``rewrite(text)`` by them as it cuts ``self(text)``. Every step
        is character by character, so texts joined by a character none of them touches
        (U+FFFF) come out joined by it.

        >>> BertNormalizer().rewrite("Héllo\\u00a0WORLD\\x00中文")
        'he\u0301llo\\xa0world中文'
        """
        if self.clean_text:
            if not text.isascii():
                if self._may_remove(text):
                    text = self._removed.sub("", text)
            elif not text.isprintable():  # (printable ASCII holds none of them)
                text = text.translate(self._ascii_removed)
        if self.strip_accents and not text.isascii():
            text = self._nfd(text)
        if self.lowercase:
            text = self._lowered(text)
        return text

    def _may_remove(self, text: str) -> bool:
        """False when ``clean_text`` removes no character of ``text`` for sure: Python's
        Unicode calls every one printable (tab and line ends aside, which it keeps) and none is
        one of the few removed characters that Python calls printable. Tested in C, without
        the removal's regex (compiled with ``re``, ~4 ms of a process's first text)."""
        if not text.isprintable() and not text.replace("\n", " ").replace("\t", " ").replace("\r", " ").isprintable():
            return True
        return any(char in text for char in _printable_removed())

    @functools.cached_property
    def _removed(self) -> re.Pattern:
        """The characters ``clean_text`` removes (Unicode's ``Cc``, ``Cf``... by ``tokenizers``' tables)."""
        from . import bert_tables as tables

        return re.compile(f"[{char_class(tables.OTHER)}]+")

    @staticmethod
    def _nfd(text: str) -> str:
        from .unicode import normalize  # (here: sentencepiece's normalizer needs no Unicode tables)

        return normalize("NFD", text)  # tokenizers' tables (ubpe.text.unicode)

    @staticmethod
    def _lowered(text: str) -> str:
        from .unicode import lowercase

        return lowercase(text)  # char by char (a final sigma is σ), Rust's table (ubpe.text.unicode)


#: the private-use planes and area (``Co`` in every Unicode version: never printable to Python)
_PRIVATE_USE = ((0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD))


@functools.cache
def _printable_removed() -> tuple[str, ...]:
    """The characters ``BertNormalizer``'s ``clean_text`` removes (``tokenizers``' tables) that
    this Python's ``str.isprintable`` calls printable (U+FFFD; any its Unicode moved)."""
    from . import bert_tables as tables

    return tuple(chr(c) for first, last in tables.OTHER if (first, last) not in _PRIVATE_USE
                 for c in range(first, last + 1) if chr(c).isprintable())
