"""The experiment runner end to end on a tiny in-memory dataset, in tmp_path.

The dataset loader is replaced (`runner.load_split`), results and cache go to tmp_path, so the
tests read no installed data and write nothing into the working tree.
"""

import json

import numpy as np
import pandas as pd
import pytest

from experiments import runner
from experiments.config import ConfigError, EncoderSpec, load_config, n_tokens_for, parse_config
from experiments.datasets import Dataset, content_checksum

TRAIN = ["abracadabra abracadabra", "banana bandana cabana", "a cab and a bad banana",
         "abba dabba", "candid canard", "radar cabbage"] * 2
HELDOUT = ["abracadabra banana", "cabana bandana abba", "a bad cab", "dada", "bandanna"]
SIGNAL_TRAIN = [np.array([0, 1, 2, 1, 0, 1, 2, 1, 0] * 3), np.array([2, 2, 1, 0, 0, 1, 2, 2] * 3)]
SIGNAL_HELDOUT = [np.array([0, 1, 2, 1, 0, 1]), np.array([2, 2, 1, 0, 0, 1, 2])]


def _dataset(name, split, docs, kind, symbol_type):
    return Dataset(name=name, kind=kind, split=split, docs=list(docs),
                   doc_ids=[f"{name}:{i}" for i in range(len(docs))], source="tests",
                   source_version="0", licence="CC0", description=f"tiny {kind}",
                   symbol_type=symbol_type, settings={}, checksum=content_checksum(docs))


def fake_load(name, split, *, max_symbols, options):
    if name == "tiny":
        return _dataset(name, split, TRAIN if split == "train" else HELDOUT, "prose", "char")
    return _dataset(name, split, SIGNAL_TRAIN if split == "train" else SIGNAL_HELDOUT,
                    "signal", "int")


TINY = {
    "name": "tiny",
    "description": "a tiny grid for the tests",
    "grid": {"vocab_sizes": ["+6", "+12"], "n_candidates": [2], "top_n": 3, "seeds": [0, 1]},
    "encoders": {"run": ["universal:tfidf", "classic:classic", "classic:tfidf",
                         "universal:no_such_encoder"],
                 "baseline": "classic:classic"},
    "statistics": {"resamples": 200, "seed": 7},
    "comparisons": [
        {"question": "Is tf-idf shorter than classic?", "a": "universal:tfidf", "b": "classic:classic"},
        {"question": "Unavailable?", "a": "universal:no_such_encoder", "b": "classic:classic"},
    ],
    "datasets": {"tiny": {"regex": r"\w+|\s+"}, "wave": {}},
}


@pytest.fixture
def tiny(monkeypatch, tmp_path):
    monkeypatch.setattr(runner, "load_split", fake_load)
    monkeypatch.setattr(runner, "CACHE_DIR", tmp_path / "cache")
    monkeypatch.setattr(runner, "RESULTS_DIR", tmp_path / "results")
    return parse_config(TINY)


def _run(config, **kwargs):
    return runner.run_experiment(config, jobs=1, progress=False, **kwargs)


def _csvs(folder):
    return {name: pd.read_csv(folder / f"{name}.csv")
            for name in ("datasets", "documents", "metrics", "comparisons")}


def test_end_to_end_writes_tables_report_and_plots(tiny, tmp_path):
    out = _run(tiny)
    assert out == tmp_path / "results" / "tiny"
    for name in ("datasets.csv", "documents.csv", "metrics.csv", "comparisons.csv", "run.json",
                 "README.md", "tokens_per_symbol.png"):
        assert (out / name).exists(), name
    metrics = pd.read_csv(out / "metrics.csv", dtype={"size": str})
    # 2 datasets x 2 sizes x 3 runnable encoders
    assert len(metrics) == 12
    assert set(metrics["encoder"]) == {"universal:tfidf", "classic:classic", "classic:tfidf"}
    assert metrics["lossless"].all()
    assert (metrics["tokens_per_symbol"] <= 1).all()
    assert np.allclose(metrics["tokens_per_symbol"] * metrics["compression_ratio"], 1.0)
    baseline = metrics[metrics["encoder"] == "classic:classic"]
    assert (baseline["differs_from_baseline"] == 0).all()
    assert metrics.loc[metrics["encoder"] == "universal:tfidf", "top_n"].eq(3).all()
    documents = pd.read_csv(out / "documents.csv", dtype={"size": str})
    assert len(documents) == 2 * 3 * (len(HELDOUT) + len(SIGNAL_HELDOUT))
    # per-document counts add up to the corpus counts of the metrics
    sums = documents.groupby(["dataset", "size", "encoder"])["n_tokens"].sum()
    for row in metrics.itertuples():
        assert sums[(row.dataset, row.size, row.encoder)] == row.corpus_tokens
    comparisons = pd.read_csv(out / "comparisons.csv")
    assert len(comparisons) == 4 and set(comparisons["question"]) == {0}
    assert comparisons["p_holm"].between(0, 1).all()
    info = json.loads((out / "run.json").read_text())
    assert info["unavailable_encoders"] == ["universal:no_such_encoder"]
    report = (out / "README.md").read_text()
    assert report.index("## Settings") < report.index("## Data") < report.index("## Metrics")
    assert "`universal:no_such_encoder`" in report and "Not answered" in report
    assert "Wilcoxon signed-rank" in report


def test_rerun_skips_finished_cells_and_gives_identical_numbers(tiny, monkeypatch):
    out = _run(tiny)
    first = _csvs(out)

    def must_not_encode(*args, **kwargs):
        raise AssertionError("a finished cell was recomputed")

    monkeypatch.setattr(runner, "encode_cell", must_not_encode)
    _run(tiny)
    info = json.loads((out / "run.json").read_text())
    assert info["run"]["cells_computed"] == 0 and info["run"]["cells_cached"] == 12
    second = _csvs(out)
    for name in first:
        pd.testing.assert_frame_equal(runner.numbers_only(first[name]),
                                      runner.numbers_only(second[name]))


def test_force_recomputes_with_identical_numbers_in_parallel(tiny):
    out = _run(tiny)
    first = _csvs(out)
    runner.run_experiment(tiny, jobs=2, force=True, progress=False)
    info = json.loads((out / "run.json").read_text())
    assert info["run"]["cells_computed"] == 12 and info["run"]["force"]
    second = _csvs(out)
    for name in first:
        pd.testing.assert_frame_equal(runner.numbers_only(first[name]),
                                      runner.numbers_only(second[name]))


def test_report_rerenders_from_the_csv_files_only(tiny, monkeypatch):
    out = _run(tiny)
    before = (out / "README.md").read_text()
    (out / "README.md").unlink()
    monkeypatch.setattr(runner, "load_split", None)  # no data needed to re-render
    from experiments.__main__ import main

    assert main(["report", str(out)]) == 0
    assert (out / "README.md").read_text() == before


def test_a_failing_cell_is_recorded_not_fatal(tiny, monkeypatch):
    real = runner.encode_cell

    def failing_classic(tok, docs, cell):
        if cell.encoder == "classic":
            raise ValueError("does not apply")
        return real(tok, docs, cell)

    monkeypatch.setattr(runner, "encode_cell", failing_classic)
    out = _run(tiny)
    info = json.loads((out / "run.json").read_text())
    assert {f["encoder"] for f in info["failed_cells"]} == {"classic:classic"}
    assert "ValueError: does not apply" in info["failed_cells"][0]["error"]
    assert "could not be computed" in (out / "README.md").read_text()


def test_config_parsing_and_errors(tmp_path):
    assert EncoderSpec.parse("universal:fewest") == EncoderSpec("universal", "fewest")
    assert n_tokens_for("+256", 4) == 260 and n_tokens_for(300, 4) == 300
    for bad in ("tfidf", "mixed:tfidf", "universal:"):
        with pytest.raises(ConfigError):
            EncoderSpec.parse(bad)
    with pytest.raises(ConfigError):
        parse_config({**TINY, "grid": {"vocab_sizes": ["256+"]}})
    with pytest.raises(ConfigError):
        parse_config({**TINY, "datasets": {}})
    with pytest.raises(ConfigError):
        parse_config({**TINY, "typo": 1})
    path = tmp_path / "mine.toml"
    path.write_text('[encoders]\nrun = ["universal:tfidf"]\n[datasets.dna]\n')
    config = load_config(path)
    assert config.name == "mine" and config.datasets[0].name == "dna"
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.toml")


def test_shipped_configs_parse():
    for name in ("default", "large"):
        config = load_config(name)
        assert config.name == name
        assert EncoderSpec("universal", "tfidf") in config.encoders
        assert {d.name for d in config.datasets} >= {"kjv", "udhr", "stdlib", "dna", "protein",
                                                      "ecg", "chorales", "timeseries"}


def test_config_docstring_examples():
    import doctest

    from experiments import config

    assert doctest.testmod(config).failed == 0


def test_no_comparisons_and_a_single_encoder(tiny):
    config = parse_config({**TINY, "comparisons": [],
                           "encoders": {"run": ["universal:tfidf"]}})
    out = _run(config)
    assert len(pd.read_csv(out / "metrics.csv")) == 4
    assert "## Answers per dataset kind" in (out / "README.md").read_text()


def test_a_dataset_that_is_not_installed_is_skipped_and_named(tiny, monkeypatch):
    from experiments.datasets import DataNotInstalledError

    def load_without_wave(name, split, *, max_symbols, options):
        if name == "wave":
            raise DataNotInstalledError("wave: run experiments/install_data.sh")
        return fake_load(name, split, max_symbols=max_symbols, options=options)

    monkeypatch.setattr(runner, "load_split", load_without_wave)
    out = _run(tiny)
    assert set(pd.read_csv(out / "metrics.csv")["dataset"]) == {"tiny"}
    assert "wave" in json.loads((out / "run.json").read_text())["missing_datasets"]
    assert "not installed" in (out / "README.md").read_text()
