"""``python -m experiments midi`` (experiments/midi.py) end to end into tmp_path: music21's MIDI
files through the runner, MidiTok's own BPE as a row, its section in the report."""

import pandas as pd
import pytest

from experiments.datasets import DataNotInstalledError


def test_the_midi_example_writes_miditok_rows(tmp_path):
    pytest.importorskip("miditok", reason="the midi extra (miditok)")
    from experiments import midi

    try:
        assert midi.main(["--results", str(tmp_path), "--cache", str(tmp_path / "cache")]) == 0
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    out = tmp_path / "midi"
    rows = pd.read_csv(out / "miditok.csv", dtype={"size": str})
    assert set(rows["size"]) == set(midi.SIZES) and (rows[midi.MIDITOK] > 0).all()
    documents = pd.read_csv(out / "documents.csv", dtype={"size": str})
    # the same held-out files, and ubpe's counts are the runner's
    assert set(rows["file"]) == set(documents["unit"])
    first = rows.iloc[0]
    mine = documents[(documents["unit"] == first["file"]) & (documents["size"] == first["size"])
                     & (documents["encoder"] == "classic:classic")]
    assert first["classic:classic"] == mine["n_tokens"].sum()
    assert "## MidiTok's own BPE" in (out / "README.md").read_text()
