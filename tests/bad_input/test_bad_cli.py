"""Bad input through the command line: one row per command line, grouped by the kind of input.

Each row is ``BadRun(name, argv, status, fragment, stdin)``. ``ubpe`` runs in the test's
folder, which holds the models of ``bad_models.model_files`` (``universal.json``,
``bytelevel.json``, ``reference.json``, ``vocab.tiktoken``, ``m.model``, ``tokenizer.json``,
``vocab.gguf``, ``spm.model``) and the inputs below (``c.txt``, ``ints.txt``, ``bad.txt``...). It must exit
with ``status`` (1: bad input, 2: usage error, as the README says), print one
``ubpe: error: ...`` line holding ``fragment`` (usage errors: argparse's usage, then the error
line) and no traceback, and write no output file. To add a case, add a row to its group.
"""

from __future__ import annotations

import io
import re
import shutil
import sys
from typing import NamedTuple

import numpy as np
import pytest

from ubpe.cli import main

from vocab_corpora import whisper_file

# these tests are about how warnings reach the user: the suite's filters (pyproject.toml) do not apply
pytestmark = [pytest.mark.filterwarnings("default::ubpe.errors.VocabularySizeWarning"),
              pytest.mark.filterwarnings("default::ubpe.errors.IgnoredInputWarning")]


class BadRun(NamedTuple):
    name: str
    argv: list[str]
    status: int
    fragment: str
    stdin: bytes | None = None


USAGE, INPUT = 2, 1
# a .tiktoken file whose pattern the reader knows (whisper's, tiktoken's r50k_base): the rows that
# read a .tiktoken model get their one error line and nothing else. ``vocab.tiktoken`` (ours, of a
# gpt2 model) records no pattern, so reading it adds a warning line (ubpe.io.tiktoken).
PUBLISHED_TIKTOKEN = "gpt2.tiktoken"

USAGE_ERRORS = [
    BadRun("no command", [], USAGE, "required: COMMAND"),
    BadRun("unknown command", ["tokenize"], USAGE, "invalid choice: 'tokenize'"),
    BadRun("fit without -o", ["fit", "c.txt"], USAGE, "-o/--output"),
    BadRun("fit unknown option", ["fit", "c.txt", "-o", "o.json", "--colour"], USAGE, "--colour"),
    BadRun("fit --n-tokens word", ["fit", "c.txt", "-o", "o.json", "--n-tokens", "many"], USAGE, "--n-tokens"),
    BadRun("fit --n-candidates float", ["fit", "c.txt", "-o", "o.json", "--n-candidates", "2.5"], USAGE, "--n-candidates"),
    BadRun("fit --variant unknown", ["fit", "c.txt", "-o", "o.json", "--variant", "quantum"], USAGE, "invalid choice: 'quantum'"),
    BadRun("fit --pattern unknown", ["fit", "c.txt", "-o", "o.json", "--pattern", "gpt5"], USAGE, "invalid choice: 'gpt5'"),
    BadRun("fit --regex and --pattern", ["fit", "c.txt", "-o", "o.json", "--regex", "x", "--pattern", "gpt2"], USAGE, "not allowed with"),
    BadRun("fit --docs-per unknown", ["fit", "c.txt", "-o", "o.json", "--docs-per", "page"], USAGE, "invalid choice: 'page'"),
    BadRun("fit --workers word", ["fit", "c.txt", "-o", "o.json", "--workers", "two"], USAGE, "--workers"),
    BadRun("fit --scheduler and --workers", ["fit", "c.txt", "-o", "o.json", "--scheduler", "x", "--workers", "2"], USAGE, "not allowed with"),
    BadRun("encode without model", ["encode"], USAGE, "model"),
    BadRun("encode --top-n 0", ["encode", "universal.json", "--text", "the", "--top-n", "0"], USAGE, "--top-n must be at least 1"),
    BadRun("encode --top-n -2", ["encode", "universal.json", "--text", "the", "--top-n", "-2"], USAGE, "--top-n must be at least 1"),
    BadRun("encode --top-n word", ["encode", "universal.json", "--text", "the", "--top-n", "x"], USAGE, "--top-n"),
    BadRun("encode --format xml", ["encode", "universal.json", "--text", "the", "--format", "xml"], USAGE, "invalid choice: 'xml'"),
    BadRun("encode --rerank unknown", ["encode", "universal.json", "--text", "the", "--rerank", "best"], USAGE, "invalid choice: 'best'"),
    BadRun("decode --format xml", ["decode", "universal.json", "--ids", "1", "--format", "xml"], USAGE, "invalid choice: 'xml'"),
    BadRun("inspect --top 0", ["inspect", "universal.json", "--top", "0"], USAGE, "--top"),
    BadRun("inspect --top -1", ["inspect", "universal.json", "--top", "-1"], USAGE, "--top"),
    BadRun("inspect --temperature word", ["inspect", "universal.json", "--ambiguity", "c.txt", "--temperature", "hot"], USAGE, "--temperature"),
    BadRun("convert --to yaml", ["convert", "universal.json", "x.yaml", "--to", "yaml"], USAGE, "invalid choice: 'yaml'"),
    BadRun("convert --variant bytelevel", ["convert", "reference.json", "x.json", "--variant", "bytelevel"], USAGE, "invalid choice"),
    BadRun("convert --pattern invalid", ["convert", "vocab.tiktoken", "x.json", "--pattern", "("], USAGE, "--pattern"),
    BadRun("convert one argument", ["convert", "universal.json"], USAGE, "output"),
    BadRun("view --top-n 0", ["view", "universal.json", "--text", "the", "--top-n", "0"], USAGE, "--top-n must be at least 1"),
    BadRun("compare --format xml", ["compare", "universal.json", "--text", "the", "--format", "xml"], USAGE, "invalid choice: 'xml'"),
]

PATHS = [
    BadRun("fit missing input", ["fit", "nope.txt", "-o", "o.json"], INPUT, "no such file or directory: nope.txt"),
    BadRun("fit /dev/zero", ["fit", "/dev/zero", "-o", "o.json"], INPUT, "/dev/zero is a device, not a file of documents"),
    BadRun("encode /dev/zero", ["encode", "universal.json", "/dev/zero"], INPUT, "is a device, not a file of documents"),
    BadRun("fit empty folder", ["fit", "empty", "-o", "o.json"], INPUT, "no files matching '*' in directory empty"),
    BadRun("fit glob matches nothing", ["fit", "texts", "--glob", "*.md", "-o", "o.json"], INPUT, "no files matching '*.md'"),
    BadRun("fit -o a folder", ["fit", "c.txt", "-o", "texts"], INPUT, "cannot write texts: it is a directory"),
    BadRun("fit -o in a missing folder", ["fit", "c.txt", "-o", "nowhere/o.json"], INPUT, "no such directory"),
    BadRun("fit -o dangling link folder", ["fit", "c.txt", "-o", "dangling/o.json"], INPUT, "no such directory"),
    BadRun("fit input not UTF-8", ["fit", "bad.txt", "-o", "o.json"], INPUT, "bad.txt is not UTF-8 text"),
    BadRun("fit stdin not UTF-8", ["fit", "-", "-o", "o.json"], INPUT, "stdin is not UTF-8 text", b"ab\xff\n"),
    BadRun("fit an empty file", ["fit", "blank.txt", "-o", "o.json"], INPUT, "the input holds no documents"),
    BadRun("fit a folder as input file list", ["fit", "texts/../nope", "-o", "o.json"], INPUT, "no such file or directory"),
    BadRun("encode missing model", ["encode", "nope.json", "--text", "the"], INPUT, "no such file or directory: nope.json"),
    BadRun("encode model is a folder", ["encode", "texts", "--text", "the"], INPUT, "is a directory"),
    BadRun("encode model is text", ["encode", "c.txt", "--text", "the"], INPUT, "not a ubpe model nor any other"),
    BadRun("encode empty model", ["encode", "blank.txt", "--text", "the"], INPUT, "is an empty file"),
    BadRun("encode missing input", ["encode", "universal.json", "nope.txt"], INPUT, "no such file or directory: nope.txt"),
    BadRun("encode input not UTF-8", ["encode", "universal.json", "bad.txt"], INPUT, "bad.txt is not UTF-8 text"),
    BadRun("decode missing model", ["decode", "nope.json", "--ids", "1"], INPUT, "no such file or directory: nope.json"),
    BadRun("decode missing ids file", ["decode", "universal.json", "nope.txt"], INPUT, "no such file or directory: nope.txt"),
    BadRun("view --html to a folder", ["view", "universal.json", "--text", "the", "--html", "texts"], INPUT, "cannot write texts: it is a directory"),
    BadRun("view --html in a missing folder", ["view", "universal.json", "--text", "the", "--html", "no/x.html"], INPUT, "no such directory"),
    BadRun("inspect missing coverage file", ["inspect", "universal.json", "--coverage", "nope.txt"], INPUT, "no such file or directory: nope.txt"),
    BadRun("inspect missing ambiguity file", ["inspect", "universal.json", "--ambiguity", "nope.txt"], INPUT, "no such file or directory: nope.txt"),
    BadRun("convert missing input", ["convert", "nope.json", "x.json"], INPUT, "no such file or directory"),
    BadRun("convert output a folder", ["convert", "universal.json", "texts"], INPUT, "cannot write texts: it is a directory"),
    BadRun("convert output in a missing folder", ["convert", "universal.json", "no/x.json"], INPUT, "no such directory"),
    BadRun("compare missing input", ["compare", "universal.json", "nope.txt"], INPUT, "no such file or directory: nope.txt"),
]

SETTINGS = [
    BadRun("fit --n-tokens 0", ["fit", "c.txt", "--n-tokens", "0", "-o", "o.json"], INPUT, "--n-tokens must be at least 1, got 0"),
    BadRun("fit --n-tokens -5", ["fit", "c.txt", "--n-tokens", "-5", "-o", "o.json"], INPUT, "--n-tokens must be at least 1"),
    BadRun("fit --n-tokens below the alphabet", ["fit", "c.txt", "--n-tokens", "3", "-o", "o.json"], INPUT, "must be larger than the alphabet"),
    BadRun("fit bytelevel --n-tokens 0", ["fit", "c.txt", "--variant", "bytelevel", "--n-tokens", "0", "-o", "o.json"], INPUT, "--n-tokens must be at least 1"),
    BadRun("fit bytelevel --n-tokens 100", ["fit", "c.txt", "--variant", "bytelevel", "--n-tokens", "100", "-o", "o.json"], INPUT, "`n_tokens` must be in 256.."),
    BadRun("fit --n-candidates 0", ["fit", "c.txt", "--n-candidates", "0", "-o", "o.json"], INPUT, "`n_candidates` must be at least 1"),
    BadRun("fit --n-candidates 2**40", ["fit", "c.txt", "--n-candidates", str(2**40), "-o", "o.json"], INPUT, "`n_candidates` must be at most"),
    BadRun("fit --regex invalid", ["fit", "c.txt", "--regex", "(", "-o", "o.json"], INPUT, "not a valid regex"),
    BadRun("fit --alphabet missing symbols", ["fit", "c.txt", "--alphabet", "ab", "-o", "o.json"], INPUT, "is not in the alphabet"),
    BadRun("fit --known-words missing file", ["fit", "c.txt", "--known-words", "nope.txt", "-o", "o.json"], INPUT, "nope.txt"),
    BadRun("fit --workers 0", ["fit", "c.txt", "--workers", "0", "-o", "o.json"], INPUT, "--workers must be at least 1"),
    BadRun("fit --ints on text", ["fit", "c.txt", "--ints", "-o", "o.json"], INPUT, "expected integers"),
    BadRun("fit --ints --regex", ["fit", "ints.txt", "--ints", "--regex", "x", "-o", "o.json"], INPUT, "a regex splits text"),
    BadRun("fit --ints --alphabet letters", ["fit", "ints.txt", "--ints", "--alphabet", "abc", "-o", "o.json"], INPUT, "--alphabet is a size N"),
    BadRun("fit --ints bytelevel", ["fit", "ints.txt", "--ints", "--variant", "bytelevel", "-o", "o.json"], INPUT, "fits text, not integer sequences"),
    BadRun("fit .npy of floats", ["fit", "floats.npy", "-o", "o.json"], INPUT, "holds float64 values, not integers"),
    BadRun("fit .npy of 3-D", ["fit", "cube.npy", "-o", "o.json"], INPUT, "has 3 dimensions"),
    BadRun("fit .npy not numpy", ["fit", "fake.npy", "-o", "o.json"], INPUT, "is not a numeric .npy array"),
    BadRun("fit bytelevel special token twice", ["fit", "c.txt", "--variant", "bytelevel", "--special-token", "<a>", "--special-token", "<a>", "-o", "o.json"], INPUT, "special tokens given twice"),
]

DOCUMENTS = [
    BadRun("encode symbol outside the alphabet", ["encode", "universal.json", "--text", "zebra"], INPUT, "'z'"),
    BadRun("encode ints on a text model", ["encode", "universal.json", "--ints", "--text", "1 2"], INPUT, "not in the alphabet"),
    BadRun("encode text on an int model", ["encode", "ints.json", "--text", "abc"], INPUT, "expected integers"),
    BadRun("encode int outside the alphabet", ["encode", "ints.json", "--text", "1 99"], INPUT, "99"),
    BadRun("fit --ints past int64", ["fit", "--ints", "huge.txt", "-o", "o.json"], INPUT,
           "huge.txt:1: 18446744073709551615 is outside the 64-bit integers a symbol can be"),
    BadRun("encode --ints past int64", ["encode", "ints.json", "--text", "1 18446744073709551615"], INPUT,
           "--text: 18446744073709551615 is outside the 64-bit integers"),
    BadRun("compare --encoders ''", ["compare", "universal.json", "--text", "the", "--encoders", ""], INPUT,
           "--encoders needs at least one encoder name"),
    BadRun("compare --encoders ' , '", ["compare", "universal.json", "--text", "the", "--encoders", " , "], INPUT,
           "--encoders needs at least one encoder name"),
    BadRun("compare two documents", ["compare", "universal.json", "--text", "the", "--text", "cat"], INPUT, "compare takes one document, got 2"),
    BadRun("compare symbol outside", ["compare", "universal.json", "--text", "zebra"], INPUT, "'z'"),
    BadRun("view symbol outside", ["view", "universal.json", "--text", "zebra"], INPUT, "'z'"),
]

IDS = [
    BadRun("decode -1", ["decode", "bytelevel.json", "--ids", "-1"], INPUT, "token -1 is not in the vocabulary"),
    BadRun("decode id too large", ["decode", "universal.json", "--ids", "999"], INPUT, "token 999 is not in the vocabulary"),
    BadRun("decode a word", ["decode", "universal.json", "--ids", "one two"], INPUT, "expected integers, got 'one two'"),
    BadRun("decode a float", ["decode", "universal.json", "--ids", "1.5"], INPUT, "expected integers"),
    BadRun("decode JSON of strings", ["decode", "universal.json", "--ids", '["a"]'], INPUT, "expected integers"),
    BadRun("decode JSON object", ["decode", "universal.json", "--ids", '{"x": 1}'], INPUT, "--ids: expected integers, got '{\"x\": 1}'"),
    BadRun("decode 2**70", ["decode", "universal.json", "--ids", str(2**70)], INPUT, "is not in the vocabulary"),
    BadRun("decode gguf id too large", ["decode", "vocab.gguf", "--ids", "99999"], INPUT, "token 99999 is not in the vocabulary"),
    BadRun("decode spm -3", ["decode", "spm.model", "--ids", "-3"], INPUT, "token -3 is not in the vocabulary"),
    BadRun("decode tiktoken -1", ["decode", PUBLISHED_TIKTOKEN, "--ids", "-1"], INPUT, "token -1 is not in the vocabulary"),
    BadRun("decode hf too large", ["decode", "tokenizer.json", "--ids", "5000"], INPUT, "token 5000 is not in the vocabulary"),
    BadRun("decode minbpe -1", ["decode", "m.model", "--ids", "-1"], INPUT, "token -1 is not in the vocabulary"),
    BadRun("inspect --tree unknown id", ["inspect", "universal.json", "--tree", "999"], INPUT, "token 999 is not in the vocabulary"),
    BadRun("inspect --tree unknown piece", ["inspect", "universal.json", "--tree", "zebra"], INPUT, "no token stands for 'zebra'"),
]

ENCODER_OPTIONS = [
    BadRun("unknown encoder", ["encode", "universal.json", "--text", "the", "--encoder", "nope"], INPUT, "nope"),
    BadRun("option without =", ["encode", "universal.json", "--text", "the", "--option", "p"], INPUT, "encoder options are key=value, got 'p'"),
    BadRun("unknown option", ["encode", "universal.json", "--text", "the", "--option", "colour=1"], INPUT, "colour"),
    BadRun("dropout p 2", ["encode", "universal.json", "--text", "the", "--encoder", "dropout", "--option", "p=2"], INPUT, "p"),
    BadRun("dropout seed -1", ["encode", "universal.json", "--text", "the", "--encoder", "dropout", "--option", "seed=-1"], INPUT, "seed"),
    BadRun("exact not a bool", ["encode", "universal.json", "--text", "the", "--option", "exact=maybe"], INPUT, "exact"),
    BadRun("weights from a missing file", ["encode", "universal.json", "--text", "the", "--encoder", "additive", "--option", "weights=@nope.npy"], INPUT, "nope.npy"),
    BadRun("weights from a text file", ["encode", "universal.json", "--text", "the", "--encoder", "additive", "--option", "weights=@c.txt"], INPUT, "c.txt is not valid JSON"),
    BadRun("top-n on a top-1 encoder", ["encode", "universal.json", "--text", "the", "--encoder", "classic", "--top-n", "3"], INPUT, "top_n"),
    BadRun("tiktoken model encoder unknown", ["encode", PUBLISHED_TIKTOKEN, "--text", "the", "--encoder", "nope"], INPUT, "nope"),
    BadRun("compare unknown encoder", ["compare", "universal.json", "--text", "the", "--encoders", "tfidf,nope"], INPUT, "nope"),
    BadRun("compare option nobody takes", ["compare", "universal.json", "--text", "the", "--option", "colour=1"], INPUT, "no encoder compared takes the option 'colour'"),
    BadRun("inspect --coverage unknown encoder", ["inspect", "universal.json", "--coverage", "c.txt", "--encoder", "nope"], INPUT, "nope"),
    BadRun("inspect --ambiguity temperature 0", ["inspect", "universal.json", "--ambiguity", "c.txt", "--temperature", "0"], INPUT, "temperature"),
]

MODELS = [
    BadRun("truncated model", ["encode", "cut.json", "--text", "the"], INPUT, "not valid JSON"),
    BadRun("corrupt model", ["inspect", "corrupt.json"], INPUT, "checksum does not match"),
    BadRun("random bytes model", ["inspect", "noise.bin"], INPUT, "not a ubpe model nor any other"),
    BadRun("convert gguf to ubpe", ["convert", "vocab.gguf", "x.json"], USAGE, "cannot hold a gguf:gpt2 model"),
    BadRun("convert universal to tiktoken", ["convert", "universal.json", "x.tiktoken"], USAGE, "cannot hold a universal model"),
    BadRun("convert universal to hf", ["convert", "universal.json", "tokenizer2.json", "--to", "hf"], USAGE, "cannot hold a universal model"),
    BadRun("convert bytelevel to ubpe030", ["convert", "bytelevel.json", "x.json", "--to", "ubpe030"], USAGE, "cannot hold a bytelevel model"),
    BadRun("convert reference as the wrong variant", ["convert", "reference.json", "x.json", "--variant", "universal"], INPUT, "holds a classic model"),
    BadRun("inspect --ambiguity on tiktoken", ["inspect", PUBLISHED_TIKTOKEN, "--ambiguity", "c.txt"], INPUT, "segmentation lattices"),
]

GROUPS = {
    "usage": USAGE_ERRORS, "paths": PATHS, "fit settings": SETTINGS, "documents": DOCUMENTS, "ids": IDS,
    "encoder options": ENCODER_OPTIONS, "models": MODELS,
}
ROWS = [pytest.param(row, id=f"{group}: {row.name}") for group, rows in GROUPS.items() for row in rows]


@pytest.fixture
def workdir(m, tmp_path, monkeypatch):
    for path in m.files.values():
        shutil.copy(path, tmp_path / path.name)
    m.i.save(tmp_path / "ints.json")
    (tmp_path / "c.txt").write_text("the cat sat on the mat\nthe dog sat\n" * 3)
    (tmp_path / "z.txt").write_text("zebra\n")
    (tmp_path / "ints.txt").write_text("1 2 3 1 2\n3 1 2\n")
    (tmp_path / "neg.txt").write_text("1 -1 2\n")
    (tmp_path / "huge.txt").write_text("1 18446744073709551615 2\n")
    (tmp_path / "bad.txt").write_bytes(b"ab\xff cd\n")
    (tmp_path / "blank.txt").write_text("")
    (tmp_path / "texts").mkdir()
    (tmp_path / "texts" / "a.txt").write_text("the cat\n")
    (tmp_path / "empty").mkdir()
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    np.save(tmp_path / "floats.npy", np.ones(4))
    np.save(tmp_path / "cube.npy", np.ones((2, 2, 2), np.int64))
    (tmp_path / "fake.npy").write_bytes(b"not numpy")
    text = (tmp_path / "universal.json").read_text()
    (tmp_path / "cut.json").write_text(text[: len(text) // 2])
    # one more weight than tokens, the checksum left as it was (whichever spelling the writer used)
    corrupt = re.sub(r'"weights": ?\[', '"weights":[1e9,', text, count=1)
    assert corrupt != text, "the model file holds no weights to corrupt"
    (tmp_path / "corrupt.json").write_text(corrupt)
    (tmp_path / "noise.bin").write_bytes(bytes(range(3, 250)) * 4)
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.mark.parametrize("row", ROWS)
def test_bad_command_line_is_a_clear_error(workdir, monkeypatch, capsys, row):
    if PUBLISHED_TIKTOKEN in row.argv:
        shutil.copy(whisper_file(PUBLISHED_TIKTOKEN), workdir / PUBLISHED_TIKTOKEN)
    before = {p.name for p in workdir.iterdir()}
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(row.stdin or b""), encoding="utf-8"))
    try:
        status = main(row.argv)
    except SystemExit as exit_info:  # argparse
        status = exit_info.code
    err = capsys.readouterr().err
    assert status == row.status, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert lines and lines[-1].startswith("ubpe"), err
    assert "error: " in lines[-1] and row.fragment in lines[-1], err
    if row.status == INPUT:
        assert len(lines) == 1, err
    assert {p.name for p in workdir.iterdir()} == before  # no output written


def test_warnings_are_one_line_like_errors(workdir, capsys):
    """A fit that ends smaller than asked warns as ``ubpe: warning: ...``, not as Python's
    ``file.py:118: VocabularySizeWarning: ...`` with a source line."""
    assert main(["fit", "c.txt", "-o", "o.json", "--n-tokens", "1000"]) == 0
    lines = capsys.readouterr().err.strip().splitlines()
    warned = [line for line in lines if "warning" in line]
    assert warned == [line for line in warned if line.startswith("ubpe: warning: n_tokens=1000 was asked for")]
    assert len(warned) == 1 and not any(".py:" in line for line in lines)


@pytest.mark.parametrize("error", [ZeroDivisionError("division by zero"), RecursionError("too deep"),
                                   KeyError("lost"), MemoryError()])
def test_a_bug_is_one_line_asking_for_a_report(workdir, monkeypatch, capsys, error):
    """Issue 28, point 5: an exception that is not an input error (a bug in ubpe) prints one
    line and exit status 70 (out of memory: an input error, status 1); ``--debug`` shows the
    traceback instead."""
    import ubpe.cli.decode as decode_command

    def broken(args):
        raise error

    monkeypatch.setattr(decode_command, "run", broken)
    monkeypatch.delenv("UBPE_TRACEBACK", raising=False)
    status = main(["decode", str(workdir / "model.json"), "--ids", "1"])
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    if isinstance(error, MemoryError):
        assert (status, err) == (1, "ubpe: error: out of memory\n")
    else:
        assert status == 70
        assert err.startswith(f"ubpe: internal error: {type(error).__name__}: ") and "please report it" in err
    with pytest.raises(type(error)):
        main(["--debug", "decode", str(workdir / "model.json"), "--ids", "1"])


def test_pipes_and_process_substitution_work(workdir, capsys):
    """Issue 28, point 5: a FIFO (what ``<(...)`` gives) is read as a file of documents and as
    a model (copied first: readers open a model path twice), not "no such file"."""
    import os
    import threading

    def feed(path, data):
        with open(path, "wb") as fifo:
            fifo.write(data)

    for name, data in (("docs.fifo", b"the cat\n"), ("model.fifo", (workdir / "universal.json").read_bytes())):
        os.mkfifo(workdir / name)
        threading.Thread(target=feed, args=(workdir / name, data), daemon=True).start()
    assert main(["encode", "model.fifo", "docs.fifo"]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    assert main(["encode", "universal.json", "--text", "the cat"]) == 0
    assert capsys.readouterr().out == out
