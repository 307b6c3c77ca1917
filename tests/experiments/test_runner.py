"""The experiment runner end to end on a tiny in-memory dataset, in tmp_path.

The dataset loader is replaced (`runner.load_split`), results and cache go to tmp_path, so the
tests read no installed data and write nothing into the working tree.
"""

import json

import numpy as np
import pandas as pd
import pytest

from ubpe.lab import patterns, runner, validity
from ubpe.lab.config import ConfigError, EncoderSpec, load_config, n_tokens_for, parse_config
from ubpe.lab.datasets import Dataset, content_checksum

from experiments import CONFIG_DIR

TRAIN = ["abracadabra abracadabra", "banana bandana cabana", "a cab and a bad banana",
         "abba dabba", "candid canard", "radar cabbage"] * 2
HELDOUT = ["abracadabra banana", "cabana bandana abba", "a bad cab", "dada", "bandanna",
           "a cabbage and a banana", "radar abracadabra", "candid cabana bandana"]
# two documents per unit, except the last two: six units of the eight documents
HELDOUT_UNITS = ["u0", "u0", "u1", "u1", "u2", "u3", "u4", "u5"]
SIGNAL_TRAIN = [np.array([0, 1, 2, 1, 0, 1, 2, 1, 0] * 3), np.array([2, 2, 1, 0, 0, 1, 2, 2] * 3)]
SIGNAL_HELDOUT = [np.array([0, 1, 2, 1, 0, 1]), np.array([2, 2, 1, 0, 0, 1, 2])]


def _dataset(name, split, docs, kind, symbol_type, units=None):
    return Dataset(name=name, kind=kind, split=split, docs=list(docs),
                   doc_ids=[f"{name}:{i}" for i in range(len(docs))], source="tests",
                   source_version="0", licence="CC0", description=f"tiny {kind}",
                   symbol_type=symbol_type, settings={}, checksum=content_checksum(docs),
                   unit="pair" if units else "document", doc_units=units or [])


def fake_load(name, split, *, max_symbols, options, named=None):
    if name == "tiny":
        if split == "train":
            return _dataset(name, split, TRAIN, "prose", "char")
        return _dataset(name, split, HELDOUT, "prose", "char", HELDOUT_UNITS)
    return _dataset(name, split, SIGNAL_TRAIN if split == "train" else SIGNAL_HELDOUT,
                    "signal", "int")


TINY = {
    "name": "tiny",
    "description": "a tiny grid for the tests",
    "grid": {"vocab_sizes": ["+6", "+12"], "n_candidates": [2], "top_n": 3, "seeds": [0, 1]},
    "encoders": {"run": ["universal:tfidf", "classic:classic", "classic:tfidf"],
                 "baseline": "classic:classic"},
    "statistics": {"alpha": 0.05},
    "comparisons": [
        {"question": "Is tf-idf shorter than classic?", "a": "universal:tfidf", "b": "classic:classic"},
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
    assert documents.loc[documents["dataset"] == "tiny", "unit"].tolist()[:8] == HELDOUT_UNITS
    comparisons = pd.read_csv(out / "comparisons.csv", dtype={"size": str})
    assert len(comparisons) == 4 and set(comparisons["question"]) == {0}
    # per unit: the tiny prose has 6 units (tested), the wave 2 documents = 2 units (not)
    tiny_rows = comparisons[comparisons["dataset"] == "tiny"]
    assert (tiny_rows["n_units"] == 6).all() and (tiny_rows["n_docs"] == 8).all()
    assert tiny_rows["p_holm"].between(0, 1).all()
    wave_rows = comparisons[comparisons["dataset"] == "wave"]
    assert (wave_rows["verdict"] == "too few units to test").all() and wave_rows["p_value"].isna().all()
    # the per-unit effect is computed from the documents' token counts summed per unit
    docs = documents[(documents["dataset"] == "tiny") & (documents["size"] == "+6")]
    per_unit = docs.pivot_table(index="unit", columns="encoder", values="n_tokens", aggfunc="sum")
    expected = np.log(per_unit["universal:tfidf"] / per_unit["classic:classic"])
    row = tiny_rows[tiny_rows["size"] == "+6"].iloc[0]
    assert row["mean_log_ratio"] == pytest.approx(expected.mean())
    info = json.loads((out / "run.json").read_text())
    assert info["unavailable_encoders"] == []
    report = (out / "README.md").read_text()
    assert report.index("## Settings") < report.index("## Data") < report.index("## Metrics")
    assert "## Decision per dataset" in report
    # an encoder the registry does not know is a config error, not a skipped cell (issue 37)
    with pytest.raises(ConfigError, match="no encoder 'no_such_encoder'"):
        parse_config({**TINY, "encoders": {"run": ["universal:no_such_encoder"]}})
    assert "Wilcoxon signed-rank" in report


def test_rerun_skips_finished_cells_and_gives_identical_numbers(tiny, monkeypatch):
    out = _run(tiny)
    first = _csvs(out)

    def must_not_encode(*args, **kwargs):
        raise AssertionError("a finished cell was recomputed")

    from ubpe.lab import units

    monkeypatch.setattr(units, "encode_cell", must_not_encode)
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


def _failing_classic(real, error):
    def encode(tok, docs, cell):
        if cell.encoder == "classic":
            raise error
        return real(tok, docs, cell)
    return encode


def test_a_failed_cell_fails_the_run_naming_the_cell(tiny, monkeypatch, capsys):
    from ubpe.errors import InvalidParameterError

    from ubpe.lab import units
    from experiments.__main__ import main

    monkeypatch.setattr(units, "encode_cell",
                        _failing_classic(units.encode_cell, InvalidParameterError("does not apply")))
    with pytest.raises(runner.FailedCellsError) as caught:
        _run(tiny)
    message = str(caught.value)
    assert "tiny +6 n_candidates=2 classic:classic: InvalidParameterError: does not apply" in message
    # the results are written all the same, with the failure in run.json and the report
    out = caught.value.out
    info = json.loads((out / "run.json").read_text())
    assert {f["encoder"] for f in info["failed_cells"]} == {"classic:classic"}
    assert not any(f["allowed"] for f in info["failed_cells"])
    assert "could not be computed" in (out / "README.md").read_text()
    # the command line exits with status 1 and names the cells
    config_file = out.parent / "tiny.toml"
    monkeypatch.setattr("experiments.__main__.CACHE_DIR", runner.CACHE_DIR)
    monkeypatch.setattr("experiments.__main__.load_config", lambda *_, **__: tiny)
    assert main([str(config_file), "--no-progress", "--results", str(out.parent)]) == 1
    assert "wave +12 n_candidates=2 classic:classic" in capsys.readouterr().err


def test_an_allow_listed_failure_is_recorded_not_fatal(tiny, monkeypatch):
    from ubpe.errors import InvalidParameterError

    from ubpe.lab import units

    monkeypatch.setattr(units, "encode_cell",
                        _failing_classic(units.encode_cell, InvalidParameterError("does not apply")))
    config = parse_config({**TINY, "encoders": {**TINY["encoders"],
                                                "allow_failures": ["classic:classic"]}})
    out = _run(config)
    info = json.loads((out / "run.json").read_text())
    assert {f["encoder"] for f in info["failed_cells"]} == {"classic:classic"}
    assert all(f["allowed"] for f in info["failed_cells"])


def test_a_bug_in_an_encoder_is_not_a_failed_cell(tiny, monkeypatch):
    from ubpe.lab import units

    monkeypatch.setattr(units, "encode_cell",
                        _failing_classic(units.encode_cell, IndexError("a regression")))
    config = parse_config({**TINY, "encoders": {**TINY["encoders"],
                                                "allow_failures": ["classic:classic"]}})
    with pytest.raises(units.CellCrashed, match=r"cell tiny \+6 n_candidates=2 classic:classic "
                                                r"crashed: IndexError: a regression"):
        _run(config)
    # in the process pool too (workers are forked, so they see the patched encoder)
    with pytest.raises(units.CellCrashed, match="crashed: IndexError: a regression"):
        runner.run_experiment(config, jobs=2, force=True, progress=False)


def test_equal_size_fits_universal_to_the_classic_size(tiny):
    config = parse_config({**TINY, "grid": {**TINY["grid"], "equal_size": True}})
    out = _run(config)
    metrics = pd.read_csv(out / "metrics.csv", dtype={"size": str})
    sizes = metrics.groupby(["dataset", "size", "variant"])["vocab_size"].first().unstack()
    assert (sizes["universal"] == sizes["classic"]).all()
    assert tiny.equal_size  # the default (issue 34.1)
    unequal_config = parse_config({**TINY, "grid": {**TINY["grid"], "equal_size": False}})
    unequal = pd.read_csv(_run(unequal_config) / "metrics.csv", dtype={"size": str})
    assert (unequal.groupby(["dataset", "size", "variant"])["vocab_size"].first().unstack()
            .pipe(lambda t: t["universal"] > t["classic"])).any()
    with pytest.raises(ConfigError):
        parse_config({**TINY, "grid": {**TINY["grid"], "equal_size": "yes"}})


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
    with pytest.raises(ConfigError, match="no preset"):
        parse_config({**TINY, "datasets": {"tiny": {"regex": "gpt2"}}})
    assert parse_config({**TINY, "datasets": {"tiny": {"regex": "words"}}}).datasets[0].regex_pattern \
        == patterns.WORDS
    with pytest.raises(ConfigError):
        parse_config({**TINY, "encoders": {**TINY["encoders"], "allow_failure": []}})
    with pytest.raises(ConfigError):
        parse_config({**TINY, "encoders": {**TINY["encoders"], "allow_failures": ["tfidf"]}})
    path = tmp_path / "mine.toml"
    path.write_text('[encoders]\nrun = ["universal:tfidf"]\n[datasets.dna]\n')
    config = load_config(path)
    assert config.name == "mine" and config.datasets[0].name == "dna"
    with pytest.raises(ConfigError):
        load_config(tmp_path / "missing.toml")


def test_shipped_configs_parse():
    for name in ("default", "large"):
        config = load_config(name, named=CONFIG_DIR)
        assert config.name == name
        assert EncoderSpec("universal", "tfidf") in config.encoders
        assert {d.name for d in config.datasets} >= {"kjv", "udhr", "stdlib", "dna", "protein",
                                                      "ecg", "chorales", "timeseries"}


def test_config_docstring_examples():
    import doctest

    from ubpe.lab import cache, config, formatting, patterns, provenance, report, tables

    for module in (config, cache, formatting, patterns, provenance, report, tables):
        assert doctest.testmod(module).failed == 0, module.__name__


def test_code_fingerprint_does_not_depend_on_what_was_imported_first():
    import subprocess
    import sys

    def fingerprint(first_imports: str) -> str:
        code = f"{first_imports}\nfrom ubpe.lab.cache import code_fingerprint\nprint(code_fingerprint())"
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              check=True).stdout.strip()

    bare = fingerprint("")
    assert len(bare) == 20
    assert fingerprint("import ubpe.io, ubpe.encoders, ubpe.cli.parser, ubpe.models.sentencepiece") == bare


def test_no_comparisons_and_a_single_encoder(tiny):
    config = parse_config({**TINY, "comparisons": [],
                           "encoders": {"run": ["universal:tfidf"]}})
    out = _run(config)
    assert len(pd.read_csv(out / "metrics.csv")) == 4
    assert "## Answers per dataset kind" in (out / "README.md").read_text()


def test_a_dataset_that_is_not_installed_is_skipped_and_named(tiny, monkeypatch):
    from experiments.datasets import DataNotInstalledError

    def load_without_wave(name, split, *, max_symbols, options, named=None):
        if name == "wave":
            raise DataNotInstalledError("wave: run experiments/install_data.sh")
        return fake_load(name, split, max_symbols=max_symbols, options=options)

    monkeypatch.setattr(runner, "load_split", load_without_wave)
    out = _run(tiny)
    assert set(pd.read_csv(out / "metrics.csv")["dataset"]) == {"tiny"}
    assert "wave" in json.loads((out / "run.json").read_text())["missing_datasets"]
    assert "not installed" in (out / "README.md").read_text()


def test_downstream_and_beam(monkeypatch, tmp_path):
    """[downstream]: per encoder, held-out bits under a Kneser-Ney model of its own
    tokenisation of the training split; the documents' bits add up to the summary."""
    monkeypatch.setattr(runner, "load_split", fake_load)
    monkeypatch.setattr(validity, "MIN_UNITS", 2)  # the tiny data's six units count here
    config = parse_config({**TINY, "downstream": {"sizes": ["+6"], "n_candidates": [2], "order": 2},
                           "beam": {"size": "+12", "n_candidates": 2, "widths": [1, 3],
                                    "exact_max_symbols": 12}})
    out = runner.run_experiment(config, jobs=1, progress=False, results_dir=tmp_path / "results",
                                cache_dir=tmp_path / "cache")
    summary = pd.read_csv(out / "downstream.csv", dtype={"size": str})
    documents = pd.read_csv(out / "downstream_documents.csv")
    assert set(summary["encoder"]) == {"universal:tfidf", "classic:classic", "classic:tfidf"}
    assert set(summary["size"]) == {"+6"} and (summary["order"] == 2).all()
    for row in summary.itertuples():
        docs = documents[(documents["dataset"] == row.dataset) & (documents["encoder"] == row.encoder)]
        assert docs["bits"].sum() / docs["n_symbols"].sum() == pytest.approx(row.bits_per_symbol)
        assert row.bits_per_symbol > 0 and 0 <= row.unseen_share <= 1
        assert row.below_baseline == (row.bits_per_symbol > min(row.symbol_bits_per_symbol,
                                                                row.uniform_bits_per_symbol))
        assert docs["bits_mixture"].sum() <= docs["bits_symbols"].sum() + len(docs)
    for _, setting in summary.groupby(["dataset", "size", "n_candidates"]):
        assert setting["ranked"].isna().all() == (not setting["below_baseline"].any())
        assert setting["rank_bits"].notna().all() == setting["ranked"].isna().all()
    sensitivity = pd.read_csv(out / "downstream_sensitivity.csv")
    assert set(sensitivity["order"]) == {2, 3, 4, 5} and set(sensitivity["train_fraction"]) == {0.25, 0.5, 1.0}
    tiny_docs = documents[documents["dataset"] == "tiny"]
    assert list(tiny_docs["unit"].unique()) == sorted(set(HELDOUT_UNITS))
    if (out / "downstream_comparisons.csv").stat().st_size > 1:  # only ranked settings are tested
        comparisons = pd.read_csv(out / "downstream_comparisons.csv")
        assert set(comparisons["n_units"][comparisons["dataset"] == "tiny"]) <= {6}
    report = (out / "README.md").read_text()
    assert "## Downstream" in report and "## The tf-idf beam" in report
    assert "### What tf-idf maximises" in report
    beam = pd.read_csv(out / "beam_summary.csv")
    assert set(beam["width"]) == {1, 3} and set(beam["dataset"]) == {"tiny", "wave"}
    for name in ("bits_per_symbol.png", "beam_sweep.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({name})" in report.split("## Plots", 1)[1]


def test_no_downstream_or_beam_draws_no_plot_for_them(tmp_path):
    from ubpe.lab import plots
    assert plots.plot_bits_per_symbol(pd.DataFrame(), tmp_path / "a.png") is None
    assert plots.plot_beam_sweep(pd.DataFrame(), tmp_path / "b.png") is None
    assert not list(tmp_path.iterdir())


def test_downstream_config_checked():
    with pytest.raises(ConfigError):
        parse_config({**TINY, "downstream": {"order": 1}})
    with pytest.raises(ConfigError):
        parse_config({**TINY, "downstream": {"typo": 1}})
    with pytest.raises(ConfigError):
        parse_config({**TINY, "beam": {"widths": [5, 1]}})


def test_the_main_job_writes_to_the_ignored_runs_folder_not_the_published_results(tiny, monkeypatch, tmp_path):
    """``python -m experiments`` (the README's main job) leaves the checkout as it was: with no
    ``--results`` it writes ``runs/<name>/``, which git ignores; ``results/`` only when named."""
    import subprocess

    import experiments
    from experiments.__main__ import main

    monkeypatch.setattr("experiments.__main__.CACHE_DIR", runner.CACHE_DIR)
    monkeypatch.setattr("experiments.__main__.load_config", lambda *_, **__: tiny)
    monkeypatch.setattr("experiments.__main__.RUNS_DIR", tmp_path / "runs")
    assert main(["--no-progress"]) == 0
    assert (tmp_path / "runs" / "tiny" / "metrics.csv").exists()
    assert not (tmp_path / "results").exists()
    readme = (tmp_path / "runs" / "tiny" / "README.md").read_text()
    assert "`python -m experiments tiny`" in readme  # the command that reproduces it
    assert main(["--no-progress", "--results", str(tmp_path / "published")]) == 0
    assert f"--results {tmp_path / 'published'}" in (tmp_path / "published" / "tiny" / "README.md").read_text()
    # the checkout's runs folder is ignored by git (skipped outside a git checkout)
    root = experiments.REPO_ROOT
    if (root / ".git").exists():
        probe = experiments.RUNS_DIR / "default" / "metrics.csv"
        ignored = subprocess.run(["git", "-C", str(root), "check-ignore", "-q", str(probe)])
        assert ignored.returncode == 0, "runs/ must be in .gitignore"
