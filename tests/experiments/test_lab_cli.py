"""``ubpe experiment`` (`ubpe.cli.experiment`): init writes a config that parses, a run writes
the results, report re-renders them, and mistakes are one line with exit status 2."""

from __future__ import annotations

import json
import tomllib

import pytest

from ubpe.cli import main
from ubpe.lab.config import parse_config

WORDS = "the cat sat on a mat and a dog ran to the red barn".split()


def _notes(tmp_path, monkeypatch):
    """my.toml in tmp_path (the working directory now): a text file, a line per document."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("\n".join(" ".join(WORDS[i:] + WORDS[:i]) for i in range(len(WORDS))) * 3)
    (tmp_path / "my.toml").write_text('[grid]\nvocab_sizes = ["+8"]\n[datasets.notes]\npath = "notes.txt"\nformat = "text"\n')


def test_init_writes_an_example_that_parses(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["experiment", "init"]) == 0
    config = parse_config(tomllib.loads((tmp_path / "experiment.toml").read_text()))
    assert config.datasets[0].load_options["format"] == "text"
    assert main(["experiment", "init"]) == 2  # never overwrites
    assert "experiment.toml exists" in capsys.readouterr().err
    assert main(["experiment", "init", "other.toml", "-q"]) == 0 and (tmp_path / "other.toml").is_file()


def test_run_then_report(tmp_path, monkeypatch, capsys):
    _notes(tmp_path, monkeypatch)
    args = ["experiment", "my.toml", "--results", "out", "--cache", "cache", "--jobs", "1", "--no-progress"]
    assert main(args) == 0
    out = tmp_path / "out" / "my"
    info = json.loads((out / "run.json").read_text())
    assert info["commands"]["run"] == "ubpe experiment my.toml --results out"
    assert info["run"]["cells_computed"] == 2
    assert main(args) == 0  # cached
    assert json.loads((out / "run.json").read_text())["run"]["cells_cached"] == 2
    before = (out / "README.md").read_text()
    (out / "README.md").unlink()
    assert main(["experiment", "report", str(out), "-q"]) == 0
    assert (out / "README.md").read_text() == before
    capsys.readouterr()


@pytest.mark.parametrize("config, message", [
    ('[datasets.x]\npath = "none.txt"\nformat = "text"\n', "no file at 'none.txt'"),
    ('[datasets.x]\npath = "a.txt"\nformat = "word"\n', "format must be one of"),
    ("[datasets.x\n", "my.toml"),
    ('[datasets.kjv]\n', "names no path"),
])
def test_mistakes_are_one_line(tmp_path, monkeypatch, capsys, config, message):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "my.toml").write_text(config)
    assert main(["experiment", "my.toml", "--cache", "cache", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ubpe: error: ") and message in err and len(err.strip().splitlines()) == 1


def test_report_of_a_folder_without_results(tmp_path, capsys):
    assert main(["experiment", "report", str(tmp_path)]) == 2
    assert "no results in" in capsys.readouterr().err


def test_the_llm_grid_config_names_installed_vocabularies(monkeypatch):
    """configs/llm-grid.toml: the six llama.cpp vocabularies, found in the data cache."""
    from vocab_corpora import llama_cpp_models

    from experiments import CONFIG_DIR
    from experiments.datasets import CACHE_ENV, data_cache_dir
    from ubpe.lab.config import load_config

    llama_cpp_models()  # skips when the data is not installed
    monkeypatch.setenv(CACHE_ENV, str(data_cache_dir()))
    config = load_config("llm-grid", named=CONFIG_DIR)
    assert len(config.vocabularies) == 6 and not any(e.variant in ("universal", "classic") for e in config.encoders)
    for vocabulary in config.vocabularies:
        assert config.vocabulary_path(vocabulary).is_file(), vocabulary.path


def test_load_results_gives_the_tables(tmp_path, monkeypatch):
    from ubpe.lab import load_results

    _notes(tmp_path, monkeypatch)
    assert main(["experiment", "my.toml", "--results", "out", "--cache", "cache", "--no-progress", "-q"]) == 0
    tables = load_results(tmp_path / "out" / "my")
    assert set(tables["metrics"]["encoder"]) == {"universal:tfidf", "classic:classic"}
    assert tables["run"]["experiment"] == "my" and len(tables["comparisons"]) == 1
