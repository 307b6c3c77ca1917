"""The config schema (`ubpe.lab.schema`): every config class of issue 37 is a `ConfigError`
naming the key (with a suggestion for a misspelt name), raised before any data is read, and
the CLI says it in one line with exit status 2."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ubpe.cli import main
from ubpe.lab import runner
from ubpe.lab.config import ConfigError, load_config, parse_config
from ubpe.lab.schema import TABLES, suggest

FILES = '[datasets.notes]\npath = "notes.txt"\nformat = "text"\n'

#: (config text, what the message must say): every config class of issue 37's audit
BAD = [
    ('[grid]\nvocab_size = ["+8"]\n' + FILES, "unknown key grid.vocab_size (did you mean vocab_sizes?)"),
    ('[grid]\nvocab_sizes = 5\n' + FILES, "grid.vocab_sizes must be a non-empty list"),
    ('[grid]\nvocab_sizes = ["8"]\n' + FILES, "grid.vocab_sizes must be a non-empty list, each a vocabulary size"),
    ('[grid]\nn_candidates = [0]\n' + FILES, "grid.n_candidates must be"),
    ('[grid]\nequal_size = "yes"\n' + FILES, "grid.equal_size must be true or false"),
    ('[grid]\ntop_n = 1.5\n' + FILES, "grid.top_n must be an int >= 1"),
    ("datasets = [1, 2]\n", "datasets must be a table of [datasets.NAME] tables"),
    ('comparisons = ["x"]\n' + FILES, "comparisons[0] must be a table with question, a, b"),
    ('[[comparisons]]\nquestion = "q"\na = "classic:classic"\n' + FILES, "missing b"),
    ('[statistics]\nalpha = "abc"\n' + FILES, "statistics.alpha must be a number in (0, 1)"),
    ('[statistics]\nalpha = 1.5\n' + FILES, "statistics.alpha must be a number in (0, 1)"),
    ('[statistics]\nalpah = 0.1\n' + FILES, "unknown key statistics.alpah (did you mean alpha?)"),
    ('[datasets.notes]\npath = "notes.txt"\nformat = "text"\nmax_symbols = -1\n', "datasets.notes.max_symbols must be an int >= 1, or inf"),
    ('[datasets.notes]\npath = "notes.txt"\nformat = "text"\nmax_symbol = 10\n', "did you mean max_symbols"),
    ('[datasets.notes]\npath = "notes.txt"\nformat = "txt"\n', "format must be one of text, jsonl"),
    ('[datasets.notes]\npath = "notes.txt"\nformat = "txt"\n', "(did you mean text?)"),
    ('[datasets.notes]\npath = "notes.txt"\nformat = "text"\nvocab_sizes = [1]\n', "datasets.notes.vocab_sizes must be"),
    ('[datasets.notes]\npath = "notes.txt"\nformat = "csv"\ncolum = "x"\n', "did you mean column"),
    ('[encoders]\nrun = ["classic:bpe"]\n' + FILES, "no encoder 'bpe'"),
    ('[encoders]\nrun = ["classic:tfdf"]\n' + FILES, "(did you mean tfidf"),
    ('[encoders]\nrun = ["clasic:classic"]\n' + FILES, "(did you mean classic?)"),
    ('[encoders]\nrun = "classic:classic"\n' + FILES, "encoders.run must be a list"),
    ('[encoders]\nbaseline = "universal:fewset"\n' + FILES, "(did you mean fewest"),
    ('[encoders]\nruns = ["classic:classic"]\n' + FILES, "unknown key encoders.runs (did you mean run?)"),
    ('[[comparisons]]\nquestion = "q"\na = "classic:classic"\nb = "universal:tfidff"\n' + FILES, "no encoder 'tfidff'"),
    ('[downstream]\norder = 9\n' + FILES, "downstream.order must be an int in 2 .. 5"),
    ('[downstream]\ndiscount = "x"\n' + FILES, "downstream.discount must be a number in (0, 1)"),
    ('[beam]\nwidth = [1]\n' + FILES, "did you mean widths"),
    ('[vocabularies.m]\npath = "m.gguf"\nformat = "gguff"\n' + FILES, "did you mean gguf"),
    ('[vocabularies.m]\npath = "m.gguf"\nencoders = ["natve"]\n' + FILES, "did you mean native"),
    ('[vocabularies.m]\npath = "m.gguf"\ndatasets = [1, 2]\n' + FILES, "vocabularies.m.datasets must be"),
    ('[vocabularies.m]\nencoders = ["native"]\n' + FILES, "vocabularies.m.path must name"),
    ('[grd]\nvocab_sizes = ["+8"]\n' + FILES, "unknown key grd (did you mean grid?)"),
]


@pytest.mark.parametrize("text, message", BAD)
def test_every_config_class_is_a_clear_error(text, message):
    with pytest.raises(ConfigError) as error:
        parse_config(tomllib.loads(text))
    assert message in str(error.value)


@pytest.mark.parametrize("text, message", BAD)
def test_the_cli_says_it_in_one_line_with_exit_2_before_reading_data(tmp_path, monkeypatch, capsys, text, message):
    def no_data(*args, **kwargs):
        raise AssertionError("data was read before the config was checked")

    monkeypatch.setattr(runner, "load_split", no_data)
    monkeypatch.chdir(tmp_path)
    # no notes.txt and no model file: the schema's error comes first
    (tmp_path / "my.toml").write_text(text)
    assert main(["experiment", "my.toml", "--cache", "cache", "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and "internal error" not in err
    assert message in err


def test_a_good_config_passes_and_caps_are_liftable():
    config = parse_config(tomllib.loads(
        '[grid]\nvocab_sizes = ["+8", 300]\nmax_symbols = inf\nheldout_max_symbols = 5000\n'
        '[statistics]\nalpha = 0.01\n'
        '[datasets.notes]\npath = "notes.txt"\nformat = "text"\n'
        '[datasets.other]\npath = "o.txt"\nformat = "text"\nheldout_max_symbols = inf\n'))
    notes, other = config.datasets
    assert notes.max_symbols == float("inf") and notes.heldout_max_symbols == 5000
    assert other.heldout_max_symbols == float("inf")
    assert config.vocab_sizes == ("+8", 300) and config.stats.alpha == 0.01


def test_the_shipped_configs_pass_the_schema(tmp_path):
    from ubpe.lab.example import example_config
    from ubpe.lab.provenance import REPO_ROOT

    path = tmp_path / "experiment.toml"
    path.write_text(example_config(path.name))
    load_config(path)
    if REPO_ROOT is not None:  # a wheel install has no experiments/
        for shipped in sorted((REPO_ROOT / "experiments" / "configs").glob("*.toml")):
            load_config(shipped)


def _wrong_value(key: str):
    """A value no rule of the key accepts: a table where a scalar or list is due, else a string."""
    return "not a table" if key in ("grid", "encoders", "statistics", "downstream", "beam") else {"x": 1}


@pytest.mark.parametrize("table, key", [(t, k) for t, keys in TABLES.items()
                                        for k in keys if t not in ("", "comparisons", "datasets", "vocabularies")]
                         + [("", k) for k in TABLES[""] if k != "description"])
def test_every_key_refuses_a_wrong_type_by_its_dotted_name(table, key):
    data = tomllib.loads(FILES)
    if table:
        data.setdefault(table, {})[key] = _wrong_value(key)
    else:
        data[key] = _wrong_value(key)
    with pytest.raises(ConfigError, match=f"{table + '.' if table else ''}{key}"):
        parse_config(data)


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12))
def test_an_unknown_key_is_refused_in_every_table(key):
    for table in ("grid", "encoders", "statistics", "downstream", "beam"):
        if key in TABLES[table]:
            continue
        data = tomllib.loads(FILES)
        data[table] = {key: 1}
        with pytest.raises(ConfigError, match=f"unknown key {table}.{key}"):
            parse_config(data)


def test_suggestions_are_close_matches_only():
    assert suggest("n_candidate", TABLES["grid"]) == " (did you mean n_candidates?)"
    assert suggest("qqqq", TABLES["grid"]) == ""
