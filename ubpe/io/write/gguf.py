"""GGUF vocabularies (``gguf``'s :class:`GGUFWriter`) that llama.cpp tokenizes as ubpe does.

A vocabulary-only file, like llama.cpp's ``ggml-vocab-*.gguf``: the ``llama`` architecture with
token-free hyperparameters (llama.cpp reads them even with ``vocab_only``) and the
``tokenizer.ggml.*`` keys of one tokenizer model:

* byte-level models (ByteLevelBPE, tekken, GGUF ``gpt2``): ``gpt2`` with the merges (for
  tiktoken's rule: one merge per split of every token, as in tokenizer.json) and the ``pre``
  name whose regexes are the model's pattern (``gpt2`` -> ``gpt-2``, ``llama3`` -> ``llama-bpe``,
  ``qwen2``...); a pattern llama.cpp has no name for is refused;
* sentencepiece BPE models without normalization (GGUF ``llama``, and ``.model`` files with the
  identity normalizer): ``llama`` with pieces, scores and types;
* sentencepiece unigram models: ``t5`` with the precompiled charsmap and the whitespace flags;
* llama.cpp's own ``gemma4`` and ``bert`` models (read from a GGUF file): written back as they
  were read (tokens, types, scores, merges, special ids);
* classic vocabularies over characters: ``llama`` with score ``-id`` per piece (llama.cpp's SPM
  loop merges the pair whose concatenation scores highest: ubpe's ``ranked`` encoder,
  ``priority="id"``), spaces written as ``▁`` (llama.cpp reads a space as ``▁``), no space
  prefix, no BOS, an unknown piece appended last.

The GGUF version is the container's own (``GGUFWriter`` writes version 3); ``general.name``
records the model's name.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from ...errors import InvalidParameterError
from ...files import write_atomically
from ...text.byte_chars import byte_string
from ...text.pretokenizers import REGEXES
from .hf import SPACE, merges_from_ranks
from .model_view import (CONTROL, NORMAL, ByteMerges, ByteRanks, CannotWrite, CharMerges, Pieces, SymbolMerges,
                         WordPieces, view_of)
from .spm import _symbol_pieces

ARCHITECTURE = "llama"
#: the hyperparameters llama.cpp loads with a vocabulary-only file (any valid values)
HPARAMS = {"context_length": 4096, "embedding_length": 64, "block_count": 1, "feed_forward_length": 64,
           "attention.head_count": 1, "attention.head_count_kv": 1}
RMS_EPSILON = 1e-5
#: the ``tokenizer.ggml.pre`` name written for a pre-tokenizer type (the first llama.cpp maps to it)
PRE_NAMES = {"gpt2": "gpt-2", "llama3": "llama-bpe", "qwen2": "qwen2", "qwen35": "qwen35",
             "starcoder": "starcoder", "falcon": "falcon", "deepseek-llm": "deepseek-llm",
             "deepseek-coder": "deepseek-coder"}


def pre_name(pattern: str) -> str:
    """The llama.cpp ``pre`` name whose one regex is ``pattern`` (or a ubpe preset's name)."""
    from ...text.patterns import PATTERNS

    pattern = PATTERNS.get(pattern, pattern)
    for pre_type, expressions in REGEXES.items():
        if expressions == (pattern,) and pre_type in PRE_NAMES:
            return PRE_NAMES[pre_type]
    preset = {text: name for name, text in PATTERNS.items()}.get(pattern)
    if preset == "gpt2":
        return "gpt-2"
    if preset == "llama3":
        return "llama-bpe"
    raise CannotWrite(f"llama.cpp has no pre-tokenizer for this model's pattern ({preset or 'a custom regex'}); "
                      "GGUF byte-level models take one of llama.cpp's named regex lists")


def _gguf():
    try:
        import gguf
    except ImportError:
        raise InvalidParameterError("writing GGUF files needs the `gguf` package: pip install 'ubpe[vocab]'") from None
    return gguf


def _byte_ranks(view: ByteRanks) -> dict[str, Any]:
    ids = {**{byte_string(piece): rank for piece, rank in view.ranks.items()}, **view.specials}
    n = max(ids.values()) + 1
    if len(ids) != n:
        raise CannotWrite("this byte-level model's ids have gaps; a GGUF vocabulary numbers its tokens 0..n-1")
    tokens = [""] * n
    for text, token in ids.items():
        tokens[token] = text
    types = np.full(n, NORMAL, np.int32)
    types[list(view.specials.values())] = CONTROL
    merges = [f"{left} {right}" for left, right, _ in merges_from_ranks(view.ranks)]
    return {"model": "gpt2", "pre": pre_name(view.pattern), "tokens": tokens, "types": types, "merges": merges}


def _pieces(view: Pieces) -> dict[str, Any]:
    if view.kind == "unigram":
        return {"model": "t5", "tokens": view.pieces, "scores": view.scores, "types": view.types,
                "charsmap": view.charsmap, "remove_extra_whitespaces": view.remove_extra_whitespaces,
                "add_space_prefix": view.add_dummy_prefix, "specials": view.special_ids}
    if view.charsmap or view.remove_extra_whitespaces or not view.escape_whitespaces:
        raise CannotWrite("llama.cpp's llama (SPM) tokenizer does not normalize text; this sentencepiece BPE "
                          "model does (a charsmap or whitespace clean-up)")
    return {"model": "llama", "tokens": view.pieces, "scores": view.scores, "types": view.types,
            "add_space_prefix": view.add_dummy_prefix, "specials": view.special_ids}


def _symbols(view: SymbolMerges) -> dict[str, Any]:
    pieces = _symbol_pieces(view)
    if SPACE in pieces.pieces[: len(view.alphabet)]:
        raise CannotWrite("llama.cpp reads a space as '▁'; this alphabet has both")
    tokens = [p.replace(" ", SPACE) for p in pieces.pieces[:-1]] + pieces.pieces[-1:]
    return {"model": "llama", "tokens": tokens, "scores": pieces.scores, "types": pieces.types,
            "add_space_prefix": False, "specials": pieces.special_ids}


def metadata_of(tokenizer: Any) -> dict[str, Any]:
    """The tokenizer part of the GGUF file of ``tokenizer`` (:class:`CannotWrite`: none holds it)."""
    view = view_of(tokenizer)
    if isinstance(view, ByteRanks):
        return _byte_ranks(view)
    if isinstance(view, ByteMerges):
        return {"model": "gpt2", "pre": view.pre, "tokens": view.tokens, "types": view.token_types,
                "merges": view.merges, "specials": view.special_ids}
    if isinstance(view, Pieces):
        return _pieces(view)
    if isinstance(view, CharMerges):  # a GGUF model back into GGUF, as llama.cpp read it
        return {"model": "gemma4", "pre": "gemma4", "tokens": view.tokens, "types": view.token_types,
                "scores": view.scores, "merges": view.merges, "add_space_prefix": view.add_space_prefix,
                "specials": view.special_ids}
    if isinstance(view, WordPieces):
        if not (view.lowercase and view.strip_accents):
            raise CannotWrite("llama.cpp's WPM lowercases and strips accents; this WordPiece model does not")
        return {"model": "bert", "tokens": view.tokens, "types": view.token_types, "specials": view.special_ids}
    if isinstance(view, SymbolMerges):
        return _symbols(view)
    raise CannotWrite("a GGUF file holds no tokenizer.json pipeline")


def write(tokenizer: Any, path: str | os.PathLike) -> None:
    """Write ``tokenizer`` as a vocabulary-only GGUF file (atomically)."""
    meta = metadata_of(tokenizer)
    gguf = _gguf()
    with tempfile.TemporaryDirectory() as folder:
        scratch = Path(folder) / "vocab.gguf"
        writer = gguf.GGUFWriter(str(scratch), arch=ARCHITECTURE)
        writer.add_name(str(getattr(tokenizer, "name", "") or "ubpe"))
        writer.add_context_length(HPARAMS["context_length"])
        writer.add_embedding_length(HPARAMS["embedding_length"])
        writer.add_block_count(HPARAMS["block_count"])
        writer.add_feed_forward_length(HPARAMS["feed_forward_length"])
        writer.add_head_count(HPARAMS["attention.head_count"])
        writer.add_head_count_kv(HPARAMS["attention.head_count_kv"])
        writer.add_layer_norm_rms_eps(RMS_EPSILON)
        writer.add_tokenizer_model(meta["model"])
        writer.add_tokenizer_pre(meta.get("pre", "default"))
        writer.add_token_list(list(meta["tokens"]))
        writer.add_token_types(np.asarray(meta["types"], np.int32).tolist())
        if "scores" in meta:
            writer.add_token_scores(np.asarray(meta["scores"], np.float32).tolist())
        if "merges" in meta:
            writer.add_token_merges(list(meta["merges"]))
        if "charsmap" in meta:
            writer.add_precompiled_charsmap(meta["charsmap"])
            writer.add_remove_extra_whitespaces(bool(meta["remove_extra_whitespaces"]))
        if "add_space_prefix" in meta:
            writer.add_add_space_prefix(bool(meta["add_space_prefix"]))
        specials = meta.get("specials", {})
        for key, add in (("bos", writer.add_bos_token_id), ("eos", writer.add_eos_token_id),
                         ("unk", writer.add_unk_token_id), ("pad", writer.add_pad_token_id),
                         ("sep", writer.add_sep_token_id), ("mask", writer.add_mask_token_id)):
            if specials.get(key) is not None:
                add(int(specials[key]))
        writer.add_add_bos_token(False)
        writer.add_add_eos_token(False)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        write_atomically(path, scratch.read_bytes())


__all__ = ["metadata_of", "pre_name", "write"]
