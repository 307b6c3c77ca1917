"""What the scores of an imported model mean, in the API and in ``ubpe compare`` / ``view``
(issue 26, point 7).

A unigram model's scores are its log-probabilities (checked against sentencepiece's own n-best
scores), and ``sample`` / ``additive`` default to them; a BPE model read from a file has no
weights: its scores are ``None`` (``-`` on the command line, with a line saying how to give it
some), ``sample`` is refused naming ``fit_weights``, and after ``fit_weights`` the scores are
ubpe's tf-idf (the native encoding scores as any encoder's with the same tokens). ``compare
--width`` widens or narrows the segmentation column.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import ubpe
from ubpe.cli import main
from ubpe.errors import InvalidParameterError
from ubpe.io import sentencepiece as spm_io

from test_sentencepiece import _model
from vocab_corpora import text_lines, vocab_path

spm = pytest.importorskip("sentencepiece")
TEXT = "The quick brown fox jumps over the lazy dog, it's a test of the tokenizer"
REL = 1e-6  # sentencepiece adds float32 scores, ubpe float64


@pytest.fixture(scope="module")
def unigram():
    data = _model("unigram")
    return spm_io.from_bytes(data), spm.SentencePieceProcessor(model_proto=data)


@pytest.fixture(scope="module")
def corpus_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("corpus") / "corpus.txt"
    path.write_text("\n".join(text_lines(split="train", limit=2000)), encoding="utf-8")
    return path


def gpt2():
    return ubpe.load(vocab_path("gpt-2"))


# -- unigram: log-probabilities --------------------------------------------------------------------

def test_unigram_scores_are_sentencepieces_log_probabilities(unigram):
    tok, sp = unigram
    assert tok.score_kind() == "log-prob"
    for line in text_lines(limit=60) + ["zq€ unknown ☃ characters"]:
        nbest = sp.nbest_encode_as_proto(line, nbest_size=3).nbests
        for entry in nbest:
            ids = [piece.id for piece in entry.pieces]
            ((_, score),) = tok.scored([(ids, 0.0)])
            assert score == pytest.approx(entry.score, rel=REL, abs=1e-4)
        assert tok.log_probability(tok.encode(line)) == pytest.approx(nbest[0].score, rel=REL, abs=1e-4)


def test_unigram_sample_and_additive_default_to_the_log_probabilities(unigram):
    tok, _ = unigram
    weights = tok.unigram_weights()
    for line in text_lines(limit=20):
        assert tok.encode_with(line, "sample", top_n=5, seed=3) == \
            tok.encode_with(line, "sample", top_n=5, seed=3, weights=weights)
        assert tok.encode_with(line, "additive") == tok.encode_with(line, "additive", weights=weights)


# -- BPE: no weights until fit_weights ----------------------------------------------------------------

def test_a_bpe_model_has_no_scores_and_refuses_to_sample_until_fitted(corpus_file):
    tok = gpt2()
    assert tok.score_kind() is None
    assert tok.scored(tok.encode_with(TEXT, "fewest")) == [(tok.encode(TEXT), None)]
    with pytest.raises(InvalidParameterError, match=r"fit_weights.*--fit-weights.*dropout"):
        tok.encode_with(TEXT, "sample")
    with pytest.raises(InvalidParameterError, match="no log-probabilities"):
        tok.log_probability([1, 2])
    assert tok.encode_with(TEXT, "sample", weights=np.zeros(len(tok.vocabulary)))  # given weights: runs

    tok.fit_weights(corpus_file.read_text(encoding="utf-8").splitlines())
    assert tok.score_kind() == "tf-idf"
    (native, native_score), = tok.encode_with(TEXT)
    (ranked, ranked_score), = tok.encode_with(TEXT, "ranked")
    assert native == ranked and native_score == pytest.approx(ranked_score) and native_score > 0
    assert tok.scored([(native, native_score)]) == [(native, native_score)]
    assert len(tok.encode_with(TEXT, "sample", top_n=3)) == 3


# -- the command line -------------------------------------------------------------------------------

def _compare(capsys, *args):
    assert main(["compare", *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_compare_says_a_bpe_model_has_no_weights_and_fits_them(capsys, corpus_file):
    path = str(vocab_path("gpt-2"))
    lines = _compare(capsys, path, "--text", TEXT)
    rows = [line.split() for line in lines[2:-1]]
    assert {row[3] for row in rows} == {"-"} and "sample" not in {row[0] for row in rows}
    assert "no weights" in lines[-1] and "--fit-weights" in lines[-1]

    lines = _compare(capsys, path, "--text", TEXT, "--fit-weights", str(corpus_file))
    scores = {line.split()[0]: float(line.split()[3]) for line in lines[2:]}
    assert "sample" in scores and scores["native"] == scores["ranked"] > 0
    assert not any("no weights" in line for line in lines)

    out = _compare(capsys, path, "--text", TEXT, "--encoders", "native", "--format", "json")
    assert json.loads(out[0])["score"] is None and json.loads(out[0])["score_kind"] is None


def test_compare_shows_unigram_log_probabilities(capsys, unigram, tmp_path):
    tok, sp = unigram
    path = tmp_path / "unigram.model"
    path.write_bytes(_model("unigram"))
    line = text_lines(limit=1)[0]
    lines = _compare(capsys, str(path), "--text", line, "--encoders", "native,fewest")
    best = sp.nbest_encode_as_proto(line, nbest_size=2).nbests[0]  # (nbest_size=1 reports no score)
    assert float(lines[2].split()[3]) == pytest.approx(best.score, abs=1e-4)
    assert lines[-1].startswith("score: the encoding's log-probability")


@pytest.mark.parametrize("width", [0, 20, 200])
def test_compare_width_cuts_the_segmentation_column(capsys, width):
    path = str(vocab_path("gpt-2"))
    long_text = TEXT * 3
    lines = _compare(capsys, path, "--text", long_text, "--encoders", "native", "--width", str(width))
    cell = lines[2].split("  ")[-1].strip()
    full = "|".join(b.decode() for b in gpt2().pieces(gpt2().encode(long_text)))
    if width == 0 or width >= len(full):
        assert cell == full
    else:
        assert len(cell) == width and cell.endswith("…") and full.startswith(cell[:-1])


def test_compare_width_must_not_be_negative(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["compare", str(vocab_path("gpt-2")), "--text", "x", "--width", "-1"])
    assert exit_.value.code == 2 and "at least 0" in capsys.readouterr().err


def test_view_scores_are_dashes_without_weights_and_numbers_with(capsys, corpus_file):
    path = str(vocab_path("gpt-2"))
    args = ["view", path, "--no-color", "--text", "the lazy dog", "--encoder", "fewest", "--top-n", "2"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    assert [line.split()[1] for line in out.strip().splitlines()] == ["-", "-"] and "--fit-weights" in err
    assert main([*args, "--fit-weights", str(corpus_file)]) == 0
    out, err = capsys.readouterr()
    assert all(float(line.split()[1]) > 0 for line in out.strip().splitlines()) and not err
    assert main(["view", path, "--no-color", "--text", "the", "--encoder", "sample"]) == 1
    assert "fit_weights" in capsys.readouterr().err
