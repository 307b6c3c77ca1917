"""Issue 34's scenario, end to end through ``ubpe experiment`` with the defaults: a config with a
FASTA file, a CSV column, a MIDI folder holding one file that is not MIDI, a text folder, and a
sentencepiece ``.model`` plus a GGUF in the grid runs to the end; the fitted vocabularies are
at equal sizes, the caps and the skipped file are reported, and every dataset's report names
the best encoder or the tied set with intervals. A misspelt encoder exits 2 with a suggestion.
(`.ci/wheel_check.sh` runs this layer from the wheel, with no repository around ubpe.)"""

from __future__ import annotations

import io
import json
import struct

import numpy as np
import pandas as pd
import pytest

from ubpe.cli import main

WORDS = ("the cat sat on a mat and a dog ran to the red barn while rain fell over the quiet town "
         "every morning the baker opened the shop").split()


def _midi(pitches: list[int]) -> bytes:
    """A Standard MIDI File: one track, the pitches as consecutive quarter notes."""
    track = b"".join(b"\x00\x90" + bytes([p]) + b"\x50\x83\x60\x80" + bytes([p]) + b"\x00" for p in pitches)
    track += b"\x00\xff\x2f\x00"
    return b"MThd" + struct.pack(">IHHH", 6, 1, 1, 480) + b"MTrk" + struct.pack(">I", len(track)) + track


def _files(tmp_path) -> None:
    rng = np.random.default_rng(7)
    (tmp_path / "notes").mkdir()
    for i in range(40):
        (tmp_path / "notes" / f"{i:02d}.txt").write_text(" ".join(rng.choice(WORDS, 40)) + "\n", encoding="utf-8")
    (tmp_path / "series.csv").write_text(
        "id,values\n" + "\n".join(f"{i},{' '.join(map(str, rng.integers(0, 8, 60)))}" for i in range(40)) + "\n")
    (tmp_path / "genome.fa").write_text(
        "".join(f">r{i}\n{''.join(rng.choice(list('ACGT'), 300))}\n" for i in range(100)), encoding="ascii")
    (tmp_path / "songs").mkdir()
    for i in range(80):
        (tmp_path / "songs" / f"song{i:02d}.mid").write_bytes(_midi(list(rng.integers(55, 80, 24))))
    (tmp_path / "songs" / "cover.mid").write_bytes(b"\x89PNG\r\n\x1a\n not a MIDI file")
    spm = pytest.importorskip("sentencepiece")
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(" ".join(rng.choice(WORDS, 12)) for _ in range(400)), model_writer=model,
        model_type="bpe", vocab_size=60, minloglevel=2, hard_vocab_limit=False, character_coverage=1.0,
        num_threads=1)
    (tmp_path / "words.model").write_bytes(model.getvalue())


CONFIG = """
[grid]
vocab_sizes = ["+32"]
[datasets.notes]
path = "notes/"
format = "text"
[datasets.sensors]
path = "series.csv"
format = "csv"
column = "values"
[datasets.genome]
path = "genome.fa"
format = "fasta"
unit = "record"
[datasets.songs]
path = "songs/"
format = "midi"
[vocabularies.words]
path = "words.model"
encoders = ["native", "fewest"]
[vocabularies.llama]
path = "{gguf}"
encoders = ["native"]
"""


def test_a_users_files_run_to_the_end_with_the_defaults(tmp_path, monkeypatch, capsys):
    pytest.importorskip("pyfaidx", reason="the fasta extra (pyfaidx)")
    pytest.importorskip("miditok", reason="the midi extra (miditok)")
    from vocab_corpora import vocab_path

    _files(tmp_path)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.toml").write_text(CONFIG.format(gguf=vocab_path("llama-spm")))
    status = main(["experiment", "mine.toml", "--results", "out", "--cache", "cache", "--jobs", "1",
                   "--no-progress"])
    printed = capsys.readouterr()
    assert status == 0, printed.err
    out = tmp_path / "out" / "mine"
    run = json.loads((out / "run.json").read_text())
    # the skipped file is printed, recorded and in the report; the caps are recorded
    assert "cover.mid" in printed.out + printed.err
    report = (out / "README.md").read_text()
    assert "cover.mid" in report
    assert run["caps"]
    # equal fitted sizes per dataset and size: every fitted vocabulary has the classic fit's size
    metrics = pd.read_csv(out / "metrics.csv")
    fitted = metrics[metrics["encoder"].str.startswith(("universal:", "classic:"))]
    for _, group in fitted.groupby(["dataset", "size", "n_candidates"]):
        assert group["vocab_size"].nunique() == 1, group[["encoder", "vocab_size"]]
    # the file vocabularies ran on the datasets of characters (text, the genome's letters), not on
    # the integer series or the MIDI ids, at their own size
    files = metrics[~metrics.index.isin(fitted.index)]
    assert set(files["dataset"]) == {"notes", "genome"}
    lossless = dict(zip(files["dataset"] + " " + files["encoder"], files["lossless"]))
    assert lossless["notes llama:native"] and lossless["genome llama:native"]  # byte fallback
    # the small sentencepiece model has no piece for a genome's letters, and normalises the
    # notes' whitespace: reported lossy, not hidden
    assert not lossless["genome words:native"] and not lossless["notes words:native"]
    decisions = pd.read_csv(out / "decisions.csv")
    assert (decisions.loc[decisions["encoder"].isin(files["encoder"]), "decision"]
            == "own size (file vocabulary): not ranked").all()
    # every dataset: a best encoder (or too few units), intervals, and the report says so
    assert set(decisions["dataset"]) == {"notes", "sensors", "genome", "songs"}
    for dataset, part in decisions.groupby("dataset"):
        ranked = part[part["decision"] != "own size (file vocabulary): not ranked"]
        assert (ranked["decision"] == "best").sum() == 1, (dataset, ranked[["encoder", "decision"]])
        assert (ranked["rank_low"] <= ranked["rank"]).all() and (ranked["rank"] <= ranked["rank_high"]).all()
        assert ranked["ci_low"].notna().all() and ranked["ci_high"].notna().all()
        best = ranked.loc[ranked["decision"] == "best", "encoder"].iloc[0]
        assert f"`{best}`" in report
    assert "not separable from the best" in report or "tied" in report


@pytest.mark.parametrize("encoder, hint", [("classic:bpe", "(registered: additive, classic, "),
                                           ("universal:tfdif", "(did you mean tfidf?)")])
def test_a_misspelt_encoder_exits_2_with_a_suggestion(tmp_path, monkeypatch, capsys, encoder, hint):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("\n".join(" ".join(WORDS[i:] + WORDS[:i]) for i in range(20)))
    (tmp_path / "mine.toml").write_text(f'[encoders]\nrun = ["{encoder}"]\n'
                                        '[datasets.notes]\npath = "notes.txt"\nformat = "text"\n')
    assert main(["experiment", "mine.toml", "--cache", "cache", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ubpe: error: ") and len(err.strip().splitlines()) == 1
    assert f"encoders.run '{encoder}'" in err and hint in err
