"""Every vocabulary family in an experiment's grid runs every metric correctly (issue 34.1):
GGUF (BPE and SPM types), sentencepiece ``.model`` (BPE and unigram, whose 3 control ids sit
before the pieces), tokenizer.json and ``.tiktoken``. Each family's cells are checked against
the model's own encodings (token counts, vocabulary size, lossless), its segmentations against
boundaries found by decoding every prefix (an oracle independent of `char_runs`), and its
comparisons are labelled as at the file's own size, never ranked with the fitted ones."""

from __future__ import annotations

import io
import json

import numpy as np
import pandas as pd
import pytest

import ubpe
from ubpe.lab import decisions as D
from ubpe.lab import metrics as M
from ubpe.lab.units import char_runs, decodes_to, encode_loaded, id_bytes

WORDS = ("the cat sat on a mat and a dog ran to the red barn while rain fell over the quiet town "
         "naïve café déjà vu").split()


def _texts(n: int, seed: int) -> list[str]:
    rng = np.random.default_rng(seed)
    return [" ".join(rng.choice(WORDS, 7)) for _ in range(n)]


def _sentencepiece(tmp_path, model_type: str):
    spm = pytest.importorskip("sentencepiece")
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(_texts(400, 1)), model_writer=out,
                                   model_type=model_type, vocab_size=45, minloglevel=2, hard_vocab_limit=False,
                                   character_coverage=1.0, num_threads=1)
    path = tmp_path / f"{model_type}.model"
    path.write_bytes(out.getvalue())
    return path


def _tokenizer_json(tmp_path):
    pytest.importorskip("tokenizers")
    from hf_builders import gpt2

    path = tmp_path / "tokenizer.json"
    gpt2().save(str(path))
    return path


def _gguf(name):
    from vocab_corpora import vocab_path

    return vocab_path(name)


def _tiktoken():
    from vocab_corpora import whisper_file

    return whisper_file("gpt2.tiktoken")


FAMILIES = {
    "gguf-bpe": lambda tmp_path: _gguf("llama-bpe"),
    "gguf-spm": lambda tmp_path: _gguf("llama-spm"),
    "sentencepiece-bpe": lambda tmp_path: _sentencepiece(tmp_path, "bpe"),
    "sentencepiece-unigram": lambda tmp_path: _sentencepiece(tmp_path, "unigram"),
    "tokenizer.json": _tokenizer_json,
    "tiktoken": lambda tmp_path: _tiktoken(),
}


def _oracle_runs(tok, seq, doc) -> list[int]:
    """Characters of ``doc`` per token, from the lengths of the decoded prefixes (a dummy
    prefix space the document lacks taken off; tokens that add no character dropped)."""
    lengths = [len(tok.decode(list(seq[:k]))) for k in range(1, len(seq) + 1)]
    extra = lengths[-1] - len(doc) if lengths else 0
    ends = sorted({n - extra for n in lengths if n - extra > 0})
    return [b - a for a, b in zip([0, *ends[:-1]], ends)]


@pytest.mark.parametrize("family", list(FAMILIES))
def test_segmentations_match_the_decoded_prefixes(family, tmp_path):
    tok = ubpe.load(FAMILIES[family](tmp_path))
    docs = _texts(12, 2) + ["déjà vu", "a  b", "x"]
    raw = encode_loaded(tok, docs, "native", {})
    pieces = id_bytes(tok)
    assert len(pieces) == tok.n_vocab  # every id, the control ones too
    for doc, key in zip(docs, raw["segmentation"]):
        seq = tok.encode_with(doc, None)[0][0]
        if not decodes_to(tok, seq, doc):  # a lossy encoding (an unknown piece) has no boundaries to compare
            continue
        assert M.runs_key(_oracle_runs(tok, seq, doc)) == int(key), (family, doc)
        assert sum(char_runs(seq, doc, pieces)) == len(doc)


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_file_vocabulary_of_each_family_runs_every_metric(family, tmp_path):
    from ubpe.lab import runner
    from ubpe.lab.config import load_config

    path = FAMILIES[family](tmp_path)
    (tmp_path / "notes").mkdir()
    for i, text in enumerate(_texts(30, 3)):
        (tmp_path / "notes" / f"{i}.txt").write_text(text, encoding="utf-8")
    config_file = tmp_path / "exp.toml"
    config_file.write_text(
        '[grid]\nvocab_sizes = ["+16"]\n[encoders]\nrun = ["classic:classic", "universal:tfidf"]\n'
        'baseline = "classic:classic"\n'
        '[datasets.notes]\npath = "notes"\nformat = "text"\ndocument = "file"\n'
        f'[vocabularies.m]\npath = "{path.as_posix()}"\nencoders = ["native", "fewest"]\n'
        '[[comparisons]]\nquestion = "q"\na = "m:native"\nb = "classic:classic"\n'
        '[[comparisons]]\nquestion = "p"\na = "universal:tfidf"\nb = "classic:classic"\nprimary = true\n')
    config = load_config(config_file)
    out = runner.run_experiment(config, jobs=1, progress=False, cache_dir=tmp_path / "cache",
                                results_dir=tmp_path / "out")
    model = ubpe.load(path)
    heldout = runner.load_split("notes", "heldout", max_symbols=None, options=config.resolved_options(config.datasets[0]))
    metrics = pd.read_csv(out / "metrics.csv").set_index("encoder")
    own = [model.encode_with(doc, None)[0][0] for doc in heldout.docs]
    assert metrics.loc["m:native", "corpus_tokens"] == sum(len(seq) for seq in own)
    assert metrics.loc["m:native", "vocab_size"] == model.n_vocab
    assert metrics.loc["m:fewest", "corpus_tokens"] <= metrics.loc["m:native", "corpus_tokens"]
    assert metrics.loc[["m:native", "m:fewest"], "lossless"].all()
    assert metrics["differs_from_baseline"].between(0, 1).all()
    comparisons = pd.read_csv(out / "comparisons.csv").set_index("a")
    assert comparisons.loc["m:native", "sizes"] == "own size (file vocabulary)"
    assert comparisons.loc["m:native", "family"] == "exploratory"
    assert comparisons.loc["universal:tfidf", "family"] == "primary"
    assert comparisons.loc["universal:tfidf", "sizes"] == "equal"  # fitted at equal size by default
    decisions = pd.read_csv(out / "decisions.csv").set_index("encoder")
    assert decisions.loc["m:native", "decision"] == D.DECISION_FILE
    info = json.loads((out / "run.json").read_text())
    assert info["run"]["cells_total"] == info["run"]["cells_computed"] + info["run"]["cells_cached"] + info["run"]["cells_failed"]
