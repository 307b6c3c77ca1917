"""HF ``tokenizers``' ``Precompiled`` normalizer: a sentencepiece charsmap applied as HF applies it.

The charsmap (``normalizer_spec.precompiled_charsmap``, read by
:class:`~ubpe.text.normalizers.Normalizer`) is the same as sentencepiece's, but HF runs it
another way (``normalizers/precompiled.rs`` over the ``spm_precompiled`` crate): the text is cut
into extended grapheme clusters; a cluster of fewer than :data:`WHOLE_GRAPHEME_BYTES` UTF-8 bytes
that some rule's key starts is replaced whole by the *shortest* such rule's replacement (the
first result of Darts' ``commonPrefixSearch``, which stops at a NUL byte); any other cluster is
rewritten character by character the same way. So ``"\\r\\n"`` (one cluster) becomes what
``"\\r"`` becomes, and a combining mark after a character that has a rule goes with it -- as in
HF ("Yes, this seems broken", its source says; the tests check it against ``tokenizers``).
No whitespace handling: in a ``tokenizer.json`` that is the ``Strip`` / ``Replace`` /
``Metaspace`` steps after it. (The tests check it on sentencepiece's ``nmt_nfkc`` charsmap.)
"""

from __future__ import annotations

from .._lazy import LazyPattern

from ..errors import ModelFormatError
from .normalizers import Normalizer

#: a grapheme cluster shorter than this (in UTF-8 bytes) is looked up whole (HF's ``len() < 6``)
WHOLE_GRAPHEME_BYTES = 6
_GRAPHEMES = LazyPattern(r"(?s)\X")
_CRLF = "\r\n"


class Precompiled:
    """``Precompiled(charsmap)(text) -> normalized text`` (see the module docstring)."""

    def __init__(self, charsmap: bytes):
        if len(charsmap) < 4:  # HF cannot parse it either (no trie size)
            raise ModelFormatError("the precompiled charsmap is empty or truncated")
        # the charsmap's trie and replacements, parsed as sentencepiece's normalizer parses them
        parsed = Normalizer(bytes(charsmap), add_dummy_prefix=False, remove_extra_whitespaces=False,
                            escape_whitespaces=False)
        self.charsmap = bytes(charsmap)
        self._array = parsed._array
        self._replacements = parsed._replacements
        self._graphemes: dict[str, str] = {}
        self._ascii = {b: self._rewrite(chr(b)) for b in range(0x80)}
        self._ascii = {b: out for b, out in self._ascii.items() if out != chr(b)}
        found = self.transform(_CRLF)
        self._crlf = found if found is not None else _CRLF.translate(self._ascii)

    def __reduce__(self) -> tuple:
        return Precompiled, (self.charsmap,)

    def transform(self, chunk: str) -> str | None:
        """The replacement of the shortest rule whose key starts ``chunk``, or None."""
        array = self._array
        if array is None:
            return None
        unit = array[0]
        node = (unit >> 10) << ((unit & (1 << 9)) >> 6)
        for byte in chunk.encode("utf-8", "surrogatepass"):
            if byte == 0:
                return None
            node ^= byte
            if node >= len(array):
                return None
            unit = array[node]
            if unit & ((1 << 31) | 0xFF) != byte:
                return None
            node ^= (unit >> 10) << ((unit & (1 << 9)) >> 6)
            if (unit >> 8) & 1:
                if node >= len(array):
                    raise ModelFormatError("the precompiled charsmap is corrupt (a value past the trie)")
                start = array[node] & 0x7FFFFFFF
                end = self._replacements.find(b"\0", start)
                return self._replacements[start : end if end >= 0 else None].decode("utf-8", "replace")
        return None

    def _rewrite(self, grapheme: str) -> str:
        """One grapheme cluster as HF rewrites it."""
        if len(grapheme.encode("utf-8", "surrogatepass")) < WHOLE_GRAPHEME_BYTES:
            found = self.transform(grapheme)
            if found is not None:
                return found
        if len(grapheme) == 1:
            return grapheme
        return "".join(c if (found := self.transform(c)) is None else found for c in grapheme)

    def __call__(self, text: str) -> str:
        if text.isascii():  # every character its own cluster, but "\r\n"
            if _CRLF in text:
                return self._crlf.join(part.translate(self._ascii) for part in text.split(_CRLF))
            return text.translate(self._ascii)
        cache = self._graphemes
        out = []
        for grapheme in _GRAPHEMES.findall(text):
            rewritten = cache.get(grapheme)
            if rewritten is None:
                rewritten = self._rewrite(grapheme)
                if len(cache) < 1 << 16:
                    cache[grapheme] = rewritten
            out.append(rewritten)
        return "".join(out)
