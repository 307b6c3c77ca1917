"""The MIDI corpus of ``python -m experiments midi`` (experiments/datasets/midi_corpus.py):
which pieces of music21's corpus it takes (counted, with their collections), and the pieces
written as MIDI by music21 into a data cache in tmp_path (a few pieces: writing is slow)."""

import os

import pytest

from experiments.datasets import DataNotInstalledError
from experiments.datasets import midi_corpus
from experiments.datasets.sources import ARCHIVES, CACHE_ENV


def _selected():
    try:
        return midi_corpus.select_pieces()
    except DataNotInstalledError as error:
        if os.environ.get("UBPE_ALLOW_MISSING_DATA") == "1":
            pytest.skip(str(error))
        pytest.fail(f"{error} (or set UBPE_ALLOW_MISSING_DATA=1 to skip)")


def test_the_corpus_takes_hundreds_of_pieces_in_collections():
    pieces = _selected()
    by_source = {}
    for piece in pieces:
        by_source.setdefault(piece.name.split("/")[0], []).append(piece)
    assert {k: len(v) for k, v in by_source.items()} == {"bach": 200, "monteverdi": 49, "palestrina": 120}
    assert len({p.name for p in pieces}) == len(pieces) == 369
    collections = {p.collection for p in pieces}
    assert {"bach chorales", "monteverdi book 3", "monteverdi book 4", "monteverdi book 5"} <= collections
    masses = {c for c in collections if c.startswith("palestrina: ")}
    assert len(masses) == 10  # whole masses: no mass is cut by the cap
    assert all(p.member.endswith(".krn") for p in by_source["palestrina"])
    assert "bwv59.3" not in {p.name.split("/")[1] for p in by_source["bach"]}  # = bwv175.7


def test_pieces_are_written_as_midi_by_music21(tmp_path, monkeypatch):
    pytest.importorskip("music21", reason="the [experiments] extra (music21)")
    symusic = pytest.importorskip("symusic")
    wheel = ARCHIVES["music21"].path()
    if not wheel.is_file():
        pytest.skip(f"{wheel} is not installed") if os.environ.get("UBPE_ALLOW_MISSING_DATA") == "1" \
            else pytest.fail(f"{wheel} is missing: run experiments/install_data.sh")
    (tmp_path / "pypi").mkdir()
    (tmp_path / "pypi" / wheel.name).symlink_to(wheel)
    monkeypatch.setenv(CACHE_ENV, str(tmp_path))
    monkeypatch.setenv("HOME", str(tmp_path))  # music21 may write its settings there
    monkeypatch.setattr(midi_corpus, "MAX_PIECES", {"bach": 2, "monteverdi": 1, "palestrina": 0})
    folder, rows = midi_corpus.midi_corpus(jobs=1)
    assert folder.parent == tmp_path / "derived"
    assert [r["name"] for r in rows] == ["bach/bwv1.6", "bach/bwv10.7", "monteverdi/madrigal.3.1"]
    for row in rows:
        assert row["error"] is None
        score = symusic.Score(str(folder / row["file"]))
        notes = sum(len(track.notes) for track in score.tracks)
        # SATB (bwv1.6 adds a horn doubling the soprano); Monteverdi's five voices
        parts = 4 if row["name"].startswith("bach") else 5
        assert len([t for t in score.tracks if len(t.notes)]) >= parts and notes > 20
    # read back from the cache, not written again
    again_folder, again = midi_corpus.midi_corpus(jobs=1)
    assert again == rows and again_folder == folder
