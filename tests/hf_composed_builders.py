"""HF ``Unigram`` and ``WordLevel`` tokenizer.json files for the tests (the families made by composition), built with ``tokenizers`` itself: sentencepiece
unigram models trained on real text and converted by ``transformers``' ``convert_slow_tokenizer``
(its T5, ALBERT, XLNet and generic sentencepiece converters, no model weights), and unigram models trained with
``tokenizers``' ``UnigramTrainer``, with and without byte fallback and an unknown token. Every
builder returns a ``tokenizers.Tokenizer``; the tests save it and read the file back."""

from __future__ import annotations

import functools
import io
import json
import tempfile
from pathlib import Path

from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers

from vocab_corpora import text_lines

#: T5's sentinel pieces appended after the model's (``T5Converter.vocab``; t5-small has 100)
T5_EXTRA_IDS = 20


def train_lines() -> list[str]:
    """The training text: held-out splits are for the tests."""
    return (text_lines("shakespeare", limit=6000, split="train") + text_lines("udhr", limit=4000, split="train")
            + text_lines("stdlib", limit=2000, split="train"))


@functools.lru_cache(maxsize=None)
def spm_model(**options) -> bytes:
    """A sentencepiece unigram ``.model`` trained on :func:`train_lines` (``nmt_nfkc``); list
    options as tuples (the models are cached by their options)."""
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(train_lines()), model_writer=out, model_type="unigram", vocab_size=2000,
        character_coverage=0.995, num_threads=1, minloglevel=2,
        **{key: list(value) if isinstance(value, tuple) else value for key, value in options.items()})
    return out.getvalue()


def _proto(data: bytes):
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(data)
    return proto


def converted(data: bytes, style: str, *, legacy: bool = True, byte_fallback: bool = False,
              whitespace_split: bool = False) -> Tokenizer:
    """``data`` (a sentencepiece unigram model) converted by ``transformers``' own converter for
    ``style``: ``t5`` / ``albert`` / ``xlnet`` (``T5Converter``...: their normalizers, Metaspace,
    decoder, post-processor and added tokens; T5's sentinels added as special tokens as its
    fast tokenizer adds them), ``spm`` (``SpmConverter``, with ``handle_byte_fallback`` when
    ``byte_fallback``), or ``proto`` (``SpmConverter.build_tokenizer_from_spm_proto``, which
    follows the model's normalizer spec). ``legacy=False``: Metaspace's ``first`` scheme;
    ``whitespace_split``: older converters' WhitespaceSplit before Metaspace."""
    import importlib
    from types import SimpleNamespace

    # (the package's attribute of that name is the function: the module by its full name)
    convert = importlib.import_module("transformers.convert_slow_tokenizer")

    proto = _proto(data)
    if style == "proto":
        return convert.SpmConverter.build_tokenizer_from_spm_proto(proto, [(p.piece, p.score) for p in proto.pieces])
    path = Path(tempfile.mkdtemp(prefix="spm")) / "spiece.model"
    path.write_bytes(data)
    ids = {p.piece: i for i, p in enumerate(proto.pieces)}
    original = SimpleNamespace(vocab_file=str(path), convert_tokens_to_ids=ids.get, _extra_ids=T5_EXTRA_IDS,
                               legacy=legacy, do_lower_case=style == "albert", keep_accents=False)
    converter = {"t5": convert.T5Converter, "albert": convert.AlbertConverter, "xlnet": convert.XLNetConverter,
                 "spm": type("ByteFallbackSpm", (convert.SpmConverter,), {"handle_byte_fallback": byte_fallback})}
    tok = converter[style](original).converted()
    if whitespace_split:
        tok.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.WhitespaceSplit(), tok.pre_tokenizer])
    if style == "t5":
        tok.add_special_tokens([f"<extra_id_{i}>" for i in range(T5_EXTRA_IDS)] + ["<unk>", "</s>", "<pad>"])
    return tok


@functools.lru_cache(maxsize=None)
def _trained_json() -> str:
    tok = Tokenizer(models.Unigram())
    tok.normalizer = normalizers.NFKC()
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    trainer = trainers.UnigramTrainer(vocab_size=1500, special_tokens=["<pad>", "</s>", "<unk>"], unk_token="<unk>",
                                      max_piece_length=12, show_progress=False)
    # English prose and code only: its few hundred characters fit the vocabulary, and the
    # tests' other scripts are unknown to it (the unknown token, byte fallback)
    tok.train_from_iterator([line for line in train_lines() if line.isascii()], trainer)
    tok.decoder = decoders.Metaspace()
    tok.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", 1)])
    return tok.to_str()


def trained(byte_fallback: bool = False, byte_pieces: range | None = None, unk: bool = True) -> Tokenizer:
    """A unigram model trained by ``tokenizers``, NFKC + Metaspace; ``byte_fallback`` with
    ``<0xXX>`` pieces for ``byte_pieces`` (default all 256) scored below every other piece;
    ``unk=False``: no unknown token (``unk_id`` null)."""
    doc = json.loads(_trained_json())
    model = doc["model"]
    if byte_fallback:
        lowest = min(score for _, score in model["vocab"])
        model["vocab"] += [[f"<0x{b:02X}>", lowest - 1.0] for b in (byte_pieces or range(256))]
        model["byte_fallback"] = True
    if not unk:
        model["unk_id"] = None
    return Tokenizer.from_str(json.dumps(doc))


#: T5's special pieces: <pad> 0, </s> 1, <unk> 2, no <s>
T5_IDS = dict(pad_id=0, eos_id=1, unk_id=2, bos_id=-1)

BUILDERS = {
    "t5": lambda: converted(spm_model(**T5_IDS), "t5"),
    "t5-first": lambda: converted(spm_model(**T5_IDS), "t5", legacy=False),
    "albert": lambda: converted(spm_model(control_symbols=("[CLS]", "[SEP]", "[MASK]"), user_defined_symbols=("qu",)),
                                "albert"),
    "xlnet": lambda: converted(spm_model(control_symbols=("<sep>", "<cls>")), "xlnet", whitespace_split=True),
    "spm-bytes": lambda: converted(spm_model(byte_fallback=True), "spm", byte_fallback=True),
    "spm-proto": lambda: converted(spm_model(user_defined_symbols=("qu", "<sep>")), "proto"),
    "trained": trained,
    "trained-bytes": lambda: trained(byte_fallback=True),
    "trained-some-bytes": lambda: trained(byte_fallback=True, byte_pieces=range(0x20, 0xC4)),
}


# -- WordLevel ---------------------------------------------------------------------------------

def _wordlevel(pre_tokenizer, normalizer, unk: str, special: list[str]) -> Tokenizer:
    tok = Tokenizer(models.WordLevel(unk_token=unk))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.train_from_iterator(train_lines(), trainers.WordLevelTrainer(vocab_size=3000, special_tokens=special,
                                                                     show_progress=False))
    return tok


def wordlevel_bert() -> Tokenizer:
    tok = _wordlevel(pre_tokenizers.BertPreTokenizer(), normalizers.BertNormalizer(), "[UNK]", ["[UNK]", "[CLS]", "[SEP]"])
    tok.post_processor = processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                                       special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
    return tok


def wordlevel_metaspace() -> Tokenizer:
    tok = _wordlevel(pre_tokenizers.Metaspace(), normalizers.NFKC(), "<unk>", ["<unk>", "</s>"])
    tok.decoder = decoders.Metaspace()
    return tok


WORDLEVEL_BUILDERS = {"bert-like": wordlevel_bert, "metaspace": wordlevel_metaspace}
