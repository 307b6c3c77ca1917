"""End to end: the ``ubpe`` command line run as a user runs it (``python -m ubpe``).

Every command runs in ``tmp_path``; nothing touches the working tree or the network.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"
CORPUS = [
    "the cat sat on the mat",
    "the dog sat on the log",
    "a cat and a dog met on the mat",
    "the cat saw the dog and the dog saw the cat",
] * 5


def run(tmp_path: Path, *args: str, stdin: str | None = None, ok: bool = True) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": ""}
    env.pop("UBPE_TRACEBACK", None)
    result = subprocess.run(
        [sys.executable, "-m", "ubpe", *args], cwd=tmp_path, input=stdin, capture_output=True,
        text=True, env=env, timeout=120,
    )
    if ok:
        assert result.returncode == 0, result.stderr
    return result


def assert_one_line_error(result: subprocess.CompletedProcess, *words: str) -> None:
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("ubpe: error: ")
    assert "Traceback" not in result.stderr
    for word in words:
        assert word in lines[0]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory) -> Path:
    """A text corpus and a universal model fitted from it by the CLI."""
    path = tmp_path_factory.mktemp("cli")
    (path / "corpus").mkdir()
    (path / "corpus" / "a.txt").write_text("\n".join(CORPUS[:10]) + "\n")
    (path / "corpus" / "sub").mkdir()
    (path / "corpus" / "sub" / "b.txt").write_text("\n".join(CORPUS[10:]) + "\n")
    (path / "corpus" / "skip.md").write_text("ignored by --glob")
    result = run(path, "fit", "corpus", "--glob", "*.txt", "-o", "model.json", "--n-tokens", "40",
                 "--break-tokens", " ")
    assert "fitted a universal model on 20 documents" in result.stderr
    return path


def test_fit_writes_a_model_that_ubpe_loads(workdir):
    import ubpe

    tok = ubpe.load(workdir / "model.json")
    assert isinstance(tok, ubpe.UBPE) and tok.n_base < len(tok) <= 40
    assert tok.decode(tok.encode("the cat sat")[0][0]) == "the cat sat"


def test_fit_from_stdin_classic_quiet(workdir, tmp_path):
    result = run(tmp_path, "fit", "-", "-o", "classic.json", "--variant", "classic", "--n-tokens", "30",
                 "--regex", r"\w+|\W", "-q", stdin="\n\n".join(CORPUS), )
    assert result.stderr == ""
    import ubpe

    tok = ubpe.load(tmp_path / "classic.json")
    assert isinstance(tok, ubpe.UBPEClassic) and tok.regex_str == r"\w+|\W"


def test_fit_paragraphs_and_known_words(tmp_path):
    (tmp_path / "words.txt").write_text("the cat\n")
    (tmp_path / "doc.txt").write_text("\n\n".join(CORPUS))
    run(tmp_path, "fit", "doc.txt", "-o", "m.json", "--docs-per", "paragraph", "--known-words", "words.txt",
        "--n-tokens", "45", "-q")
    out = run(tmp_path, "encode", "m.json", "--text", "the cat", "--format", "json").stdout
    import ubpe

    tok = ubpe.load(tmp_path / "m.json")
    assert json.loads(out)["tokens"] == [tok.known_words["the cat"]]


def test_fit_integer_sequences_from_lines_and_npy(tmp_path):
    rng = np.random.default_rng(0)
    rows = rng.integers(0, 8, size=(30, 20))
    np.save(tmp_path / "walk.npy", rows)
    (tmp_path / "walk.txt").write_text("\n".join(" ".join(map(str, r)) for r in rows) + "\n")
    run(tmp_path, "fit", "walk.npy", "-o", "a.json", "--n-tokens", "30", "-q")
    run(tmp_path, "fit", "--ints", "walk.txt", "-o", "b.json", "--n-tokens", "30", "--alphabet", "8", "-q")
    assert json.loads((tmp_path / "a.json").read_text())["body"]["vocabulary"] == \
        json.loads((tmp_path / "b.json").read_text())["body"]["vocabulary"]
    ids = run(tmp_path, "encode", "a.json", "walk.txt").stdout.splitlines()
    assert len(ids) == 30
    back = run(tmp_path, "decode", "a.json", stdin="\n".join(ids) + "\n").stdout.splitlines()
    assert back == [" ".join(map(str, r)) for r in rows]
    view = run(tmp_path, "view", "a.json", "--text", "1 2 3", "--no-color").stdout
    assert view.startswith("[") and "1" in view


def test_encode_plain_json_top_n_and_decode_round_trip(workdir):
    plain = run(workdir, "encode", "model.json", "corpus/a.txt").stdout.splitlines()
    assert len(plain) == 10 and all(line.split() for line in plain)
    decoded = run(workdir, "decode", "model.json", stdin="\n".join(plain) + "\n").stdout
    assert decoded == "\n".join(CORPUS[:10]) + "\n"

    records = run(workdir, "encode", "model.json", "--text", "the cat", "--top-n", "3", "--format", "json").stdout
    encodings = json.loads(records)["encodings"]
    assert 1 < len(encodings) <= 3
    assert [e["score"] for e in encodings] == sorted((e["score"] for e in encodings), reverse=True)
    # decode reads encode's JSON records too (the best encoding)
    assert run(workdir, "decode", "model.json", stdin=records).stdout == "the cat\n"

    top = run(workdir, "encode", "model.json", "--text", "the cat", "--top-n", "2").stdout
    assert top.count("\t") == 2 and top.endswith("\n\n")


def test_encode_with_another_encoder_and_options(workdir):
    ranked = run(workdir, "encode", "model.json", "--text", "the dog", "--encoder", "ranked").stdout
    dropout = run(workdir, "encode", "model.json", "--text", "the dog", "--encoder", "dropout",
                  "--option", "p=1.0").stdout
    assert len(dropout.split()) == len("the dog") >= len(ranked.split())


def test_encode_view_marks_boundaries(workdir):
    plain = run(workdir, "encode", "model.json", "--text", "the cat sat", "--view").stdout
    assert plain.replace("|", "") == "the cat sat\n" and "|" in plain
    colored = run(workdir, "encode", "model.json", "--text", "the cat sat", "--view", "--color").stdout
    assert "\x1b[48;5;" in colored and "|" not in colored
    many = run(workdir, "encode", "model.json", "--text", "the cat", "--view", "--top-n", "3").stdout
    lines = [line for line in many.splitlines() if line]
    assert lines[0].startswith("#1") and lines[1].startswith("#2")
    # aligned: the same symbol in the same column on every line
    assert len({line.index("t", 10) for line in lines}) == 1


def test_view_html_is_self_contained_and_escaped(workdir, tmp_path):
    run(tmp_path, "view", str(workdir / "model.json"), "--text", "the <cat> & dog", "--html", "out.html",
        "--top-n", "2", "-q", ok=False)  # '<' is not in the alphabet: an error, not a page
    assert not (tmp_path / "out.html").exists()
    run(tmp_path, "view", str(workdir / "model.json"), "--text", "the cat", "--html", "out.html", "--top-n", "2")
    page = (tmp_path / "out.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page
    assert 'title="id ' in page and page.count("<tr>") == 2


def test_inspect_lists_tokens_tree_and_coverage(workdir):
    out = run(workdir, "inspect", "model.json", "--top", "3", "--tree", "the", "--coverage", "corpus").stdout
    assert re.search(r"vocabulary +\d+ ids: 14 base", out)
    assert "longest tokens" in out and "highest weights (idf)" in out
    tree = out.split("merge tree of the")[1]
    assert "'the'" in tree and ("├── " in tree or "its parts" in tree)
    assert "tokens per symbol" in out
    report = json.loads(run(workdir, "inspect", "model.json", "--format", "json", "--top", "2").stdout)
    assert report["variant"] == "universal" and len(report["longest"]) == 2


def test_encode_rerank(workdir):
    import ubpe

    tok = ubpe.load(workdir / "model.json")
    args = ("encode", "model.json", "--text", "the cat sat", "--top-n", "5", "--format", "json")
    plain = json.loads(run(workdir, *args).stdout)["encodings"]
    fewest = json.loads(run(workdir, *args, "--rerank", "fewest").stdout)["encodings"]
    assert [(e["tokens"], e["score"]) for e in fewest] == [
        (r.tokens, r.original) for r in tok.encode("the cat sat", top_n=5, rerank="fewest")]
    assert [len(e["tokens"]) for e in fewest] == sorted(len(e["tokens"]) for e in plain)
    assert all(e["rerank"] == -len(e["tokens"]) for e in fewest)
    frequent = json.loads(run(workdir, *args, "--rerank", "mean_frequency").stdout)["encodings"]
    keys = [e["rerank"] for e in frequent]
    assert keys == sorted(keys, reverse=True) and all(0 < k <= 1 for k in keys)
    lines = run(workdir, *args[:-2], "--rerank", "fewest").stdout.splitlines()
    assert [len(line.split("\t")[1].split()) for line in lines if line] == [len(e["tokens"]) for e in fewest]


def test_inspect_ambiguity(workdir):
    import ubpe

    tok = ubpe.load(workdir / "model.json")
    out = run(workdir, "inspect", "model.json", "--ambiguity", "corpus/a.txt", "--top", "2").stdout
    assert "ambiguity (p ∝ exp" in out and "entropy per symbol (nats)" in out
    report = json.loads(run(workdir, "inspect", "model.json", "--ambiguity", "corpus/a.txt", "--format", "json",
                            "--temperature", "0.5").stdout)["ambiguity"]
    assert report["documents"] == 10 and report["temperature"] == 0.5 and len(report["documents shown"]) == 10
    first = tok.ambiguity(CORPUS[0], temperature=0.5)
    row = report["documents shown"][0]
    assert row["segmentations"] == str(first.n_segmentations) and row["symbols"] == len(CORPUS[0])
    assert row["p(own encoding)"] == pytest.approx(first.encoding_probability)
    total = sum(tok.ambiguity(doc, temperature=0.5).entropy for doc in CORPUS[:10])
    assert report["entropy per symbol (nats)"] == pytest.approx(total / sum(map(len, CORPUS[:10])), abs=1e-4)


@pytest.mark.long  # several CLI processes over real vocabularies (~2 s)
def test_ambiguity_and_rerank_on_imported_and_bytelevel_models(tmp_path):
    """Capabilities, not types: an imported sentencepiece model has lattices (and token
    frequencies once weights are fitted); a byte-level model has neither."""
    spm = pytest.importorskip("sentencepiece")
    import io

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(CORPUS), model_writer=out, model_type="unigram",
                                   vocab_size=30, hard_vocab_limit=False, minloglevel=2)
    (tmp_path / "u.model").write_bytes(out.getvalue())
    (tmp_path / "c.txt").write_text("\n".join(CORPUS[:4]) + "\n")
    report = json.loads(run(tmp_path, "inspect", "u.model", "--ambiguity", "c.txt", "--format", "json").stdout)
    rows = report["ambiguity"]["documents shown"]
    assert len(rows) == 4 and all(r["p(own encoding)"] == pytest.approx(r["p(best)"]) for r in rows)
    fewest = run(tmp_path, "encode", "u.model", "--text", "the cat", "--encoder", "fewest", "--top-n", "3",
                 "--rerank", "fewest", "--format", "json").stdout
    lengths = [len(e["tokens"]) for e in json.loads(fewest)["encodings"]]
    assert lengths == sorted(lengths)
    assert_one_line_error(run(tmp_path, "encode", "u.model", "--text", "the cat", "--encoder", "fewest",
                              "--top-n", "2", "--rerank", "mean_frequency", ok=False), "fit_weights")
    (tmp_path / "t.txt").write_text("\n".join(TRAIN))
    # our format, which records the pattern (a .tiktoken file of ours would add a warning line:
    # it records none, see ubpe.io.tiktoken)
    run(tmp_path, "fit", "t.txt", "--variant", "bytelevel", "--n-tokens", "300", "-o", "b.json", "-q")
    assert_one_line_error(run(tmp_path, "inspect", "b.json", "--ambiguity", "t.txt", ok=False),
                          "--ambiguity", "bytelevel")
    assert_one_line_error(run(tmp_path, "encode", "b.json", "--text", "the", "--encoder", "fewest",
                              "--top-n", "2", "--rerank", "mean_frequency", ok=False), "bytelevel")
    two = run(tmp_path, "encode", "b.json", "--text", "the lazy dog", "--encoder", "fewest", "--top-n", "2",
              "--rerank", "fewest").stdout
    assert two.count("\t") == 2


def test_compare_table(workdir):
    out = run(workdir, "compare", "model.json", "--text", "the cat sat on the mat",
              "--encoders", "tfidf,ranked,fewest", "--option", "exact=false").stdout
    ok = run(workdir, "compare", "model.json", "--text", "the cat sat on the mat").stdout
    lines = out.splitlines()
    assert lines[0].split()[:4] == ["encoder", "tokens", "symbols/token", "score"]
    assert [line.split()[0] for line in lines[2:]] == ["tfidf", "ranked", "fewest"]
    assert "additive" not in ok and "longest_token" in ok


def test_compare_per_encoder_option(workdir):
    out = run(workdir, "compare", "model.json", "--text", "the cat", "--encoders", "tfidf,dropout",
              "--option", "dropout.p=1.0", "--format", "json").stdout
    rows = [json.loads(line) for line in out.splitlines()]
    assert rows[1]["encoder"] == "dropout" and rows[1]["n_tokens"] == len("the cat")


def _reference_model(name: str, run_index: int) -> dict:
    fixture = json.loads(gzip.decompress((GOLDEN / f"fit_{name}.json.gz").read_bytes()))
    return {"alphabet": fixture["dumped_alphabet"], **fixture["runs"][run_index]["dump"]}


@pytest.mark.parametrize("name, run_index", [("tiny", 0), ("prose_split", 0), ("walk_split", 1), ("prose_regex", 3)])
def test_convert_reference_round_trip_is_identical(tmp_path, name, run_index):
    fixture = json.loads(gzip.decompress((GOLDEN / f"fit_{name}.json.gz").read_bytes()))
    variant = fixture["runs"][run_index]["variant"]
    reference = _reference_model(name, run_index)
    (tmp_path / "ref.json").write_text(json.dumps(reference))
    run(tmp_path, "convert", "ref.json", "ours.json", "--variant", variant, "-q")
    assert json.loads((tmp_path / "ours.json").read_text())["format"] == "ubpe-model"
    run(tmp_path, "convert", "ours.json", "back.json", "--to", "ubpe030", "-q")
    back = json.loads((tmp_path / "back.json").read_text())
    back.pop("ubpe_model")  # what the reference's fields cannot hold (tests/spec/test_ubpe030_roundtrip.py)
    for field in ("break_tokens", "stop_tokens"):  # sets in the reference: order is arbitrary
        for model in (back, reference):
            if field in model:
                model[field] = sorted(model[field])
    assert back == reference


def test_convert_guesses_classic_reference_json(tmp_path):
    fixture = json.loads(gzip.decompress((GOLDEN / "fit_prose_plain.json.gz").read_bytes()))
    index = next(i for i, r in enumerate(fixture["runs"]) if r["variant"] == "classic")
    (tmp_path / "ref.json").write_text(json.dumps(_reference_model("prose_plain", index)))
    result = run(tmp_path, "convert", "ref.json", "ours.json")
    assert "classic" in result.stderr
    assert json.loads((tmp_path / "ours.json").read_text())["body"]["variant"] == "classic"


HELD_OUT = [
    "The quick brown fox jumps over the lazy dog; don't we'll they're 12345 3.14!",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "日本語のテキストと中文的文本。한국어 문장도 있습니다.",
    "مرحبا بالعالم — Γειά σου Κόσμε — हिन्दी पाठ",
    "emoji 🙂🚀👍🏽 and a family 👨‍👩‍👧   trailing spaces   ",
    "tabs\tand\n\nnew lines\r\n  indented\n\tcode(x) { return x**2 }",
]
TRAIN = [
    "the quick brown fox jumps over the lazy dog. It's 2024 and we're testing, they'll see.",
    "Быстрая коричневая лиса прыгает через ленивую собаку. Съешь ещё булок.",
    "日本語の文章です。中文文本也在这里。한국어 텍스트입니다.",
    "مرحبا هذا نص عربي. Γειά σου κόσμε. हिन्दी में पाठ है।",
    "def f(x):\n    return x * 2\n\n\tif x > 3: print(x)  # comment 🙂🚀",
] * 4


@pytest.mark.parametrize("pattern", ["gpt2", "llama3"])  # the presets the README says HF reads as we do
def test_bytelevel_fit_and_hf_tokenizer_json_match_ranked(tmp_path, pattern):
    import tokenizers  # in [test]: a missing oracle is a failure, not a skip
    for i, text in enumerate(TRAIN):
        (tmp_path / f"t{i}.txt").write_text(text)
    run(tmp_path, "fit", *[f"t{i}.txt" for i in range(len(TRAIN))], "--variant", "bytelevel",
        "--docs-per", "file", "--n-tokens", "420", "--pattern", pattern, "--special-token", "<|endoftext|>",
        "-o", "bytes.json", "-q")
    run(tmp_path, "convert", "bytes.json", "tokenizer.json", "-q")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))

    import ubpe

    ours = ubpe.load(tmp_path / "bytes.json")
    for text in HELD_OUT + TRAIN[:5]:
        ids = ours.encode(text)
        assert hf.encode(text, add_special_tokens=False).ids == ids, text
        assert hf.decode(ids) == text
    special = "a<|endoftext|>b"
    assert hf.encode(special).ids == ours.encode(special, allowed_special="all")
    # the CLI's own encode gives the same ids
    cli_ids = run(tmp_path, "encode", "bytes.json", "--text", HELD_OUT[1]).stdout.split()
    assert list(map(int, cli_ids)) == ours.encode(HELD_OUT[1])


def test_bytelevel_tiktoken_export_and_import(tmp_path):
    (tmp_path / "t.txt").write_text("\n".join(TRAIN))
    run(tmp_path, "fit", "t.txt", "--variant", "bytelevel", "--n-tokens", "300", "-o", "b.tiktoken", "-q")
    run(tmp_path, "convert", "b.tiktoken", "b.json", "--pattern", "gpt2", "-q")
    run(tmp_path, "convert", "b.json", "c.tiktoken", "-q")
    assert (tmp_path / "b.tiktoken").read_text() == (tmp_path / "c.tiktoken").read_text()
    out = run(tmp_path, "inspect", "b.tiktoken", "--top", "2", "--tree", "299").stdout
    assert "256 bytes + 44 merged tokens" in out and "merge tree of 299" in out
    compare = run(tmp_path, "compare", "b.json", "--text", "the lazy dog").stdout
    assert "ranked" in compare and "classic" not in compare  # .tiktoken ranks record no merges


@pytest.mark.parametrize(
    "args, words",
    [
        (["encode", "missing.json", "--text", "a"], ["missing.json"]),
        (["encode", "corrupt.json", "--text", "a"], ["corrupt.json", "not valid JSON"]),
        (["encode", "tampered.json", "--text", "a"], ["checksum"]),
        (["encode", "MODEL", "--text", "the cat", "--encoder", "nope"], ["unknown encoder 'nope'"]),
        (["encode", "MODEL", "--text", "snow☃"], ["not in the alphabet"]),
        (["encode", "MODEL", "--text", "the", "--encoder", "classic", "--top-n", "2"], ["top_n"]),
        (["encode", "MODEL", "--text", "the", "--option", "nonsense"], ["key=value"]),
        (["decode", "MODEL", "--ids", "1 two"], ["integers"]),
        (["decode", "MODEL", "--ids", "99999"], ["99999"]),
        (["fit", "missing.txt", "-o", "x.json"], ["missing.txt"]),
        (["fit", "bad.npy", "-o", "x.json"], ["bad.npy"]),
        (["fit", "-", "-o", "no/such/dir/x.json", "--text-missing"], None),
        (["inspect", "MODEL", "--tree", "zzz"], ["zzz"]),
        (["compare", "MODEL", "--text", "the", "--encoders", "tfidf,zzz"], ["zzz"]),
        (["compare", "MODEL", "--text", "the", "--option", "zz=1"], ["'zz'"]),
    ],
)
def test_bad_input_is_one_line_error(workdir, tmp_path, args, words):
    (tmp_path / "corrupt.json").write_text('{"format": "ubpe-model", "body": ')
    document = json.loads((workdir / "model.json").read_text())
    document["body"]["n_tokens"] += 1
    (tmp_path / "tampered.json").write_text(json.dumps(document))
    (tmp_path / "bad.npy").write_text("not numpy")
    args = [str(workdir / "model.json") if a == "MODEL" else a for a in args]
    result = run(tmp_path, *args, ok=False)
    if words is None:  # an unknown flag: argparse's usage error
        assert result.returncode == 2 and "usage:" in result.stderr
        return
    assert_one_line_error(result, *words)


@pytest.mark.parametrize("output, words", [("out.tiktoken", ["byte-level"]), ("tokenizer.json", ["merge-list"]),
                                           ("out.model", ["merge-list"]), ("out.gguf", ["merge-list"])])
def test_convert_to_a_format_that_cannot_hold_the_model_is_one_line_exit_2(workdir, tmp_path, output, words):
    result = run(tmp_path, "convert", str(workdir / "model.json"), output, ok=False)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("ubpe: error: cannot convert: "), result.stderr
    assert all(word in lines[0] for word in words), lines[0]
    assert not (tmp_path / output).exists()


def test_usage_errors_exit_2(tmp_path):
    assert run(tmp_path, ok=False).returncode == 2
    assert run(tmp_path, "frobnicate", ok=False).returncode == 2
    assert run(tmp_path, "encode", "m.json", "--top-n", "0", ok=False).returncode == 2
    assert run(tmp_path, "--version").stdout.startswith("ubpe ")


def test_a_command_builds_and_imports_its_own_parser_only(workdir):
    """``ubpe encode`` adds only its own arguments and imports no other command's module, no
    writer, no lab (a one-shot call's cost, issue 36); ``--help`` still lists every encoder
    and every command."""
    code = ("import sys; from ubpe.cli import main; code = main(sys.argv[1:]); "
            "print(code, sorted(m for m in sys.modules if m.startswith(('ubpe.cli.', 'ubpe.io.write', 'ubpe.lab'))))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    out = subprocess.run([sys.executable, "-c", code, "encode", "model.json", "--text", "the cat"], cwd=workdir,
                         capture_output=True, text=True, env=env, check=True).stdout.splitlines()
    assert out[-1] == "0 ['ubpe.cli.encode', 'ubpe.cli.inputs', 'ubpe.cli.parser']", out
    from ubpe.encoders import available_encoders

    helped = run(workdir, "encode", "--help").stdout
    assert all(name in " ".join(helped.split()) for name in available_encoders())
    listed = run(workdir, "--help").stdout
    assert all(command in listed for command in ("fit", "encode", "decode", "view", "inspect", "compare",
                                                 "convert", "experiment"))


def test_help_before_the_command_is_the_top_level_help(workdir):
    """``ubpe --help encode``: argparse reads the help option first, so the help printed is the
    top-level one, which lists every command (main builds the whole parser for it)."""
    listed = run(workdir, "--help", "encode").stdout
    assert listed.startswith("usage: ubpe [-h]")
    assert all(command in listed for command in ("fit", "encode", "decode", "view", "inspect", "compare",
                                                 "convert", "experiment"))


@pytest.mark.parametrize("columns", ["40", "100", "200"])
def test_help_is_argparses_own_at_the_terminal_width_read_without_shutil(monkeypatch, columns):
    """The parser's help is what argparse's own formatter prints at the terminal's width
    (``COLUMNS``), and neither building the parser nor printing its help asks ``shutil``
    (importing it for a width only a help needs cost a one-shot call ~3 ms)."""
    import argparse
    import shutil

    from ubpe.cli import build_parser

    def no_shutil(*args, **kwargs):
        raise AssertionError("shutil.get_terminal_size called")

    monkeypatch.setenv("COLUMNS", columns)
    with monkeypatch.context() as patched:
        patched.setattr(shutil, "get_terminal_size", no_shutil)
        parser = build_parser("encode")
        encode = next(action for action in parser._actions
                      if isinstance(action, argparse._SubParsersAction)).choices["encode"]
        ours = [encode.format_help(), parser.format_help()]
    for each in (encode, parser):
        each.formatter_class = argparse.HelpFormatter
    assert ours == [encode.format_help(), parser.format_help()]
    assert max(map(len, ours[0].splitlines())) <= int(columns) - 2 or int(columns) < 60


def test_the_sites_command_line_page_shows_every_help_as_help_prints_it():
    """The documentation's command-line page (``docs/reference_pages.py``, from the whole
    parser) expands the helps as ``--help`` does: the encoders' names, no ``%(...)s`` left."""
    from ubpe.encoders import available_encoders

    sys.path.insert(0, str(ROOT / "docs"))
    try:
        from reference_pages import cli_page
    finally:
        sys.path.remove(str(ROOT / "docs"))
    page = cli_page()
    row = next(line for line in page.splitlines() if line.startswith("| `--encoder NAME`"))
    assert all(name in row for name in available_encoders()) and "%(" not in page
    assert all(f"## `ubpe {command}`" in page for command in ("fit", "encode", "convert", "experiment"))


def test_fit_output_folder_must_exist(tmp_path):
    (tmp_path / "t.txt").write_text("abc abc\n")
    result = run(tmp_path, "fit", "t.txt", "-o", "no/such/dir/m.json", ok=False)
    assert_one_line_error(result, "no such directory")


@pytest.mark.parametrize("bug", [KeyError("x"), TypeError("y"), AttributeError("z")])
def test_an_internal_bug_is_not_reported_as_bad_input(monkeypatch, capsys, bug):
    """``main`` turns only ubpe's errors and OSError into exit-1 input errors; a bug exits 70
    with one line asking for a report (issue 28), and ``--debug`` raises it."""
    import ubpe.cli.decode as decode_command
    from ubpe.cli import main

    def broken(args):
        raise bug

    monkeypatch.setattr(decode_command, "run", broken)
    monkeypatch.delenv("UBPE_TRACEBACK", raising=False)
    assert main(["decode", "model.json", "--ids", "1"]) == 70
    assert "internal error" in capsys.readouterr().err
    with pytest.raises(type(bug)):
        main(["--debug", "decode", "model.json", "--ids", "1"])


def test_bad_input_in_process_exits_1(tmp_path, capsys):
    from ubpe.cli import main

    (tmp_path / "model.json").write_text('{"hello": 1}')
    assert main(["decode", str(tmp_path / "model.json"), "--ids", "1"]) == 1
    assert capsys.readouterr().err.startswith("ubpe: error: ")


def test_convert_to_hf_rebinds_the_pattern(tmp_path):
    from ubpe.text.patterns import PATTERNS

    (tmp_path / "t.txt").write_text("\n".join(TRAIN))
    run(tmp_path, "fit", "t.txt", "--variant", "bytelevel", "--n-tokens", "280", "--pattern", "cl100k",
        "-o", "b.json", "-q")
    result = run(tmp_path, "convert", "b.json", "tokenizer.json", "--pattern", "gpt2")
    assert "warning" not in result.stderr and "(HF tokenizer.json)" in result.stderr
    document = json.loads((tmp_path / "tokenizer.json").read_text())
    assert document["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] == PATTERNS["gpt2"]
    assert "hf:bytelevel" in run(tmp_path, "inspect", "tokenizer.json").stdout  # HF: written and read
