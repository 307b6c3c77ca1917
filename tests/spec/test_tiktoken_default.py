"""One default pattern for ``.tiktoken`` files, API and CLI alike (issue 13, item 1): cl100k,
``ubpe.io.tiktoken.DEFAULT_TIKTOKEN_PATTERN``. Once the CLI assumed gpt2 and the API cl100k."""

from __future__ import annotations

import json
import warnings

import pytest

import ubpe
from ubpe.text.patterns import DEFAULT_PATTERN, PATTERNS
from ubpe.models.bytelevel import ByteLevelBPE
from ubpe.cli import main
from ubpe.errors import IgnoredInputWarning
from ubpe.io.tiktoken import DEFAULT_TIKTOKEN_PATTERN

TEXTS = ["the cat's 123 dogs", "hello   world!!"] * 5


def _write(tmp_path, pattern):
    tok = ByteLevelBPE().fit(TEXTS, n_tokens=270, pattern=pattern, quiet=True)
    path = tmp_path / "vocab.tiktoken"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok.save_tiktoken(path)
    return path


def test_the_default_is_the_librarys():
    assert DEFAULT_TIKTOKEN_PATTERN == DEFAULT_PATTERN == "cl100k"


def test_api_and_cli_read_a_tiktoken_file_with_the_same_pattern(tmp_path, capsys):
    path = _write(tmp_path, "gpt2")  # fitted with gpt2's " 123" pieces: the two patterns give other ids
    assert ubpe.load(path).pattern == PATTERNS["cl100k"]
    assert ByteLevelBPE.load_tiktoken(path).pattern == PATTERNS["cl100k"]
    assert main(["convert", str(path), str(tmp_path / "ours.json"), "-q"]) == 0
    assert json.loads((tmp_path / "ours.json").read_text())["body"]["pattern"] == PATTERNS["cl100k"]
    text = "the cat 0123"  # gpt2 keeps "0123" whole (so "123" merges), cl100k cuts "012" "3"
    assert main(["encode", str(path), "--text", text]) == 0
    ids = [int(i) for i in capsys.readouterr().out.split()]
    assert ids == ubpe.load(path).encode(text) != ubpe.load(path, pattern="gpt2").encode(text)


def test_an_explicit_pattern_wins(tmp_path):
    path = _write(tmp_path, "gpt2")
    assert ubpe.load(path, pattern="gpt2").pattern == PATTERNS["gpt2"]


def test_writing_a_model_of_another_pattern_warns(tmp_path):
    tok = ByteLevelBPE().fit(TEXTS, n_tokens=270, pattern="gpt2", quiet=True)
    with pytest.warns(IgnoredInputWarning, match=r"\(gpt2\) is not the cl100k that readers assume: read it with pattern='gpt2'"):
        tok.save_tiktoken(tmp_path / "x.tiktoken")
    default = ByteLevelBPE().fit(TEXTS, n_tokens=270, quiet=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        default.save_tiktoken(tmp_path / "y.tiktoken")
