"""Read HF ``tokenizer.json`` files with a BPE or WordPiece model (``ubpe.load`` on them lands here).

The components are turned into :mod:`ubpe.text.hf_pipeline` steps and the model into
:class:`~ubpe.models.hf.HFByteLevelBPE` (when the pre-tokenizer holds ``ByteLevel``;
:class:`~ubpe.models.hf.HFEndOfWordBPE` when the model has an ``end_of_word_suffix``, as CLIP's),
:class:`~ubpe.models.hf_char.HFCharBPE`, or :class:`~ubpe.models.wordpiece.HFWordPiece`. What is read:

* ``model``: ``BPE`` (``vocab``, ``merges`` as ``"a b"`` or ``["a", "b"]``, ``unk_token``,
  ``fuse_unk``, ``byte_fallback``, ``ignore_merges``, ``end_of_word_suffix`` on byte-level
  models; ``dropout`` is ignored: ubpe's native encoding is HF's without dropout);
  ``WordPiece`` (``vocab``, ``unk_token``,
  ``continuing_subword_prefix``, ``max_input_chars_per_word``);
* ``normalizer``: ``Sequence``, ``NFC``/``NFD``/``NFKC``/``NFKD``, ``Lowercase``, ``Prepend``,
  ``Replace``, ``Strip``, ``BertNormalizer``;
* ``pre_tokenizer``: ``Sequence``, ``ByteLevel``, ``Split``, ``Metaspace``, ``Digits``,
  ``Punctuation``, ``Whitespace``, ``WhitespaceSplit``, ``BertPreTokenizer``;
* ``decoder``: ``Sequence``, ``ByteLevel``, ``Replace``, ``ByteFallback``, ``Fuse``, ``Strip``,
  ``Metaspace``, ``WordPiece``;
* ``post_processor`` (tokens added with ``add_special=True``): ``TemplateProcessing`` (single
  sequence), ``RobertaProcessing``, ``BertProcessing``, ``ByteLevel``, ``Sequence``;
* ``added_tokens`` with ``special``, ``normalized``, ``lstrip``, ``rstrip``, ``single_word``.

``Unigram`` models (``vocab`` as ``[piece, score]``, ``unk_id``, ``byte_fallback``) and ``WordLevel``
models (``vocab``, ``unk_token``) are read as compositions, :class:`~ubpe.models.composed.ComposedTokenizer`
over :class:`~ubpe.models.unigram.UnigramModel` or :class:`~ubpe.models.wordlevel.WordLevelModel`, with
the normalizers ``Precompiled`` and ``StripAccents`` too. Anything else is a :class:`ModelFormatError`
naming the component and what is supported.
``truncation`` and ``padding`` (batch shaping) are not applied.

>>> import json
>>> doc = {"added_tokens": [], "normalizer": None, "decoder": {"type": "ByteLevel"},
...        "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False, "use_regex": True},
...        "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]}}
>>> tok = from_json(json.dumps(doc))
>>> tok.encode("abba"), tok.decode([2, 1])
([2, 1, 0], 'abb')
>>> from_json(json.dumps({**doc, "model": {"type": "Foo", "vocab": {}}}))
Traceback (most recent call last):
...
ubpe.errors.ModelFormatError: <tokenizer.json>: model type 'Foo' is not supported; ubpe reads BPE, WordPiece, Unigram and WordLevel models
"""

from __future__ import annotations

import collections
from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
import os

from ubpe_native._vocab import vocab_ids

from .._lazy import LazyPattern, re, regex  # (each imported when first used)
from ..models.hf_base import _MAX_ID, SCANNED_REGEXES, HFPipeline, JsonMerges
from ..text.byte_chars import BYTE_TO_CHAR
from ..text.literals import escape
TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any
    from ..text.precompiled import Precompiled
    from ..models.composed import ComposedTokenizer
    from ..models.hf import HFByteLevelBPE
    from ..models.hf_char import HFCharBPE
    from ..models.hf_clip import HFEndOfWordBPE
    from ..models.wordpiece import HFWordPiece
from ..text.hf_pipeline import BEHAVIORS, UNICODE, AddedToken, AddedTokens, PreTokenizer, normalize
from ..errors import ModelFormatError
from ..files import check_depth, check_path, decoded_text, gc_paused, loads_json, parse_json, read_text

NORMALIZERS = ("Sequence", "NFC", "NFD", "NFKC", "NFKD", "Lowercase", "Prepend", "Replace", "Strip",
               "BertNormalizer", "Precompiled", "StripAccents")
PRE_TOKENIZERS = ("Sequence", "ByteLevel", "Split", "Metaspace", "Digits", "Punctuation", "Whitespace",
                  "WhitespaceSplit", "BertPreTokenizer")
DECODERS = ("Sequence", "ByteLevel", "Replace", "ByteFallback", "Fuse", "Strip", "Metaspace", "WordPiece")
POST_PROCESSORS = ("Sequence", "TemplateProcessing", "RobertaProcessing", "BertProcessing", "ByteLevel")
_PUNCTUATION = r"[\p{P}!-/:-@\[-`{-~]"  # Unicode punctuation and ASCII's (Rust's is_ascii_punctuation)
#: The most ids a vocabulary may span (a file naming id 2**31 - 2 must not make us allocate
#: two billion entries); real vocabularies hold up to a few hundred thousand.
MAX_TOKENS = 1 << 24
#: the components the reader walks recursively, checked for depth first
WALKED_COMPONENTS = ("normalizer", "pre_tokenizer", "post_processor", "decoder")


def read(path: str | os.PathLike) -> HFByteLevelBPE | HFCharBPE | ComposedTokenizer:
    """The tokenizer of an HF ``tokenizer.json`` file (see the module docstring)."""
    with gc_paused():
        with open(check_path(path), "rb") as handle:
            data = handle.read()
        doc = _read_apart(data, str(path))
        if doc is not None:
            return _from_doc(doc, str(path), data)
        try:  # (the bytes already read: a unigram file, whose vocab is an array, always comes here)
            text = decoded_text(data)
        except UnicodeDecodeError:
            text = read_text(path, "an HF tokenizer.json")  # which names the fault
        return from_json(text, where=str(path))


#: what stands for ``model.merges`` and ``model.vocab`` in the document the json module reads
#: (`_read_apart`), and their JSON
_MERGES_HERE = "\x00ubpe: the merges, read apart"
_MERGES_HERE_JSON = b'"\\u0000ubpe: the merges, read apart"'  # (json.dumps(_MERGES_HERE))
_VOCAB_HERE = "\x00ubpe: the vocabulary, read apart"
_VOCAB_HERE_JSON = b'"\\u0000ubpe: the vocabulary, read apart"'


def _read_apart(data: bytes, where: str) -> dict | None:
    """The document of a tokenizer.json's bytes with its large members read apart: the BPE
    merge rules left undecoded (a `JsonMerges` in their place: 280k rules are 280k strings for
    the json module, then cut and looked up one by one), or, in a file without them (WordPiece,
    WordLevel), the vocabulary object read from its bytes (`ubpe_native._vocab.vocab_from_json`,
    the json module's dict without its memo of keys and a str per id: BERT's 30k entries, 14
    of the 17 ms of its load; beside merges the json module's one slice of a decoded document
    is as fast, the second scan for the span slower); or None where the file is not read so
    (neither member, not UTF-8, no JSON: `from_json` then reads it, and names what is wrong)."""
    has_merges = b'"merges"' in data
    if not has_merges and b'"vocab"' not in data:  # (a unigram file's vocab is an array: read whole)
        return None
    from ubpe_native._tables import merges_span, vocab_span  # (each import when a file needs it)

    member, placeholder, placeholder_json, find_span = (
        ("merges", _MERGES_HERE, _MERGES_HERE_JSON, merges_span) if has_merges
        else ("vocab", _VOCAB_HERE, _VOCAB_HERE_JSON, vocab_span))
    span = find_span(data)
    if span is None:
        return None
    start, end = span[0], span[1]
    try:  # the rest decoded as `read_text` decodes a file
        doc = loads_json(decoded_text(data[:start] + placeholder_json + data[end:]))
    except (ValueError, RecursionError):  # not UTF-8 or not JSON: from_json names it
        return None
    model = doc.get("model") if isinstance(doc, dict) else None
    # (the proof that the span was the model's member: `merges_span` finds the one array so
    # named without reading the rest)
    if not isinstance(model, dict) or model.get(member) != placeholder:
        return None
    if has_merges:
        model["merges"] = JsonMerges(data[start:end], span[2], where)
        return doc
    from ubpe_native._vocab import vocab_from_json

    model["vocab"] = vocab_from_json(data[start:end])
    if model["vocab"] is None:  # (ids that are no plain integers, escapes it does not read...)
        try:
            model["vocab"] = loads_json(decoded_text(data[start:end]))
        except (ValueError, RecursionError):
            return None
    return doc


def from_json(text: str, where: str = "<tokenizer.json>") -> HFByteLevelBPE | HFCharBPE | ComposedTokenizer:
    """The tokenizer of a ``tokenizer.json`` document's text."""
    return _from_doc(parse_json(text, where), where, text)


def _from_doc(doc: Any, where: str, source: str | bytes) -> HFByteLevelBPE | HFCharBPE | ComposedTokenizer:
    """The tokenizer of a parsed document; ``source`` its text (or the file's bytes)."""
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), dict):
        raise ModelFormatError(f"{where}: not an HF tokenizer.json (no `model` object)")
    for component in WALKED_COMPONENTS:  # the reader recurses into these (Sequence in Sequence...)
        check_depth(doc.get(component), f"{where}: {component}")
    section = doc["model"].get("ubpe")
    if isinstance(section, dict):  # written by ubpe (ubpe.io.write.hf): the model it wrote
        from .write.hf import read_section

        return read_section(section, where)
    tokenizer = _Reader(where).tokenizer(doc)
    # the document is the model (the reader takes only what it runs exactly): the hf writer
    # writes it back as it came (ubpe.io.write.model_view.SourceDocument, which decodes bytes)
    tokenizer.source_json = source
    return tokenizer


class _Reader:
    def __init__(self, where: str):
        self.where = where

    def fail(self, message: str) -> ModelFormatError:
        return ModelFormatError(f"{self.where}: {message}")

    def kind(self, node: Any, component: str, supported: tuple[str, ...]) -> str:
        if not isinstance(node, dict) or not isinstance(node.get("type"), str):
            raise self.fail(f"{component} must be an object with a `type`, got {node!r:.80}")
        if node["type"] not in supported:
            raise self.fail(f"{component} {node['type']!r} is not supported; supported: {', '.join(supported)}")
        return node["type"]

    def pattern(self, node: Any, component: str) -> regex.Pattern:
        if isinstance(node, dict) and isinstance(node.get("String"), str):  # (a literal: compiled when
            return LazyPattern(escape(node["String"]))  # a text needs it; re's escapes are regex's too)
        if isinstance(node, dict) and isinstance(node.get("Regex"), str):
            from ..text.onig import onig_regex
            from ..text.patterns import compile_regex

            source = onig_regex(node["Regex"])
            if _valid_by_the_cache(source):
                return LazyPattern(source)
            try:
                return compile_regex(source, f"{component}'s regex", ModelFormatError)
            except ModelFormatError as exc:
                raise self.fail(str(exc)) from None
        raise self.fail(f"{component}'s pattern must be {{\"String\": ...}} or {{\"Regex\": ...}}, got {node!r:.80}")

    # -- components -------------------------------------------------------------------------

    def normalizer(self, node: Any) -> list[tuple]:
        if node is None:
            return []
        kind = self.kind(node, "normalizer", NORMALIZERS)
        if kind == "Sequence":
            return [step for child in node.get("normalizers") or [] for step in self.normalizer(child)]
        if kind in ("NFC", "NFD", "NFKC", "NFKD"):
            return [("unicode", kind)]
        if kind == "Lowercase":
            return [("lowercase",)]
        if kind == "Prepend":
            return [("prepend", str(node.get("prepend", "")))]
        if kind == "Replace":
            return [("replace", self.pattern(node.get("pattern"), "Replace normalizer"), str(node.get("content", "")))]
        if kind == "Precompiled":
            return [("precompiled", self.precompiled(node.get("precompiled_charsmap")))]
        if kind == "StripAccents":
            return [("strip_accents",)]
        if kind == "BertNormalizer":
            from ..text.normalizers import BertNormalizer  # (a BERT file's: the module's import when one needs it)

            strip = node.get("strip_accents")
            return [("bert", BertNormalizer(bool(node.get("clean_text", True)), bool(node.get("handle_chinese_chars", True)),
                                            None if strip is None else bool(strip), bool(node.get("lowercase", True))))]
        return [("strip", bool(node.get("strip_left", True)), bool(node.get("strip_right", True)))]

    def precompiled(self, charsmap: Any) -> Precompiled:
        """HF's ``Precompiled`` normalizer from its base64 charsmap."""
        import base64
        import binascii

        from ..text.precompiled import Precompiled

        if not isinstance(charsmap, str):
            raise self.fail(f"the Precompiled normalizer's `precompiled_charsmap` must be a base64 string, "
                            f"got {charsmap!r:.40}")
        try:
            return Precompiled(base64.b64decode(charsmap, validate=True))
        except (binascii.Error, ValueError):
            raise self.fail("the Precompiled normalizer's `precompiled_charsmap` is not base64") from None
        except ModelFormatError as exc:
            raise self.fail(f"the Precompiled normalizer: {exc}") from None

    def pre_tokenizer(self, node: Any) -> list[tuple]:
        if node is None:
            return []
        kind = self.kind(node, "pre_tokenizer", PRE_TOKENIZERS)
        if kind == "Sequence":
            return [step for child in node.get("pretokenizers") or [] for step in self.pre_tokenizer(child)]
        if kind == "ByteLevel":
            return [("byte_level", bool(node.get("add_prefix_space", True)), bool(node.get("use_regex", True)))]
        if kind == "Split":
            behavior = _snake(str(node.get("behavior", "")))
            if behavior not in BEHAVIORS:
                raise self.fail(f"Split behavior {node.get('behavior')!r} is not one of {', '.join(BEHAVIORS)}")
            return [("split", self.pattern(node.get("pattern"), "Split"), behavior, bool(node.get("invert", False)))]
        if kind == "Metaspace":
            replacement = str(node.get("replacement", "▁"))
            if len(replacement) != 1:
                raise self.fail(f"Metaspace replacement must be one character, got {replacement!r}")
            scheme = node.get("prepend_scheme")
            if scheme is None:
                scheme = "always" if node.get("add_prefix_space", True) else "never"
            if scheme not in ("first", "always", "never"):
                raise self.fail(f"Metaspace prepend_scheme {scheme!r} is not first, always or never")
            return [("metaspace", replacement, scheme, bool(node.get("split", True)))]
        if kind == "Digits":
            behavior = "isolated" if node.get("individual_digits", False) else "contiguous"
            return [("split", LazyPattern(r"\p{N}"), behavior, False)]  # (our constants: compiled when used)
        if kind == "Punctuation":
            behavior = _snake(str(node.get("behavior", "Isolated")))
            if behavior not in BEHAVIORS:
                raise self.fail(f"Punctuation behavior {node.get('behavior')!r} is not one of {', '.join(BEHAVIORS)}")
            return [("split", LazyPattern(_PUNCTUATION), behavior, False)]
        if kind == "Whitespace":
            return [("split", LazyPattern(r"\w+|[^\w\s]+"), "removed", True)]
        if kind == "BertPreTokenizer":
            return [("bert",)]
        return [("split", LazyPattern(r"\s+"), "removed", False)]  # WhitespaceSplit

    def decoder(self, node: Any) -> list[tuple] | None:
        if node is None:
            return None
        kind = self.kind(node, "decoder", DECODERS)
        if kind == "Sequence":
            return [step for child in node.get("decoders") or [] for step in (self.decoder(child) or [])]
        if kind == "ByteLevel":
            return [("byte_level",)]
        if kind == "Replace":
            return [("replace", self.pattern(node.get("pattern"), "Replace decoder"), str(node.get("content", "")))]
        if kind == "ByteFallback":
            return [("byte_fallback",)]
        if kind == "Fuse":
            return [("fuse",)]
        if kind == "Strip":
            return [("strip", str(node.get("content", " ")), int(node.get("start", 0)), int(node.get("stop", 0)))]
        if kind == "WordPiece":
            return [("wordpiece", str(node.get("prefix", "##")), bool(node.get("cleanup", True)))]
        scheme = node.get("prepend_scheme")
        if scheme is None:
            scheme = "always" if node.get("add_prefix_space", True) else "never"
        return [("metaspace", str(node.get("replacement", "▁")), scheme != "never")]

    def post_processor(self, node: Any) -> tuple[list[int], list[int]]:
        if node is None:
            return [], []
        kind = self.kind(node, "post_processor", POST_PROCESSORS)
        if kind == "Sequence":
            prefix: list[int] = []
            suffix: list[int] = []
            for child in node.get("processors") or []:
                before, after = self.post_processor(child)
                prefix, suffix = before + prefix, suffix + after
            return prefix, suffix
        if kind == "ByteLevel":
            return [], []
        if kind in ("RobertaProcessing", "BertProcessing"):
            try:
                return [int(node["cls"][1])], [int(node["sep"][1])]
            except (KeyError, IndexError, TypeError, ValueError):
                raise self.fail(f"{kind} needs `cls` and `sep` as [token, id]") from None
        return self.template(node)

    def template(self, node: dict) -> tuple[list[int], list[int]]:
        specials = node.get("special_tokens") or {}
        prefix: list[int] = []
        suffix: list[int] = []
        seen_sequence = False
        for piece in node.get("single") or []:
            if isinstance(piece, dict) and "Sequence" in piece:
                seen_sequence = True
                continue
            name = piece.get("SpecialToken", {}).get("id") if isinstance(piece, dict) else None
            entry = specials.get(name) if isinstance(name, str) else None
            if not isinstance(entry, dict) or not isinstance(entry.get("ids"), list):
                raise self.fail(f"TemplateProcessing names special token {name!r}, which `special_tokens` lacks")
            (suffix if seen_sequence else prefix).extend(int(i) for i in entry["ids"])
        return prefix, suffix

    def added_tokens(self, nodes: Any) -> list[AddedToken]:
        if nodes is None:
            return []
        if not isinstance(nodes, list):
            raise self.fail("`added_tokens` must be a list")
        out = []
        for node in nodes:
            if not isinstance(node, dict) or not isinstance(node.get("content"), str) or not _is_id(node.get("id")):
                raise self.fail(f"an added token needs `content` and a non-negative `id`, got {node!r:.80}")
            out.append(AddedToken(node["content"], int(node["id"]), bool(node.get("special", False)),
                                  bool(node.get("single_word", False)), bool(node.get("lstrip", False)),
                                  bool(node.get("rstrip", False)), bool(node.get("normalized", False))))
        return out

    # -- the model --------------------------------------------------------------------------

    def vocab_and_merges(self, model: dict) -> tuple[dict[str, int], list]:
        """The BPE model's vocabulary and its merge rules as the file gives them (``"a b"``
        lines or ``["a", "b"]`` lists, read by `ubpe.models.hf_base._merge_rules`, which names a
        rule that is neither)."""
        vocab = model.get("vocab")
        if not isinstance(vocab, dict) or not _ids_by_string(vocab):
            raise self.fail("the BPE model's `vocab` must map token strings to non-negative ids")
        lines = model.get("merges") or []
        if not isinstance(lines, (list, JsonMerges)):
            raise self.fail("the BPE model's `merges` must be a list")
        return vocab, lines

    def check_ids(self, vocab: dict[str, int]) -> None:
        """The vocabulary's ids (checked by `_ids_by_string`) are in range and each names one token."""
        found = vocab_ids(vocab, _MAX_ID)
        if found is None:
            raise self.fail("the model's `vocab` must map token strings to non-negative ids")
        top, in_order = found
        if top >= MAX_TOKENS:
            raise self.fail(f"the vocabulary names id {top}; ids up to {MAX_TOKENS - 1} are supported")
        if not in_order and len(set(vocab.values())) != len(vocab):
            # tokenizers reads such a file, but which token an id decodes to then depends on its
            # hash map's order (one file decoded 121 as 'y' in one load and '{' in another)
            shared = collections.Counter(vocab.values()).most_common(1)[0][0]
            holders = [token for token, i in vocab.items() if i == shared][:3]
            raise self.fail(f"the model's `vocab` gives id {shared} to {len(holders)} tokens "
                            f"({', '.join(map(repr, holders))})")

    def wordpiece(self, doc: dict, model: dict) -> HFWordPiece:
        from ..models.wordpiece import DEFAULT_MAX_CHARS, DEFAULT_PREFIX, HFWordPiece

        vocab = model.get("vocab")
        if not isinstance(vocab, dict) or not _ids_by_string(vocab):
            raise self.fail("the WordPiece model's `vocab` must map token strings to non-negative ids")
        self.check_ids(vocab)
        unk, prefix = model.get("unk_token", "[UNK]"), model.get("continuing_subword_prefix", DEFAULT_PREFIX)
        limit = model.get("max_input_chars_per_word", DEFAULT_MAX_CHARS)
        if not isinstance(unk, str) or not isinstance(prefix, str):
            raise self.fail("the WordPiece model's `unk_token` and `continuing_subword_prefix` must be strings")
        if not _is_id(limit):
            raise self.fail(f"the WordPiece model's `max_input_chars_per_word` must be a non-negative int, got {limit!r}")
        return HFWordPiece(vocab, self.pipeline(doc, vocab), unk=unk, prefix=prefix, max_input_chars_per_word=limit,
                           name="tokenizer.json", where=self.where)

    def pipeline(self, doc: dict, vocab: dict[str, int]) -> HFPipeline:
        """Added tokens, normalizer, pre-tokenizer, decoder and post-processor."""
        steps = self.normalizer(doc.get("normalizer"))
        added = AddedTokens(_renumbered(self.added_tokens(doc.get("added_tokens")), vocab),
                            functools.partial(normalize, steps))
        pre = PreTokenizer(self.pre_tokenizer(doc.get("pre_tokenizer")))
        kinds = [step[0] for step in pre.steps]
        if "byte_level" in kinds and "metaspace" in kinds[kinds.index("byte_level"):]:
            raise self.fail("a Metaspace pre-tokenizer after ByteLevel is not supported")
        prefix, suffix = self.post_processor(doc.get("post_processor"))
        return HFPipeline(added, steps, pre, self.decoder(doc.get("decoder")), prefix, suffix)

    def unigram(self, doc: dict, model: dict) -> ComposedTokenizer:
        """HF's ``Unigram`` model in HF's pipeline: a composition (:mod:`ubpe.models.composed`)."""
        from ..models.composed import ComposedTokenizer
        from ..models.unigram import UnigramModel

        vocab = model.get("vocab")
        if not isinstance(vocab, list) or not all(
                isinstance(entry, list) and len(entry) == 2 and isinstance(entry[0], str)
                and isinstance(entry[1], (int, float)) and not isinstance(entry[1], bool) for entry in vocab):
            raise self.fail("the Unigram model's `vocab` must be a list of [piece, score]")
        if len(vocab) >= MAX_TOKENS:
            raise self.fail(f"the Unigram model has {len(vocab)} pieces; up to {MAX_TOKENS - 1} are supported")
        unk_id = model.get("unk_id")
        if unk_id is not None and not _is_id(unk_id):
            raise self.fail(f"the Unigram model's `unk_id` must be a non-negative int or null, got {unk_id!r:.40}")
        stage = UnigramModel([(piece, score) for piece, score in vocab], unk_id,
                             bool(model.get("byte_fallback", False)), where=self.where)
        ids = {piece: i for i, (piece, _) in enumerate(vocab)}  # the last of a piece, as HF's token_to_ids
        return ComposedTokenizer(stage, self.pipeline(doc, ids), name="tokenizer.json", where=self.where)

    def wordlevel(self, doc: dict, model: dict) -> ComposedTokenizer:
        """HF's ``WordLevel`` model in HF's pipeline: a composition (:mod:`ubpe.models.composed`)."""
        from ..models.composed import ComposedTokenizer
        from ..models.wordlevel import WordLevelModel

        vocab = model.get("vocab")
        if not isinstance(vocab, dict) or not _ids_by_string(vocab):
            raise self.fail("the WordLevel model's `vocab` must map token strings to non-negative ids")
        self.check_ids(vocab)
        unk = model.get("unk_token", "<unk>")
        if not isinstance(unk, str):
            raise self.fail(f"the WordLevel model's `unk_token` must be a string, got {unk!r:.40}")
        return ComposedTokenizer(WordLevelModel(vocab, unk), self.pipeline(doc, vocab), name="tokenizer.json",
                                 where=self.where)

    def check_byte_level_fallback(self, vocab: dict[str, int]) -> None:
        """``byte_fallback`` on a byte-level model: HF writes a byte that is no token as the
        ``<0xXX>`` tokens of its character's UTF-8 bytes (which then merge) when they all exist;
        ubpe does not, so such a file is refused (elsewhere the option changes nothing)."""
        for byte in range(256):
            char = BYTE_TO_CHAR[byte]
            if char not in vocab and all(f"<0x{b:02X}>" in vocab for b in char.encode("utf-8")):
                raise self.fail(f"BPE `byte_fallback` on a byte-level model whose byte 0x{byte:02X} ({char!r}) is no "
                                "token but has byte tokens is not supported")

    def tokenizer(self, doc: dict) -> HFByteLevelBPE | HFCharBPE | HFEndOfWordBPE | HFWordPiece | ComposedTokenizer:
        model = doc["model"]
        kind = model.get("type", "BPE" if "merges" in model else None)
        if kind == "WordPiece":
            return self.wordpiece(doc, model)
        if kind == "Unigram":
            return self.unigram(doc, model)
        if kind == "WordLevel":
            return self.wordlevel(doc, model)
        if kind != "BPE":
            raise self.fail(f"model type {kind!r} is not supported; ubpe reads BPE, WordPiece, Unigram and "
                            "WordLevel models")
        if model.get("continuing_subword_prefix"):
            raise self.fail(f"BPE `continuing_subword_prefix` ({model['continuing_subword_prefix']!r}) is not "
                            "supported; ubpe reads BPE models without it")
        word_end = model.get("end_of_word_suffix") or None
        if word_end is not None and not isinstance(word_end, str):
            raise self.fail(f"BPE `end_of_word_suffix` must be a string, got {word_end!r:.40}")
        vocab, merges = self.vocab_and_merges(model)
        self.check_ids(vocab)
        pipeline = self.pipeline(doc, vocab)
        pre = pipeline.pre
        unk = model.get("unk_token")
        unk = unk if isinstance(unk, str) else None
        common = dict(unk=unk, ignore_merges=bool(model.get("ignore_merges", False)), name="tokenizer.json",
                      where=self.where)
        # (each family's module imported here: a load imports no other family's models)
        if word_end is not None:
            if not pre.byte_level or common["ignore_merges"]:
                raise self.fail("BPE `end_of_word_suffix` is supported on byte-level models without "
                                "`ignore_merges` (CLIP's); this model is " + (
                                    "character-level" if not pre.byte_level else "ignore_merges"))
            from ..models.hf_clip import HFEndOfWordBPE

            return HFEndOfWordBPE(vocab, merges, pipeline, suffix=word_end, unk=unk, name=common["name"],
                                  where=self.where)
        if pre.byte_level:
            from ..models.hf import HFByteLevelBPE

            if model.get("byte_fallback"):
                self.check_byte_level_fallback(vocab)
            return HFByteLevelBPE(vocab, merges, pipeline, fuse_unk=bool(model.get("fuse_unk", False)), **common)
        from ..models.hf_char import HFCharBPE

        return HFCharBPE(vocab, merges, pipeline, fuse_unk=bool(model.get("fuse_unk", False)),
                         byte_fallback=bool(model.get("byte_fallback", False)), **common)


def _renumbered(tokens: list[AddedToken], vocab: dict[str, int]) -> list[AddedToken]:
    """The added tokens with the ids HF gives them on loading (``AddedVocabulary::add_tokens``;
    the file's ids are not read back): a token in the vocabulary keeps its id there, a token
    seen before its first id, a new one the next id after the vocabulary and the added ones.

    >>> [t.id for t in _renumbered([AddedToken("b", 9), AddedToken("x", 0), AddedToken("y", 0)], {"a": 0, "b": 1})]
    [1, 2, 3]
    """
    given: dict[str, int] = {}
    out = []
    size = len(vocab)
    for token in tokens:
        found = vocab.get(token.content, given.get(token.content))
        if found is None:
            top = max(given.values(), default=None)
            found = size if top is None or (top < size and size) else top + 1
        given.setdefault(token.content, found)
        out.append(token._replace(id=found))
    return out


def _ids_by_string(vocab: dict) -> bool:
    """Whether every key is a str and every value an id (one pass in C: `vocab_ids`)."""
    return vocab_ids(vocab, _MAX_ID) is not None


#: a global inline flag group (``(?i)``, not ``(?i:...)``): the whole pattern's flags, which only a compile tells
_FLAG_GROUP = r"\(\?[a-zA-Z]*(?:-[a-zA-Z]*)?\)"  # (compiled by `re`'s cache when first used)


def _valid_by_the_cache(pattern: str) -> bool:
    """Whether ``pattern`` is known to be a valid regex without compiling it (the `regex`
    module's import, 8 ms of a load): one of the regexes the kernel's scanner splits (ours:
    GPT-2's, Llama 3's, Qwen2's), or one whose regex VM program is in the machine's cache,
    made after the `regex` module compiled it, and that sets no flags (`PreTokenizer.native`
    reads a compiled pattern's flags); its compile is then left for a text the Python path
    splits (`ubpe._lazy.LazyPattern`)."""
    if pattern in SCANNED_REGEXES:
        return True
    from ..text.patterns import MAX_PATTERN_CHARS
    from ..text.regex_program import compile_pattern, compiles_quickly

    # (the program by HF's Unicode: the one `PreTokenizer.native` runs)
    if len(pattern) > MAX_PATTERN_CHARS or re.search(_FLAG_GROUP, pattern) or not compiles_quickly(pattern, UNICODE):
        return False
    return compile_pattern(pattern, UNICODE).pattern_id is not None


def _is_id(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= _MAX_ID


def _snake(name: str) -> str:
    """``MergedWithPrevious`` -> ``merged_with_previous`` (an underscore before each ASCII
    capital but the first character).

    >>> _snake("MergedWithPrevious"), _snake("Isolated"), _snake("ÉtéX")
    ('merged_with_previous', 'isolated', 'été_x')
    """
    return "".join("_" + c if k and "A" <= c <= "Z" else c for k, c in enumerate(name)).lower()
