"""sentencepiece ``.model`` files: ids equal to sentencepiece's own on held-out real text.

Models are trained here with ``SentencePieceTrainer`` on the train split of the experiment
datasets (prose and the multilingual UDHR), BPE and unigram, with and without byte fallback,
with sentencepiece's default ``nmt_nfkc`` normalization and with ``identity``; each is compared
line by line with ``SentencePieceProcessor.encode`` on held-out lines of every script.
"""

from __future__ import annotations

import io

import numpy as np
import pytest

from ubpe.errors import ModelFormatError, UBPEError
from ubpe.io import sentencepiece as spm_io

from vocab_corpora import text_lines

spm = pytest.importorskip("sentencepiece")

CONFIGS = {
    "bpe": dict(model_type="bpe", vocab_size=1500),
    "bpe-bytes": dict(model_type="bpe", vocab_size=1500, byte_fallback=True),
    "bpe-identity": dict(model_type="bpe", vocab_size=1200, normalization_rule_name="identity",
                         remove_extra_whitespaces=False),
    "unigram": dict(model_type="unigram", vocab_size=1500),
    "unigram-bytes": dict(model_type="unigram", vocab_size=1500, byte_fallback=True,
                          user_defined_symbols=["<sep>", "qu"]),
    "unigram-identity": dict(model_type="unigram", vocab_size=1200, normalization_rule_name="identity",
                             add_dummy_prefix=False),
}
_MODELS: dict[str, bytes] = {}


def _train_lines() -> list[str]:
    from experiments.datasets import load
    from experiments.datasets._base import DataNotInstalledError

    try:
        docs = load("shakespeare", "train", max_symbols=400_000).docs + load("udhr", "train").docs
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    return [line for doc in docs for line in doc.split("\n") if line.strip()]


def _model(config: str) -> bytes:
    if config not in _MODELS:
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(_train_lines()), model_writer=out, character_coverage=0.995,
            num_threads=1, minloglevel=2, **CONFIGS[config])
        _MODELS[config] = out.getvalue()
    return _MODELS[config]


def _heldout() -> list[str]:
    lines = text_lines(limit=3000) + text_lines("udhr", limit=3000)
    return lines + ["  leading and   inner   spaces  ", "ｆｕｌｌ　ｗｉｄｔｈ ①②", "<sep> qu<sep>",
                    "emoji 🦙🦙 and \u0000 nul", "", "   "]


@pytest.mark.parametrize("config", list(CONFIGS))
def test_ids_equal_sentencepiece(config, tmp_path):
    data = _model(config)
    path = tmp_path / "m.model"
    path.write_bytes(data)
    tok = spm_io.read(path)
    reference = spm.SentencePieceProcessor(model_proto=data)
    assert tok.variant == f"spm:{CONFIGS[config]['model_type']}"
    lines = _heldout()
    differ = [(line, reference.encode(line), tok.encode(line)) for line in lines
              if reference.encode(line) != tok.encode(line)]
    assert not differ, f"{len(differ)}/{len(lines)} lines differ, first: {differ[0]!r}"
    for line in lines[:300]:
        assert tok.decode(tok.encode(line)) == reference.decode(reference.encode(line))


@pytest.mark.parametrize("config", ["bpe", "unigram-bytes"])
@pytest.mark.parametrize("encoder", ["fewest", "longest_prefix", "tfidf"])
def test_ubpe_encoders_are_lossless_on_spm_models(config, encoder):
    tok = spm_io.from_bytes(_model(config))
    native_lengths, lengths = 0, 0
    for line in _heldout()[:200]:
        (ids, _), = tok.encode_with(line, encoder)
        assert tok.decode(ids) == tok.decode(tok.encode(line))
        native_lengths += len(tok.encode(line))
        lengths += len(ids)
    if encoder == "fewest":
        assert lengths <= native_lengths


def test_additive_with_unigram_scores_matches_viterbi():
    """A unigram model is the additive encoder with the pieces' log-probabilities."""
    tok = spm_io.from_bytes(_model("unigram"))
    vocabulary, vocab_to_model, base_expansion = tok._vocabulary_parts()
    weights = np.concatenate([
        [tok.scores[e[0]] if len(e) == 1 else -1e6 for e in base_expansion],
        tok.scores[vocab_to_model]])
    same = total = 0
    for line in text_lines(limit=300):
        (ids, _), = tok.encode_with(line, "additive", weights=weights)
        total += 1
        same += ids == tok.encode(line)
    assert same >= 0.99 * total  # float64 sums may break float32 near-ties the other way


def test_detect_and_bad_input(tmp_path):
    data = _model("bpe")
    assert spm_io.detect(data[:32])
    assert not spm_io.detect(b"GGUF\x03\x00\x00\x00")
    assert not spm_io.detect(b"\n \n{\"model\": 1}")  # a JSON file after blank lines
    assert not spm_io.detect(b"\n\x05\n\x09<unk>")  # a piece longer than its entry
    foreign = tmp_path / "foreign.model"
    foreign.write_bytes(b"\x08\x96\x01\x12\x04abcd")  # a valid protobuf, not a ModelProto
    with pytest.raises(ModelFormatError, match="not a sentencepiece model"):
        spm_io.read(foreign)
    garbage = tmp_path / "garbage.model"
    garbage.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError, match="not a sentencepiece model"):
        spm_io.read(garbage)
    with pytest.raises(ModelFormatError, match="cannot read"):
        spm_io.read(tmp_path / "missing.model")


def test_word_models_are_refused_by_name():
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(_train_lines()[:3000]), model_writer=out,
                                   model_type="word", vocab_size=300, minloglevel=2)
    with pytest.raises(ModelFormatError, match="'word' is not supported; supported: unigram, bpe"):
        spm_io.from_bytes(out.getvalue())


def test_read_only():
    with pytest.raises(UBPEError):
        spm_io.from_bytes(_model("bpe")).save("x")
