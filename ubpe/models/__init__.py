"""Tokenizer families: one module per model, each behind the same tokenizer contract.

* ``base`` - :class:`Tokenizer`, the one base of every family: the contract implemented once
  over a few hooks, with declared capabilities;
* ``ubpe`` - our own vocabulary fitted on any sequence: :class:`UBPE` (universal, flattened
  pieces, tf-idf top-n) and :class:`UBPEClassic` (ubpe 0.3.0's recursive merges);
* ``bytelevel`` - byte-level BPE fitted by ubpe and read from ``.tiktoken`` files
  (:class:`ByteLevelBPE`, token for token tiktoken's), with its trainer in
  ``bytelevel_trainer``;
* ``imported`` - the base of every model read from another system's file
  (:class:`ImportedTokenizer`; ``contract`` is its share of the contract);
* ``ranked_bpe`` - BPE with explicit merge ranks over bytes (GGUF ``gpt2``, HF byte-level,
  minbpe: :class:`ImportedBPE`); ``minbpe`` is minbpe's flavour of it;
* ``sentencepiece`` - sentencepiece BPE and unigram (``.model`` files and GGUF ``llama``);
* ``llama_unigram`` - llama.cpp's unigram (GGUF ``t5``: :class:`LlamaUnigram`);
* ``gemma4`` - llama.cpp's ``gemma4`` GGUF tokenizer: merges by rank over characters
  (:class:`Gemma4BPE`);
* ``tekken`` - Mistral's tekken files: byte-level BPE behind a block of special tokens;
* ``clip`` - CLIP's merges (open_clip's ``SimpleTokenizer``): ``</w>``-marked BPE over bytes;
* ``hf`` - Hugging Face ``tokenizer.json`` BPE models (byte-level and character-level);
* ``composed`` - a tokenizer as a composition of stages, HF's way (:class:`ComposedTokenizer`:
  normalizer + pre-tokenizer + model + decoder + post-processor), over a model stage such as
  ``unigram``'s HF ``Unigram`` (:class:`UnigramModel`) or ``wordlevel``'s HF ``WordLevel``
  (:class:`WordLevelModel`); a new family is a model-stage module;
* ``chunks`` - how a batch of documents is cut into chunks for the byte-level kernels;
* ``split_batch`` - a batch through a UBPE tokenizer's split pipeline and one encoder, on threads.

The text steps in front of a model (normalizers, pre-tokenizers, special tokens) are in
:mod:`ubpe.text`; the file formats that build these models are in :mod:`ubpe.io`.

>>> from ubpe.models import UBPE
>>> UBPE(alphabet="ab", n_tokens=3).variant
'universal'
"""

from __future__ import annotations

from .._lazy import lazy_attributes

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from .bytelevel import ByteLevelBPE
    from .imported import ImportedTokenizer
    from .ranked_bpe import ImportedBPE
    from .gemma4 import Gemma4BPE
    from .llama_unigram import LlamaUnigram
    from .sentencepiece import SentencePieceBPE, SentencePieceUnigram
    from .tekken import TekkenBPE
    from .clip import CLIPBPE
    from .composed import ComposedTokenizer
    from .unigram import UnigramModel
    from .wordlevel import WordLevelModel
    from .base import Tokenizer
    from .ubpe import UBPE, UBPEBase, UBPEClassic

_LAZY = {
    "UBPE": ".ubpe",
    "UBPEBase": ".ubpe",
    "UBPEClassic": ".ubpe",
    "Tokenizer": ".base",
    "ByteLevelBPE": ".bytelevel",
    "ImportedTokenizer": ".imported",
    "ImportedBPE": ".ranked_bpe",
    "SentencePieceBPE": ".sentencepiece",
    "SentencePieceUnigram": ".sentencepiece",
    "LlamaUnigram": ".llama_unigram",
    "Gemma4BPE": ".gemma4",
    "TekkenBPE": ".tekken",
    "CLIPBPE": ".clip",
    "ComposedTokenizer": ".composed",
    "UnigramModel": ".unigram",
    "WordLevelModel": ".wordlevel",
}

__getattr__, __dir__ = lazy_attributes(__name__, _LAZY, globals())

__all__ = list(_LAZY)
