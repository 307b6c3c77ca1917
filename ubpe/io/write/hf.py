"""HF ``tokenizer.json`` for every model ``tokenizers`` can run with ubpe's ids.

One document builder per record of :mod:`ubpe.io.write.model_view`:

* byte-level ranks (ByteLevelBPE, tekken): :func:`ubpe.io.hf.tokenizer_json` (tiktoken's
  rule through one merge per split of every token, ``ignore_merges``);
* llama.cpp ``gpt2`` merges: the merges as they are, llama.cpp's regex list as a sequence of
  ``Split`` pre-tokenizers, then ``ByteLevel``;
* sentencepiece models (``.model`` and GGUF ``llama``), as ``transformers``'
  ``convert_slow_tokenizer`` does: a BPE model with one merge per split of every normal piece,
  ranked by the merged piece's score (sentencepiece merges the pair whose concatenation scores
  highest), ``byte_fallback``, the unknown piece fused; a unigram model with its scores; the
  normalizer (``Precompiled`` charsmap, whitespace clean-up, ``▁`` prefix and escape) in
  ``tokenizers``' normalizers;
* classic vocabularies over any alphabet: BPE over one character per symbol, one merge per
  split of every token at the token's id (ubpe's ``ranked`` encoder, ``priority="id"``);
* llama.cpp ``gemma4`` (character-level merges): spaces as ``▁`` (a ``Replace`` normalizer),
  llama.cpp's line regex as a ``Split``, the merges as they are, ``byte_fallback``;
* models read from a tokenizer.json (HF BPE, byte-level, WordPiece, Unigram, WordLevel): the
  document they were read from, as it came (ubpe's reader takes a document only when it runs
  all of it exactly).

Alphabets that are not single characters (integers, bytes, tuples, multi-character strings)
are written through :func:`code_points`: symbol ``i`` of the alphabet is the character
``chr(base + i)``, with ``base`` U+E000 (the private-use area) for alphabets of up to 6,400
symbols and U+F0000 (planes 15-16) for larger ones, as MidiTok writes its token ids as
characters. The file records the mapping and the model in a ``"ubpe"`` key of its ``model`` object
(``tokenizers`` refuses unknown top-level keys, and ignores unknown keys of a model):
``{"format_version", "code_point_base", "alphabet", "model"}`` (``model``: the text of our
own model file), so ubpe reads the file back as the model it wrote; :func:`as_text` maps a document for
``tokenizers``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


from ...files import write_atomically
from ...text.byte_chars import byte_string
from .model_view import (CONTROL, NORMAL, UNKNOWN, UNUSED, USER_DEFINED, ByteMerges, ByteRanks,
                         CannotWrite, CharMerges, Pieces, SourceDocument, SymbolMerges, single_characters,
                         view_of)

#: the key, in the ``model`` object of a tokenizer.json, of what ubpe records, and its version
UBPE_SECTION, UBPE_SECTION_VERSION = "ubpe", 1
#: the first code point of an alphabet's characters: the BMP private-use area (6,400 code
#: points), else planes 15-16 (131,072)
PRIVATE_USE, PRIVATE_USE_SIZE, PLANES_15_16, PLANES_15_16_SIZE = 0xE000, 6400, 0xF0000, 0x20000
SPACE = "\u2581"
#: the score given in a unigram vocabulary to pieces sentencepiece keeps out of its lattice
#: (control and unused pieces), so that HF's Viterbi never picks them
EXCLUDED_SCORE = -1e9


def merges_from_ranks(mergeable_ranks: Mapping[bytes, int]) -> list[tuple[str, str, int]]:
    """HF merges ``(left, right, rank)`` that make HF's BPE merge exactly as tiktoken does.

    tiktoken merges two adjacent pieces whenever their concatenation is a token, at that
    token's rank; HF merges only listed pairs. Listing, for every token, each split into two
    tokens at the token's rank reproduces tiktoken's choice at every step. Sorted by rank, then
    by the ranks of the halves (as ``transformers``' tiktoken converter does).
    """
    merges: list[tuple[int, int, int, bytes, bytes]] = []
    for piece, rank in mergeable_ranks.items():
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in mergeable_ranks and right in mergeable_ranks:
                merges.append((rank, mergeable_ranks[left], mergeable_ranks[right], left, right))
    merges.sort()
    return [(byte_string(left), byte_string(right), rank) for rank, _, _, left, right in merges]


def ranks_json(ranks: Mapping[bytes, int], pattern: str, special_tokens: Mapping[str, int]) -> dict[str, Any]:
    """The ``tokenizer.json`` document of byte-level BPE by tiktoken's rule: ``ranks`` (token
    bytes -> id), the split ``pattern``, ``special_tokens`` (text -> id) as HF added tokens.
    The pattern is written as Oniguruma reads `regex`'s meaning (`as_onig_regex`: cl100k's
    possessive ``\\p{N}{1,3}+`` would otherwise take every digit of a run there)."""
    from ...text.onig import as_onig_regex

    vocab = {byte_string(piece): rank for piece, rank in sorted(ranks.items(), key=lambda item: item[1])}
    added_tokens = [
        {
            "id": token,
            "content": text,
            "single_word": False,
            "lstrip": False,
            "rstrip": False,
            "normalized": False,
            "special": True,
        }
        for text, token in sorted(special_tokens.items(), key=lambda item: item[1])
    ]
    byte_level = {"add_prefix_space": False, "trim_offsets": True, "use_regex": False}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added_tokens,
        "normalizer": None,
        "pre_tokenizer": {
            "type": "Sequence",
            "pretokenizers": [
                {"type": "Split", "pattern": {"Regex": as_onig_regex(pattern)}, "behavior": "Isolated",
                 "invert": False},
                {"type": "ByteLevel", **byte_level},
            ],
        },
        "post_processor": None,
        "decoder": {"type": "ByteLevel", **byte_level},
        "model": {
            "type": "BPE",
            "dropout": None,
            "unk_token": None,
            "continuing_subword_prefix": None,
            "end_of_word_suffix": None,
            "fuse_unk": False,
            "byte_fallback": False,
            # tiktoken emits a piece that is itself a token whole, without merging
            "ignore_merges": True,
            "vocab": vocab,
            "merges": [[left, right] for left, right, _ in merges_from_ranks(ranks)],
        },
    }


def code_points(n_symbols: int) -> int:
    """The code point of alphabet symbol 0 (symbol ``i`` is ``chr(base + i)``).

    >>> hex(code_points(300)), hex(code_points(10_000))
    ('0xe000', '0xf0000')
    """
    if n_symbols <= PRIVATE_USE_SIZE:
        return PRIVATE_USE
    if n_symbols <= PLANES_15_16_SIZE:
        return PLANES_15_16
    raise CannotWrite(f"an alphabet of {n_symbols} symbols has no code point each (at most {PLANES_15_16_SIZE})")


def as_text(tokenizer: Any, doc: Any) -> str:
    """``doc`` (a sequence of ``tokenizer``'s symbols) as the text its written tokenizer.json
    encodes: the symbols themselves for a single-character alphabet, else ``chr(base + i)``.

    >>> from ubpe import UBPEClassic
    >>> tok = UBPEClassic(alphabet=[10, 20, 30], n_tokens=4)
    >>> tok.fit([[10, 20, 30, 10, 20]], quiet=True)
    >>> [hex(ord(c)) for c in as_text(tok, [20, 10])]
    ['0xe001', '0xe000']
    """
    if getattr(tokenizer, "variant", None) not in ("classic", "universal") or single_characters(tokenizer):
        return doc
    return symbols_as_text(tokenizer._alphabet, doc)


def symbols_as_text(alphabet: Any, doc: Any) -> str:
    """``doc``, symbols of ``alphabet`` (a :class:`ubpe.alphabet.Alphabet`), as the characters
    that stand for them in a written tokenizer.json: symbol ``i`` is ``chr(base + i)``
    (:func:`code_points`); an unknown symbol is the alphabet's :class:`UnknownSymbolError`."""
    base = code_points(len(alphabet))
    return "".join(chr(base + i) for i in alphabet.ids_of(doc).tolist())


def _symbol_chars(view: SymbolMerges) -> list[str]:
    if view.text:
        return list(view.alphabet)
    base = code_points(len(view.alphabet))
    return [chr(base + i) for i in range(len(view.alphabet))]


def _merges_by_splits(texts: list[str], order: Any, allowed: list[bool]) -> list[list[str]]:
    """One merge ``[left, right]`` per split of every allowed token into two tokens, ranked
    by ``order`` of the token (lower first), then by the ids of the halves."""
    index: dict[str, int] = {}
    for token, text in enumerate(texts):
        index.setdefault(text, token)
    rows = []
    for token, text in enumerate(texts):
        if not allowed[token] or index[text] != token:
            continue
        for cut in range(1, len(text)):
            left, right = index.get(text[:cut]), index.get(text[cut:])
            if left is not None and right is not None and allowed[left] and allowed[right]:
                rows.append((order[token], left, right, text[:cut], text[cut:]))
    rows.sort(key=lambda row: row[:3])
    return [[left, right] for _, _, _, left, right in rows]


def _bpe(vocab: dict[str, int], merges: list[list[str]], **options: Any) -> dict[str, Any]:
    model = {"type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": None,
             "end_of_word_suffix": None, "fuse_unk": False, "byte_fallback": False, "ignore_merges": False}
    model.update(options)
    model.update(vocab=vocab, merges=merges)
    return model


def _added(token: int, content: str, special: bool, normalized: bool = False) -> dict[str, Any]:
    return {"id": token, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": normalized, "special": special}


def _document(model: dict[str, Any], *, normalizer: Any = None, pre_tokenizer: Any = None, decoder: Any = None,
              added: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"version": "1.0", "truncation": None, "padding": None, "added_tokens": added or [],
            "normalizer": normalizer, "pre_tokenizer": pre_tokenizer, "post_processor": None,
            "decoder": decoder, "model": model}


def symbol_merges_json(view: SymbolMerges) -> dict[str, Any]:
    chars = _symbol_chars(view)
    texts = ["".join(chars[s] for s in piece) for piece in view.pieces]
    vocab: dict[str, int] = {}
    for token, text in enumerate(texts):
        vocab.setdefault(text, token)  # a piece twice: the lower id, which ranked encoding reaches first
    if len(vocab) < len(texts):
        raise CannotWrite("this classic vocabulary holds one piece under several ids; tokenizer.json maps "
                          "each piece to one id")
    merges = _merges_by_splits(texts, list(range(len(texts))), [True] * len(texts))
    model = _bpe(vocab, merges)
    model[UBPE_SECTION] = {"format_version": UBPE_SECTION_VERSION,
                           "code_point_base": None if view.text else code_points(len(view.alphabet)),
                           "alphabet": view.alphabet, "model": view.model_json}
    return _document(model, decoder={"type": "Fuse"})


def read_section(section: Any, where: str) -> Any:
    """The model a ``"ubpe"`` section of a tokenizer.json holds (see the module docstring)."""
    from ...errors import ModelFormatError
    from ..ours import from_json

    version = section.get("format_version")
    if version != UBPE_SECTION_VERSION or not isinstance(section.get("model"), str):
        raise ModelFormatError(f"{where}: a ubpe section of version {version!r}; this ubpe reads version "
                               f"{UBPE_SECTION_VERSION} (upgrade ubpe)")
    return from_json(section["model"], what=where)


def byte_merges_json(view: ByteMerges) -> dict[str, Any]:
    vocab = {text: token for token, text in enumerate(view.tokens)}
    if len(vocab) < len(view.tokens):
        raise CannotWrite("this GGUF vocabulary holds one token text twice; tokenizer.json maps each text to one id")
    byte_level = {"add_prefix_space": False, "trim_offsets": False, "use_regex": False}
    splits = [{"type": "Split", "pattern": {"Regex": expression}, "behavior": "Isolated", "invert": False}
              for expression in view.expressions]
    added = [_added(token, view.tokens[token], int(kind) == CONTROL)
             for token, kind in enumerate(view.token_types.tolist()) if kind in (CONTROL, USER_DEFINED)]
    merges = [line.split(" ", 1) for line in view.merges]
    return _document(_bpe(vocab, merges, ignore_merges=view.ignore_merges),
                     pre_tokenizer={"type": "Sequence", "pretokenizers": [*splits, {"type": "ByteLevel", **byte_level}]},
                     decoder={"type": "ByteLevel", **byte_level}, added=added)


#: llama.cpp's gemma4 pre-tokenizer: merges never cross a line end
GEMMA4_LINES = "[^\\n]+|[\\n]+"


def char_merges_json(view: CharMerges) -> dict[str, Any]:
    """llama.cpp's ``gemma4`` model in ``tokenizers``' terms (user-defined tokens cut out of the
    raw text, control ones special; the ids checked on held-out text by ``test_writers``)."""
    vocab = {text: token for token, text in enumerate(view.tokens)}
    if len(vocab) < len(view.tokens):
        raise CannotWrite("this GGUF vocabulary holds one token text twice; tokenizer.json maps each text to one id")
    added = [_added(token, view.tokens[token], kind == CONTROL)
             for token, kind in enumerate(view.token_types.tolist()) if kind in (CONTROL, USER_DEFINED)]
    unk = view.special_ids.get("unk")
    model = _bpe(vocab, [line.split(" ", 1) for line in view.merges], byte_fallback=True,
                 unk_token=view.tokens[unk] if unk is not None else None)
    return _document(model, normalizer={"type": "Replace", "pattern": {"String": " "}, "content": SPACE},
                     pre_tokenizer={"type": "Split", "pattern": {"Regex": GEMMA4_LINES}, "behavior": "Isolated",
                                    "invert": False},
                     decoder={"type": "Sequence", "decoders": [
                         {"type": "Replace", "pattern": {"String": SPACE}, "content": " "},
                         {"type": "ByteFallback"}, {"type": "Fuse"}]}, added=added)


def _normalizer(view: Pieces) -> dict[str, Any] | None:
    steps: list[dict[str, Any]] = []
    if view.charsmap:
        import base64

        steps.append({"type": "Precompiled", "precompiled_charsmap": base64.b64encode(view.charsmap).decode("ascii")})
    if view.remove_extra_whitespaces:
        # sentencepiece strips and collapses spaces only (HF's Strip would take any whitespace)
        steps += [{"type": "Replace", "pattern": {"Regex": "\\A +| +\\z"}, "content": ""},
                  {"type": "Replace", "pattern": {"Regex": " {2,}"}, "content": " "}]
    if view.add_dummy_prefix:
        steps.append({"type": "Prepend", "prepend": SPACE if view.escape_whitespaces else " "})
    if view.escape_whitespaces:
        steps.append({"type": "Replace", "pattern": {"String": " "}, "content": SPACE})
    return {"type": "Sequence", "normalizers": steps} if steps else None


def pieces_json(view: Pieces) -> dict[str, Any]:
    types = view.types.tolist()
    unk = view.special_ids.get("unk")
    added = [_added(token, view.pieces[token], kind == CONTROL, normalized=not view.llama_text and kind == USER_DEFINED)
             for token, kind in enumerate(types) if kind in (CONTROL, USER_DEFINED) or (kind == UNKNOWN and view.llama_text)]
    decoder_steps: list[dict[str, Any]] = [{"type": "Replace", "pattern": {"String": SPACE}, "content": " "}]
    if view.byte_fallback:
        decoder_steps.append({"type": "ByteFallback"})
    decoder_steps.append({"type": "Fuse"})
    if view.add_dummy_prefix:
        decoder_steps.append({"type": "Strip", "content": " ", "start": 1, "stop": 0})
    decoder = {"type": "Sequence", "decoders": decoder_steps}
    if view.kind == "unigram":
        scores = [float(s) if kind not in (CONTROL, UNUSED) else EXCLUDED_SCORE
                  for s, kind in zip(view.scores.tolist(), types)]
        model = {"type": "Unigram", "unk_id": unk, "vocab": [[p, s] for p, s in zip(view.pieces, scores)],
                 "byte_fallback": view.byte_fallback}
    else:
        vocab = {piece: token for token, piece in enumerate(view.pieces)}
        if len(vocab) < len(view.pieces):
            raise CannotWrite("this sentencepiece model holds one piece twice; tokenizer.json maps each piece to one id")
        # sentencepiece merges the pair whose concatenation scores highest (ties: leftmost);
        # the merged pieces are normal ones, their halves any piece but control/unknown/byte
        order = (-view.scores.astype("float64")).tolist()
        allowed = [kind in (NORMAL, USER_DEFINED, UNUSED) for kind in types]
        merge_result = [kind == NORMAL for kind in types]
        merges = [m for m in _merges_by_splits(view.pieces, order, allowed) if merge_result[vocab[m[0] + m[1]]]]
        model = _bpe(vocab, merges, unk_token=view.pieces[unk] if unk is not None else None,
                     fuse_unk=True, byte_fallback=view.byte_fallback)
    return _document(model, normalizer=_normalizer(view), decoder=decoder, added=added)


def tokenizer_json(tokenizer: Any) -> dict[str, Any]:
    """The ``tokenizer.json`` document of ``tokenizer`` (:class:`CannotWrite`: none holds it)."""
    view = view_of(tokenizer)
    if isinstance(view, SourceDocument):
        return json.loads(view.text)
    if isinstance(view, ByteRanks):
        return ranks_json(view.ranks, view.pattern, view.specials)
    if isinstance(view, ByteMerges):
        return byte_merges_json(view)
    if isinstance(view, Pieces):
        return pieces_json(view)
    if isinstance(view, CharMerges):
        return char_merges_json(view)
    return symbol_merges_json(view)


def write(tokenizer: Any, path: Any) -> None:
    """Write ``tokenizer`` as an HF ``tokenizer.json`` (atomically); a model read from one: that
    document, as it came."""
    view = view_of(tokenizer)
    text = view.text if isinstance(view, SourceDocument) else json.dumps(tokenizer_json(tokenizer), ensure_ascii=False,
                                                                         indent=1)
    write_atomically(path, text)


__all__ = ["as_text", "code_points", "symbols_as_text", "merges_from_ranks", "ranks_json", "read_section", "tokenizer_json", "write"]
