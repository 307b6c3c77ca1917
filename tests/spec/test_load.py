"""``ubpe.load`` finds every format by its content, whatever the file is called."""

from __future__ import annotations

import io
import shutil

import pytest
import sentencepiece as spm

import ubpe
from ubpe.errors import ModelFormatError
from ubpe.io import detect, supported

from cli_checks import cli_encode_and_compare_agree
from vocab_corpora import shipped_file, text_lines, vocab_path, whisper_file


@pytest.mark.parametrize("name, variant", [("gpt-2", "gguf:gpt2"), ("llama-spm", "gguf:llama")])
def test_gguf_is_detected_under_any_name(name, variant, tmp_path):
    renamed = tmp_path / "vocabulary.bin"
    shutil.copyfile(vocab_path(name), renamed)
    assert detect(renamed) == "gguf"
    tok = ubpe.load(renamed)
    assert tok.variant == variant
    line = text_lines(limit=1)[0]
    assert tok.decode(tok.encode(line)).strip() == line.strip()


def test_sentencepiece_is_detected_under_any_name(tmp_path):
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(text_lines(limit=2000)), model_writer=out,
                                   model_type="bpe", vocab_size=400, minloglevel=2, num_threads=1)
    path = tmp_path / "tokenizer.dat"
    path.write_bytes(out.getvalue())
    assert detect(path) == "sentencepiece"
    tok = ubpe.load(path)
    reference = spm.SentencePieceProcessor(model_proto=out.getvalue())
    for line in text_lines(limit=50):
        assert tok.encode(line) == reference.encode(line)


def test_format_overrides_detection_and_unknown_formats_name_the_known(tmp_path):
    path = tmp_path / "v.gguf"
    shutil.copyfile(vocab_path("gpt-2"), path)
    with pytest.raises(ModelFormatError):
        ubpe.load(path, format="sentencepiece")
    with pytest.raises(ModelFormatError, match="gguf"):
        ubpe.load(path, format="nonsense")
    junk = tmp_path / "junk"
    junk.write_bytes(b"\x00\x01 nothing we know")
    with pytest.raises(ModelFormatError, match="sentencepiece"):
        ubpe.load(junk)
    assert {"gguf", "sentencepiece", "ubpe", "ubpe030", "tiktoken"} <= set(supported("read"))


def _imported_path(name: str) -> str:
    """A GGUF vocabulary of llama.cpp's, or ``"clip"``: CLIP's merges file."""
    if name == "clip":
        return str(shipped_file("open-clip-torch", "*/src/open_clip/bpe_simple_vocab_16e6.txt.gz"))
    return str(vocab_path(name))


@pytest.mark.long
@pytest.mark.parametrize("name", ["llama-bpe", "phi-3", "nomic-bert-moe", "clip"])
def test_imported_models_keep_the_contract_and_the_cli_takes_them(name, capsys):
    from ubpe import Tokenizer
    from ubpe.cli import main

    path = _imported_path(name)
    tok = ubpe.load(path)
    assert isinstance(tok, Tokenizer)
    doc = "Hello world, it's a test"
    (ids, score), = tok.encode_with(doc)
    assert ids == tok.encode(doc) and isinstance(score, float)
    units = tok.pieces(ids)
    joined = b"".join(units).decode() if tok.symbol_unit == "byte" else "".join(units)
    # CLIP lower-cases and writes a space after every word
    seen = "hello world , it 's a test" if name == "clip" else doc
    assert joined.strip() == tok.decode(ids).strip() == seen
    assert tok.piece_to_id(tok.id_to_piece(ids[1])) == ids[1]
    inventory = tok.inventory()
    assert inventory.ids == list(range(tok.n_vocab)) and len(inventory.pieces) == tok.n_vocab

    assert ("clip" if name == "clip" else "gguf") in cli_encode_and_compare_agree(path, doc, ids, capsys)
    assert main(["view", path, "--no-color", "--text", "Hello world"]) == 0
    shown = capsys.readouterr().out.strip().replace("|", "")
    assert shown == ("hello world" if name == "clip" else "Hello world")


def test_loading_one_format_imports_no_other_family(tmp_path):
    """Recognising a file imports no other format's module (the detectors are
    `ubpe.io.sniff`'s), nor a model family another format's reader would build (the byte-level,
    sentencepiece, HF and minbpe models and their kernels)."""
    import subprocess
    import sys

    path = tmp_path / "model.json"
    code = (
        "import sys, ubpe\n"
        "tok = ubpe.UBPE(alphabet='ab', n_tokens=4)\n"
        "tok.fit(['abab', 'abba'], quiet=True)\n"
        f"tok.save({str(path)!r})\n"
        f"assert ubpe.load({str(path)!r}).tokens_mapper == tok.tokens_mapper\n"
        "print(' '.join(m for m in sys.modules if m.startswith(('ubpe.io.', 'ubpe.models.', 'ubpe_native.'))))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    loaded = set(done.stdout.split())
    assert {"ubpe.io.ours", "ubpe.models.ubpe"} <= loaded
    for other in ("io.gguf", "io.sentencepiece", "models.bytelevel", "models.ranked_bpe", "models.sentencepiece", "models.hf", "models.minbpe",
                  "io.hf_import", "ubpe_native._merges", "ubpe_native._spm"):
        assert f"ubpe.{other}" not in loaded and other not in loaded


#: standard modules that a load (and its first encode, and the one-shot CLI
#: call) does without, each 0.3-1.5 ms of a cold start (issue 36): pathlib (it imports urllib
#: and ipaddress), tempfile and shutil (random, bz2, lzma: for written entries of the machine's
#: cache only), threading (`_thread`'s lock is enough), heapq, struct, typing (1.5 ms;
#: `TYPE_CHECKING = False` in its place), re (with enum, ~2 ms: `ubpe.text.literals` finds a few
#: added tokens; `ubpe._lazy.re` where a pattern is needed), json (its package compiles regexes
#: on import: `ubpe.files.loads_json` calls its C scanner), contextlib, hashlib (OpenSSL's libcrypto,
#: ~3 ms: a ``.tiktoken`` file's pin is hashed by CPython's own SHA-256), base64 (it imports re),
#: functools (its import builds a namedtuple, ~1.2 ms: `ubpe._fntools` holds the tools ubpe uses).
#: (mmap is on the path: the machine cache's entries are mapped, ~0.3 ms against ~1.5 ms of
#: reading the 2.2 MB code point classes into memory)
_NOT_ON_A_LOADS_PATH = ("pathlib", "tempfile", "shutil", "threading", "heapq", "struct", "typing", "re",
                        "json", "contextlib", "hashlib", "base64", "functools")
#: a fresh process that records each of those that a statement of ubpe's code imports, or
#: its ``importlib.import_module`` call (a lazy module's first use) (an editable install's
#: loader imports some of them at start-up: sys.modules cannot tell)
_SPY = """
import builtins, importlib, sys
seen, real, real_module = set(), builtins.__import__, importlib.import_module
def spy(name, globals=None, locals=None, fromlist=(), level=0):
    if level == 0 and name in {watch!r} and str((globals or {{}}).get("__name__", "")).startswith("ubpe"):
        seen.add(name)
    return real(name, globals, locals, fromlist, level)
def spy_module(name, package=None):
    if name in {watch!r} and str(sys._getframe(1).f_globals.get("__name__", "")).startswith("ubpe"):
        seen.add(name)
    return real_module(name, package)
builtins.__import__, importlib.import_module = spy, spy_module
{run}
print(" ".join(sorted(seen)), file=sys.stderr)
"""


@pytest.mark.parametrize("kind", ["metaspace", "bert", "model", "bytelevel", "tiktoken"])
def test_a_small_files_load_and_one_shot_cli_import_no_standard_module_they_do_not_need(kind, tmp_path):
    import subprocess
    import sys

    from hf_builders import BUILDERS, bert

    if kind == "model":
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(text_lines(limit=500)), model_writer=out,
                                       model_type="bpe", vocab_size=200, minloglevel=2, num_threads=1)
        path = tmp_path / "tokenizer.model"
        path.write_bytes(out.getvalue())
    elif kind == "tiktoken":  # (whisper's, 50k tokens: a pinned file, whose hash names its pattern)
        path = whisper_file("gpt2.tiktoken")
    else:
        path = tmp_path / "tokenizer.json"
        builder = {"bert": bert, "metaspace": BUILDERS["trained-metaspace"], "bytelevel": BUILDERS["trained-bytelevel"]}
        builder[kind]().save(str(path))
    ubpe.load(path).encode("warm")  # the machine's cache filled: a later process reads it
    sentence = "The quick brown fox, and naïve café owners"  # (not ASCII: the lone surrogates' check runs)
    load = f"import ubpe\nubpe.load({str(path)!r}).encode({sentence!r})"
    cli = ("import runpy\n"
           f"sys.argv = ['ubpe', 'encode', {str(path)!r}, '--text', {sentence!r}]\n"
           "runpy.run_module('ubpe', run_name='__main__', alter_sys=True)")
    for run in (load, cli):
        code = _SPY.format(watch=set(_NOT_ON_A_LOADS_PATH), run=run)
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert done.stderr.split() == [], run


#: what a fitted model's load, encode and decode do not import: the fit's modules and kernels,
#: the `regex` module (~20 ms of a fresh process; compiled only for a `regex_str` or known
#: words), numpy (~60 ms: the reference's load of the same JSON takes ~45 ms in all; session 31)
#: the encoders a first encode does not use, and `typing` and `dataclasses` (~9 ms with the `re`,
#: `enum` and `contextlib` they import; session 32: a batch's chunking imported `ubpe.fit`), and
#: functools (~1.2 ms; `ubpe._fntools`)
_NOT_ON_A_FITTED_MODELS_PATH = ("regex", "ubpe.fit", "ubpe_native._fit", "ubpe_native._parts", "numpy",
                                "ubpe.encoders.paths", "ubpe.encoders.ranked", "ubpe.encoders.sample",
                                "typing", "dataclasses", "functools")


@pytest.mark.parametrize("cls", ["UBPE", "UBPEClassic"])
def test_a_fitted_models_load_and_encode_import_neither_the_fit_nor_regex(cls, tmp_path):
    """The 0.3.0 way (``loads`` of its JSON) and ours (``ubpe.load``), then ``encode``, in a
    fresh process: the modules a fit needs stay unimported (a 0.3.0 user's script waited ~20 ms
    longer for `regex` alone; session 29)."""
    import subprocess
    import sys

    lines = text_lines(limit=300)
    tok = getattr(ubpe, cls)(alphabet=sorted(set("".join(lines)) | set("the cat")), n_tokens=120, break_tokens=" ")
    tok.fit(lines, quiet=True)
    (tmp_path / "model.json").write_text(tok.dumps(), encoding="utf-8")
    # the reference's fields alone (a file ubpe 0.3.0 wrote): a classic model's pairs expanded
    import json

    from ubpe.io.ubpe030 import EXTRA_KEY

    plain = {k: v for k, v in json.loads(tok.dumps()).items() if k != EXTRA_KEY}
    (tmp_path / "plain.json").write_text(json.dumps(plain), encoding="utf-8")
    tok.save(tmp_path / "model.ubpe")
    # (an editable install's loader imports typing at startup: forgotten, an import makes it anew)
    run = (f"import sys\nsys.modules.pop('typing', None)\nstarted = set(sys.modules)\n"
           f"import ubpe\n"
           f"a = ubpe.{cls}.loads(open('model.json', encoding='utf-8').read(), token_type=str)\n"
           f"p = ubpe.{cls}.loads(open('plain.json', encoding='utf-8').read(), token_type=str)\n"
           "b = ubpe.load('model.ubpe')\n"
           "assert a.encode('the cat') == b.encode('the cat') == p.encode('the cat'), 'the loads disagree'\n"
           "assert b.decode(b.encode('the cat')[0][0]) == p.decode(p.encode('the cat')[0][0]) == 'the cat'\n"
           "assert p.encode_batch(['the cat', 'a cat']) == b.encode_batch(['the cat', 'a cat'])\n"
           f"print(' '.join(m for m in {_NOT_ON_A_FITTED_MODELS_PATH!r} if m in sys.modules and m not in started))")
    done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == []
    assert ubpe.load(tmp_path / "model.ubpe").encode("the cat") == tok.encode("the cat")


@pytest.mark.parametrize("order", ["model first", "version then model", "sorted keys"])
def test_a_tokenizer_json_is_detected_whatever_the_order_of_its_keys(order, tmp_path):
    """HF writes ``version``, ``truncation``, ``padding``, ``added_tokens``... then ``model``;
    a file written with its keys in another order (``json.dump(doc, sort_keys=True)``, a
    rewritten dict) is still a tokenizer.json, its model's vocabulary possibly filling the first
    64 KB that detection reads."""
    import json

    from hf_builders import BUILDERS

    reference = BUILDERS["gpt2"]()
    doc = json.loads(reference.to_str())
    first = {"model first": ["model"], "version then model": ["version", "model"], "sorted keys": sorted(doc)}[order]
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps({**{key: doc[key] for key in first}, **doc}), encoding="utf-8")
    if order != "sorted keys":  # the vocabulary fills the head: only the model's keys are there to see
        assert b'"added_tokens"' not in path.read_bytes()[:1 << 16]
    assert detect(path) == "hf"
    tok = ubpe.load(path)
    for line in text_lines(limit=200):
        assert tok.encode(line) == reference.encode(line, add_special_tokens=False).ids


@pytest.mark.parametrize("suffix, body", [(".json", b'{"version": "1.0", "truncation": null, "model": {}}'),
                                          (".tiktoken", b"IQ== 0\nIg== 1\n")])
def test_a_byte_order_mark_is_named(suffix, body, tmp_path):
    """A file a Windows editor saved with a UTF-8 byte order mark is no model file (tokenizers
    and tiktoken refuse it too): the error says what is in the way."""
    path = tmp_path / f"model{suffix}"
    path.write_bytes(b"\xef\xbb\xbf" + body)
    with pytest.raises(ModelFormatError, match="byte order mark"):
        ubpe.load(path)
    path.write_bytes(body)
    assert detect(path) in ("hf", "tiktoken")
