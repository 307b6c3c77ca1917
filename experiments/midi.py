"""MIDI files tokenised with MidiTok's REMI, then MidiTok's own BPE against ubpe's universal and
classic vocabularies and encoders: ``python -m experiments midi`` -> ``results/midi/``.

The files are the real MIDI files music21 ships for its MIDI tests (``music21/midi/...`` in
the pinned music21 wheel that ``experiments/install_data.sh`` downloads), read as a dataset of
the user's files would be (``format = "midi"``, a document and a unit per file). The runner
fits ubpe's vocabularies on the training files' REMI ids and encodes the held-out files; MidiTok
then learns its BPE (HF tokenizers under the hood) on the same training files with as many
merged tokens as ubpe's classic vocabulary of each setting ended with, and encodes the same
held-out files. Per held-out file: tokens per note of every tokenisation; per setting: MidiTok's
BPE against each ubpe encoder, paired per file (`ubpe.lab.stats`).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import zipfile
from pathlib import Path

from experiments import CACHE_DIR, RESULTS_DIR

RESULTS = RESULTS_DIR / "midi"
SIZES = ("+64", "+256")
ENCODERS = ("universal:tfidf", "universal:fewest", "classic:classic", "classic:ranked")
MIDITOK = "miditok:bpe"
MIDI_SUFFIXES = (".mid", ".midi")
FOLDER = "music21-midi"
ALPHA = 0.05


def extract_midi(into: Path) -> list[Path]:
    """The MIDI files of the pinned music21 wheel, written under ``into/music21-midi``."""
    from experiments.datasets.sources import archive_path

    folder = into / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(archive_path("music21")) as wheel:
        for name in wheel.namelist():
            if name.lower().endswith(MIDI_SUFFIXES):
                (folder / Path(name).name).write_bytes(wheel.read(name))
    return sorted(folder.iterdir())


def load(name: str, split: str, **kwargs):
    """A split of the ``midi`` dataset as the experiment loads it, the files extracted anew
    (what ``experiments.freshness.check`` reloads ``results/midi`` with)."""
    from ubpe.lab.datasets.files import load_files

    with tempfile.TemporaryDirectory() as scratch:
        extract_midi(Path(scratch))
        options = {**kwargs, "path": str(Path(scratch) / kwargs.get("path", FOLDER))}
        return load_files(name, split, **options)


def config(folder: Path):
    from dataclasses import replace

    from ubpe.lab.config import parse_config

    parsed = parse_config({
        "name": "midi",
        "description": "music21's MIDI test files as MidiTok REMI tokens: ubpe's vocabularies and "
                       "encoders, and MidiTok's own BPE at the classic vocabulary's number of merges",
        "grid": {"vocab_sizes": list(SIZES), "equal_size": True},
        "encoders": {"run": list(ENCODERS), "baseline": "classic:classic"},
        "comparisons": [{"question": "Does universal BPE (tf-idf) give shorter encodings than classic BPE?",
                         "a": "universal:tfidf", "b": "classic:classic"}],
        "datasets": {"midi": {"path": FOLDER, "format": "midi", "unit": "file",
                              "max_symbols": 10_000_000, "heldout_max_symbols": 10_000_000}},
    })
    return replace(parsed, folder=str(folder), source="experiments/midi.py")


def miditok_rows(out: Path, folder: Path) -> list[dict]:
    """Per setting and held-out file: notes, REMI tokens, and each tokenisation's tokens."""
    import pandas as pd
    import symusic

    from ubpe.lab.datasets.files import midi_tokenizer

    metrics = pd.read_csv(out / "metrics.csv", dtype={"size": str})
    documents = pd.read_csv(out / "documents.csv", dtype={"size": str})
    files = {path.name: path for path in (folder / FOLDER).iterdir()}
    heldout = list(dict.fromkeys(documents["unit"]))
    train = [files[name] for name in sorted(files) if name not in heldout]
    rows = []
    for size in SIZES:
        classic = metrics[(metrics["size"] == size) & (metrics["encoder"] == "classic:classic")].iloc[0]
        merges = int(classic["vocab_size"]) - int(classic["alphabet_size"])
        tokenizer = midi_tokenizer()
        base = len(tokenizer)
        tokenizer.train(vocab_size=base + merges, model="BPE", files_paths=train)
        cells = documents[documents["size"] == size]
        for name in heldout:
            sequence = tokenizer.encode(files[name])
            sequence = sequence[0] if isinstance(sequence, list) else sequence
            row = {"size": size, "file": name, "merges": merges, "miditok_vocab_size": len(tokenizer),
                   "n_notes": sum(len(track.notes) for track in symusic.Score(str(files[name])).tracks),
                   MIDITOK: len(sequence.ids)}
            for encoder in ENCODERS:
                mine = cells[(cells["unit"] == name) & (cells["encoder"] == encoder)]
                row["n_remi"] = int(mine["n_symbols"].sum())
                row[encoder] = int(mine["n_tokens"].sum())
            rows.append(row)
    return rows


def section(rows: list[dict], n_files: int) -> str:
    """The report's MidiTok section: tokens per note, then MidiTok's BPE against each encoder."""
    import pandas as pd

    from ubpe.lab import stats as S
    from ubpe.lab.formatting import _table

    table = pd.DataFrame(rows)
    table.attrs["n_files"] = n_files
    lines = ["", "## MidiTok's own BPE", "",
             "MidiTok (REMI, all tracks in one stream) learns its BPE with HF tokenizers on the same "
             "training files, with as many merged tokens as ubpe's classic vocabulary of the setting "
             "ended with (`merges`), and encodes the same held-out files. Tokens per note (lower is "
             "shorter), summed over the held-out files:", ""]
    summary = []
    for size, group in table.groupby("size", sort=False):
        notes = group["n_notes"].sum()
        summary.append({"size": size, "merges": int(group["merges"].iloc[0]),
                        "files": len(group), "notes": int(notes),
                        "REMI (no BPE)": round(group["n_remi"].sum() / notes, 3),
                        **{f"`{c}`": round(group[c].sum() / notes, 3) for c in (MIDITOK, *ENCODERS)}})
    lines += [_table(pd.DataFrame(summary)), "",
              "Paired per held-out file, `miditok:bpe` against each ubpe tokenisation (ratio of token "
              "counts; a file is the unit):", ""]
    tests = []
    for size, group in table.groupby("size", sort=False):
        for encoder in ENCODERS:
            result = S.unit_comparison(group[MIDITOK].to_numpy(), group[encoder].to_numpy())
            tests.append({"size": size, "b": f"`{encoder}`", "files": result["n_units"],
                          "corpus ratio a / b": round(group[MIDITOK].sum() / group[encoder].sum(), 3),
                          "files a shorter / longer": f"{int((group[MIDITOK] < group[encoder]).sum())} / "
                                                      f"{int((group[MIDITOK] > group[encoder]).sum())}",
                          "p_value": result["p_value"]})
    frame = pd.DataFrame(tests)
    frame["p (Wilcoxon)"] = frame["p_value"].map(lambda p: "too few files" if p != p else f"{p:.4f}")
    frame["p (Holm, these tests)"] = [f"{p:.4f}" if p == p else "–" for p in S.holm(frame["p_value"].to_numpy())]
    n_files = table["file"].nunique()
    smallest = 2 / 2 ** n_files * len(frame)  # Holm's smallest adjusted p: m x the smallest p
    reach = ("none can be significant at 0.05 whatever the files" if smallest >= ALPHA
             else f"a test can be significant at {ALPHA}")
    lines += [_table(frame.drop(columns="p_value")), "",
              f"{n_files} held-out files of the {table.attrs['n_files']} MIDI files music21 ships: the "
              f"smallest two-sided p of the exact test is 2 / 2^{n_files}, so after Holm's correction "
              f"over these {len(frame)} tests {reach}. The numbers describe these files; they do not "
              "generalise. Where the corpus ratio is below 1, MidiTok's BPE gives fewer tokens than "
              "that ubpe tokenisation on these files.", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments midi", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="folder to write midi/ into")
    parser.add_argument("--cache", type=Path, default=CACHE_DIR, help="fitted models and cells (default: experiments/.cache)")
    args = parser.parse_args(argv)
    from ubpe.lab.runner import run_experiment

    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        extract_midi(folder)
        out = run_experiment(config(folder), jobs=1, results_dir=args.results, cache_dir=args.cache,
                             commands={"run": "python -m experiments midi",
                                       "report": "python -m experiments midi (the MidiTok section is not in the re-rendered report)"})
        rows = miditok_rows(out, folder)
        n_files = len(list((folder / FOLDER).iterdir()))
    import pandas as pd

    from ubpe.lab.tables import write_csv

    write_csv(pd.DataFrame(rows), out / "miditok.csv")
    readme = out / "README.md"
    readme.write_text(readme.read_text() + section(rows, n_files))
    info = json.loads((out / "run.json").read_text())
    from ubpe.lab.provenance import package_versions

    info["versions"].update(package_versions(["miditok", "symusic", "tokenizers"]))
    (out / "run.json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
