"""Sound defaults, nothing silent (issue 34.1): fitted vocabularies at equal size by default,
also beside a vocabulary from a file; the symbol caps printed with what they left out, recorded
in run.json and liftable; one progress bar over every cell of the run, ending at run.json's
count, and a line for every stage after it."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd

import ubpe
from ubpe.lab import runner
from ubpe.lab.config import load_config

WORDS = "the cat sat on a mat and a dog ran to the red barn while rain fell".split()


def _notes(tmp_path, n=40, words=8):
    rng = np.random.default_rng(4)
    (tmp_path / "notes").mkdir()
    for i in range(n):
        (tmp_path / "notes" / f"{i:02}.txt").write_text(" ".join(rng.choice(WORDS, words)), encoding="utf-8")


def _run(tmp_path, text, **kwargs):
    (tmp_path / "exp.toml").write_text(text)
    config = load_config(tmp_path / "exp.toml")
    out = runner.run_experiment(config, jobs=1, cache_dir=tmp_path / "cache", results_dir=tmp_path / "out", **kwargs)
    return config, out, json.loads((out / "run.json").read_text())


DATASET = '[datasets.notes]\npath = "notes"\nformat = "text"\ndocument = "file"\n'


def test_equal_size_is_the_default_and_a_file_vocabulary_does_not_turn_it_off(tmp_path):
    _notes(tmp_path)
    model = ubpe.UBPEClassic(alphabet=sorted(set("".join(WORDS)) | {" "}), n_tokens=40)
    model.fit([" ".join(WORDS)] * 3, quiet=True)
    model.save(tmp_path / "mine.json")
    config, out, info = _run(tmp_path, '[grid]\nvocab_sizes = ["+8", "+24"]\n' + DATASET
                             + '[vocabularies.mine]\npath = "mine.json"\n', progress=False)
    assert config.equal_size and info["config"]["equal_size"]
    metrics = pd.read_csv(out / "metrics.csv", dtype={"size": str})
    for size, group in metrics.groupby("size"):
        sizes = group.set_index("encoder")["vocab_size"]
        assert sizes["universal:tfidf"] == sizes["classic:classic"], size
        assert sizes["mine:native"] == model.n_vocab  # its own size
    comparisons = pd.read_csv(out / "comparisons.csv")
    assert set(comparisons["sizes"]) == {"equal"}


def test_caps_are_printed_recorded_and_liftable(tmp_path, capsys):
    _notes(tmp_path, n=40, words=8)
    _, _, info = _run(tmp_path, '[grid]\nvocab_sizes = ["+8"]\nmax_symbols = 300\n' + DATASET, progress=False)
    train = next(c for c in info["caps"] if c["split"] == "train")
    assert train["max_symbols"] == 300 and train["dropped_documents"] > 0
    assert train["kept_symbols"] <= 300 and train["dropped_symbols"] > 0
    held = next(c for c in info["caps"] if c["split"] == "heldout")
    assert sum(c["kept_documents"] + c["dropped_documents"] for c in (train, held)) == 40  # every file
    err = capsys.readouterr().err
    assert f"notes train: the cap of 300 symbols left out {train['dropped_documents']} documents" in err
    assert "max_symbols = inf" in err
    report = (tmp_path / "out" / "exp" / "README.md").read_text()
    assert "left out" in report
    # lifted: nothing left out, and the kept documents are every training document
    _, _, lifted = _run(tmp_path, '[grid]\nvocab_sizes = ["+8"]\nmax_symbols = inf\n' + DATASET, progress=False)
    lifted_train = next(c for c in lifted["caps"] if c["split"] == "train")
    assert lifted_train["dropped_documents"] == 0 and lifted_train["max_symbols"] is None
    assert lifted_train["kept_documents"] == train["kept_documents"] + train["dropped_documents"]


def test_progress_covers_every_cell_and_matches_run_json(tmp_path, capsys):
    _notes(tmp_path)
    text = ('[grid]\nvocab_sizes = ["+8", "+16"]\nseeds = [0, 1]\n[encoders]\n'
            'run = ["universal:tfidf", "classic:classic", "classic:dropout", "universal:fewest"]\n'
            '[downstream]\nsizes = ["+8"]\nn_candidates = [50]\norders = [2, 3]\ntrain_fractions = [1.0]\n' + DATASET)
    _, _, info = _run(tmp_path, text, progress=True)
    err = capsys.readouterr().err
    run = info["run"]
    total = run["cells_total"]
    assert total == 2 * (1 + 1 + 2 + 1)  # 2 sizes x (tfidf, classic, dropout x 2 seeds, fewest)
    assert run["cells_computed"] + run["cells_cached"] + run["cells_failed"] == total
    assert re.search(rf"cells: 100%[^\n\r]*\b{total}/{total}\b", err)
    for stage in ("tables and paired statistics", "downstream", "report and plots"):
        assert stage in err
    # a second run: every cell cached, the same total
    _, _, again = _run(tmp_path, text, progress=False)
    assert again["run"]["cells_cached"] == total and again["run"]["cells_total"] == total
