"""HF ``tokenizer.json`` files for the tests, built with the ``tokenizers`` API: real
vocabularies (llama.cpp's GGUF test vocabularies) assembled as the published GPT-2, RoBERTa,
Llama 3, Qwen2 and Llama 2 files are (same pre-tokenizers, regexes, normalizers, decoders,
added tokens and post-processors), and BPE models trained with ``tokenizers`` on real text.
Every builder returns a ``tokenizers.Tokenizer``; the tests save it and read the file back."""

from __future__ import annotations

import gzip
import json

import numpy as np
from tokenizers import AddedToken, Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from ubpe.io.gguf import read_metadata
from ubpe.models.imported import USER_DEFINED
from ubpe.models.clip import N_MERGES as CLIP_MERGES
from ubpe.text.byte_chars import BYTE_TO_CHAR
from ubpe.text.clip import WORD_PATTERN
from ubpe.text.pretokenizers import REGEXES, resolve_pre
from vocab_corpora import shipped_file, text_lines, vocab_path

LLAMA3_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*"
                r"|\s*[\r\n]+|\s+(?!\S)|\s+")
QWEN2_REGEX = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*"
               r"|\s*[\r\n]+|\s+(?!\S)|\s+")
# tekken's (mistral-common's tekken_240911.json), which is no preset
TEKKEN_REGEX = (r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+|"
                r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*|\p{N}|"
                r" ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+")
NORMAL, CONTROL = 1, 3
CLIP_START, CLIP_END = "<|startoftext|>", "<|endoftext|>"  # as HF's CLIP files spell them


def _gguf(name: str):
    meta = read_metadata(vocab_path(name))
    return (meta["tokenizer.ggml.tokens"], np.asarray(meta["tokenizer.ggml.token_type"]),
            meta.get("tokenizer.ggml.merges") or [], meta.get("tokenizer.ggml.scores"))


def _byte_level_bpe(name: str, n_model: int, **options) -> tuple[Tokenizer, list[str]]:
    tokens, _, merges, _ = _gguf(name)
    vocab = {t: i for i, t in enumerate(tokens[:n_model])}
    pairs = [tuple(line.split(" ", 1)) for line in merges]
    return Tokenizer(models.BPE(vocab=vocab, merges=pairs, **options)), tokens


def gpt2() -> Tokenizer:
    """GPT-2's tokenizer.json: ByteLevel everywhere, <|endoftext|> added (normalized)."""
    tok, tokens = _byte_level_bpe("gpt-2", 50256)
    tok.add_special_tokens([AddedToken(tokens[50256], normalized=True)])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def tekken_split() -> Tokenizer:
    """GPT-2's vocabulary split by tekken's regex (no preset: the kernel's regex VM runs it),
    Split(regex, isolated) + ByteLevel(use_regex=false)."""
    tok, tokens = _byte_level_bpe("gpt-2", 50256)
    tok.add_special_tokens([AddedToken(tokens[50256], normalized=True)])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(TEKKEN_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    return tok


def roberta() -> Tokenizer:
    """RoBERTa's layout on GPT-2's vocabulary: <s> <pad> </s> <unk> and <mask> (lstrip),
    RobertaProcessing."""
    tok, tokens = _byte_level_bpe("gpt-2", 50257)
    tok.add_special_tokens(["<s>", "<pad>", "</s>", "<unk>", AddedToken("<mask>", lstrip=True)])
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True)
    tok.post_processor = processors.RobertaProcessing(("</s>", 50259), ("<s>", 50257), trim_offsets=True,
                                                      add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def llama3() -> Tokenizer:
    """Llama 3's tokenizer.json: Split(regex) + ByteLevel(use_regex=false), ignore_merges,
    256 special tokens, TemplateProcessing with <|begin_of_text|>."""
    tok, tokens = _byte_level_bpe("llama-bpe", 128000, ignore_merges=True)
    tok.add_special_tokens(tokens[128000:])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(LLAMA3_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)])
    tok.post_processor = processors.Sequence([
        processors.ByteLevel(trim_offsets=False),
        processors.TemplateProcessing(single="<|begin_of_text|> $A",
                                      pair="<|begin_of_text|> $A <|begin_of_text|> $B:1",
                                      special_tokens=[("<|begin_of_text|>", 128000)])])
    tok.decoder = decoders.ByteLevel()
    return tok


def qwen2() -> Tokenizer:
    """Qwen2's tokenizer.json: NFC, Split(regex) + ByteLevel(use_regex=false), three special tokens."""
    tok, tokens = _byte_level_bpe("qwen2", 151643)
    tok.add_special_tokens(tokens[151643:151646])
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(QWEN2_REGEX), behavior="isolated", invert=False),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=False, use_regex=False)])
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    tok.decoder = decoders.ByteLevel()
    return tok


def _byte_level_with_added(name: str, pre_tokenizer) -> Tokenizer:
    """A GGUF byte-level vocabulary whole, its control tokens added as special tokens and its
    user-defined ones as normalized non-special tokens (as DeepSeek's files list theirs)."""
    tokens, types, merges, _ = _gguf(name)
    tok = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)},
                               merges=[tuple(line.split(" ", 1)) for line in merges]))
    tok.add_tokens([AddedToken(tokens[i], special=types[i] == CONTROL, normalized=types[i] != CONTROL)
                    for i in range(len(tokens)) if types[i] != NORMAL])
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.ByteLevel()
    return tok


def falcon() -> Tokenizer:
    """Falcon's pre-tokenizer: Punctuation, ByteLevel (with its regex), then Digits and a
    three-digit Split on the byte-level words."""
    return _byte_level_with_added("falcon", pre_tokenizers.Sequence([
        pre_tokenizers.Punctuation("contiguous"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True),
        pre_tokenizers.Digits(individual_digits=False),
        pre_tokenizers.Split(Regex("[0-9][0-9][0-9]"), behavior="isolated", invert=False)]))


def starcoder() -> Tokenizer:
    """StarCoder's pre-tokenizer: single digits, then ByteLevel with its regex."""
    return _byte_level_with_added("starcoder", pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=True)]))


def deepseek_coder() -> Tokenizer:
    """DeepSeek Coder's pre-tokenizer: five Splits (lines, letters, punctuation, CJK, digits),
    then ByteLevel without regex; its single-character added tokens are matched in the text."""
    splits = [r"[\r\n]", r"\s?\p{L}+", r"\s?\p{P}+", "[\u4e00-\u9fa5\u0800-\u4e00\uac00-\ud7ff]+", r"\p{N}"]
    return _byte_level_with_added("deepseek-coder", pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(pattern), behavior="isolated", invert=False) for pattern in splits]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, trim_offsets=True, use_regex=False)]))


def _spm_merges(vocab: dict[str, int], scores: np.ndarray) -> list[tuple[str, str]]:
    """transformers' ``SentencePieceExtractor.extract``: every split of a piece into two
    pieces, by the piece's score (highest first), then by the halves' ids."""
    merges = []
    for piece, piece_id in vocab.items():
        local = [(piece[:k], piece[k:]) for k in range(1, len(piece)) if piece[:k] in vocab and piece[k:] in vocab]
        local.sort(key=lambda pair: (vocab[pair[0]], vocab[pair[1]]))
        merges.extend((float(scores[piece_id]), pair) for pair in local)
    merges.sort(key=lambda item: -item[0])
    return [pair for _, pair in merges]


def llama2(legacy: bool = True) -> Tokenizer:
    """Llama 2's tokenizer.json: byte fallback, fuse_unk, <unk> <s> </s>; ``legacy``: the
    Prepend/Replace normalizer (else Metaspace(prepend_scheme=first)); Replace, ByteFallback,
    Fuse, Strip decoders; TemplateProcessing with <s>."""
    tokens, types, _, scores = _gguf("llama-spm")
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=_spm_merges(vocab, scores), unk_token="<unk>",
                               fuse_unk=True, byte_fallback=True))
    tok.add_special_tokens([AddedToken(t, normalized=False) for t in ("<unk>", "<s>", "</s>")])
    if legacy:
        tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    else:
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first", split=False)
    tok.decoder = decoders.Sequence([decoders.Replace("▁", " "), decoders.ByteFallback(), decoders.Fuse(),
                                     decoders.Strip(content=" ", left=1, right=0)])
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", pair="<s> $A <s> $B",
                                                       special_tokens=[("<s>", 1)])
    return tok


def _training_text() -> list[str]:
    return text_lines("shakespeare", limit=6000) + text_lines("stdlib", limit=2000)


def trained_bytelevel() -> Tokenizer:
    """A byte-level BPE trained on prose and code (``ByteLevelBPETokenizer``'s layout, with
    add_prefix_space) plus added tokens of every kind."""
    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=3000, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                  special_tokens=["<|endoftext|>"], show_progress=False)
    tok.train_from_iterator(_training_text(), trainer)
    tok.add_tokens([AddedToken(" hello world", normalized=False), AddedToken("[word]", single_word=True),
                    AddedToken("@@", rstrip=True, lstrip=True)])
    tok.post_processor = processors.TemplateProcessing(single="<|endoftext|> $A <|endoftext|>",
                                                       special_tokens=[("<|endoftext|>", 0)])
    return tok


def trained_metaspace(fuse_unk: bool = True) -> Tokenizer:
    """A character BPE with Metaspace (split), an unknown token, no byte fallback: trained on
    English, so other scripts hit the unknown token."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=fuse_unk))
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always", split=True)
    tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
    trainer = trainers.BpeTrainer(vocab_size=2000, special_tokens=["<unk>", "<s>"], show_progress=False)
    tok.train_from_iterator(_training_text(), trainer)
    tok.add_tokens([AddedToken("thee", normalized=True)])
    return tok


def trained_words() -> Tokenizer:
    """A character BPE over Whitespace + Digits(individual) + Punctuation words of lower-cased,
    NFD text, no decoder (HF joins tokens with spaces), no unknown token (unknown characters vanish)."""
    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.Sequence([normalizers.NFD(), normalizers.Lowercase(), normalizers.Strip()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.WhitespaceSplit(), pre_tokenizers.Punctuation("contiguous"),
        pre_tokenizers.Digits(individual_digits=True), pre_tokenizers.Whitespace()])
    trainer = trainers.BpeTrainer(vocab_size=1500, show_progress=False)
    tok.train_from_iterator(_training_text(), trainer)
    return tok


def trained_byte_fallback(every_byte: bool = True) -> Tokenizer:
    """A Llama-2-style character BPE trained on English whose vocabulary gets the 256
    ``<0xXX>`` tokens (byte fallback; else only ASCII's and é's), with the legacy normalizer."""
    tok = Tokenizer(models.BPE(unk_token="<unk>", fuse_unk=True, byte_fallback=True))
    tok.normalizer = normalizers.Sequence([normalizers.Prepend("▁"), normalizers.Replace(" ", "▁")])
    trainer = trainers.BpeTrainer(vocab_size=1500, special_tokens=["<unk>"], show_progress=False)
    tok.train_from_iterator([line.replace(" ", "▁") for line in _training_text()], trainer)
    doc = json.loads(tok.to_str())
    vocab = doc["model"]["vocab"]
    for b in range(256) if every_byte else [*range(128), 0xC3, 0xA9]:
        vocab.setdefault(f"<0x{b:02X}>", len(vocab))
    doc["decoder"] = {"type": "Sequence", "decoders": [
        {"type": "Replace", "pattern": {"String": "▁"}, "content": " "}, {"type": "ByteFallback"},
        {"type": "Fuse"}, {"type": "Strip", "content": " ", "start": 1, "stop": 0}]}
    return Tokenizer.from_str(json.dumps(doc))


def clip() -> Tokenizer:
    """CLIP's tokenizer.json as transformers' ``CLIPConverter`` writes it, on the merges
    open_clip ships (CLIP's vocabulary, its two special tokens spelled as HF spells them): BPE
    with ``end_of_word_suffix="</w>"`` and an unknown token, NFC + whitespace runs + lower case,
    CLIP's regex (Split, removed, inverted) then ByteLevel, RobertaProcessing around a text."""
    path = shipped_file("open-clip-torch", "*/src/open_clip/bpe_simple_vocab_16e6.txt.gz")
    lines = gzip.decompress(path.read_bytes()).decode("utf-8").split("\n")[1 : 1 + CLIP_MERGES]
    merges = [tuple(line.split()) for line in lines]
    chars = list(BYTE_TO_CHAR.values())  # CLIP's order: bytes_to_unicode's
    texts = [*chars, *(c + "</w>" for c in chars), *("".join(pair) for pair in merges), CLIP_START, CLIP_END]
    vocab = {text: i for i, text in enumerate(texts)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=merges, dropout=None, continuing_subword_prefix="",
                               end_of_word_suffix="</w>", fuse_unk=False, unk_token=CLIP_END))
    tok.add_special_tokens([CLIP_START, CLIP_END])
    tok.normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Replace(Regex(r"\s+"), " "),
                                           normalizers.Lowercase()])
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(WORD_PATTERN), behavior="removed", invert=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.RobertaProcessing((CLIP_END, vocab[CLIP_END]), (CLIP_START, vocab[CLIP_START]),
                                                      add_prefix_space=False, trim_offsets=False)
    return tok


BUILDERS = {
    "gpt2": gpt2,
    "tekken-split": tekken_split,
    "roberta": roberta,
    "llama3": llama3,
    "qwen2": qwen2,
    "falcon": falcon,
    "starcoder": starcoder,
    "deepseek-coder": deepseek_coder,
    "llama2": llama2,
    "llama2-metaspace": lambda: llama2(legacy=False),
    "trained-bytelevel": trained_bytelevel,
    "trained-metaspace": trained_metaspace,
    "trained-metaspace-nofuse": lambda: trained_metaspace(fuse_unk=False),
    "trained-words": trained_words,
    "trained-byte-fallback": trained_byte_fallback,
    "trained-byte-fallback-partial": lambda: trained_byte_fallback(every_byte=False),
    "clip": clip,
}


def llama_cpp_reference(tok) -> Tokenizer:
    """llama.cpp's byte-level BPE for a GGUF ``gpt2`` vocabulary (ubpe's ``ImportedBPE``),
    built in HF ``tokenizers``: the user-defined tokens cut out first (added tokens), the
    file's regex list each splitting what the one before left (``Split(..., "isolated")``, the
    text between matches kept), the bytes mapped to GPT-2's alphabet and merged by the file's
    merges (``ignore_merges`` as llama.cpp sets it)."""
    vocab: dict[str, int] = {}
    for i, text in enumerate(tok.texts):
        vocab.setdefault(text, i)
    merges = [tuple(line.split(" ", 1)) for line in tok._merge_lines]
    reference = Tokenizer(models.BPE(vocab=vocab, merges=merges, ignore_merges=tok.ignore_merges))
    reference.pre_tokenizer = pre_tokenizers.Sequence(
        [pre_tokenizers.Split(Regex(e), behavior="isolated") for e in REGEXES[resolve_pre(tok.pre)[0]]]
        + [pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    user = [tok.texts[i] for i in np.flatnonzero(tok.token_types == USER_DEFINED).tolist()]
    reference.add_tokens([AddedToken(text, normalized=False, special=False) for text in user])
    return reference


def bert_vocab() -> dict[str, int]:
    """BERT's ``vocab.txt`` (bge's, uncased) back from llama.cpp's bert-bge GGUF, which spells a
    word-initial token ``▁play`` and a continuation ``ing`` (``##ing`` in BERT's file); the
    bracketed tokens (``[CLS]``, ``[unused0]``) are as BERT's."""
    tokens, _, _, _ = _gguf("bert-bge")
    return {(t[1:] if t.startswith("▁") else t if t.startswith("[") and t.endswith("]") else "##" + t): i
            for i, t in enumerate(tokens)}


def bert(lowercase: bool = True, strip_accents: bool | None = None) -> Tokenizer:
    """BERT's tokenizer.json as ``BertWordPieceTokenizer`` writes it on bge's vocabulary:
    BertNormalizer, BertPreTokenizer, WordPiece(##), [CLS] $A [SEP], the WordPiece decoder;
    ``lowercase`` / ``strip_accents`` for the cased and accent-keeping variants."""
    from tokenizers.implementations import BertWordPieceTokenizer

    built = BertWordPieceTokenizer(bert_vocab(), lowercase=lowercase, strip_accents=strip_accents)
    return Tokenizer.from_str(built.to_str())


def peer_ids(hf: Tokenizer, text: str) -> list[int] | None:
    """``tokenizers``' ids for ``text`` (no template), or None where it panics ("AddedVocabulary
    bad split": an added token whose ``lstrip`` moves its start past its end, inside what an
    earlier token's ``rstrip`` took; ubpe drops that token)."""
    try:
        return hf.encode(text, add_special_tokens=False).ids
    except BaseException as error:  # pyo3's PanicException derives from BaseException
        if "bad split" not in str(error):
            raise
        return None
