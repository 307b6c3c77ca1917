"""Model files: our versioned format round-trips everything; reference JSON interoperates."""

from __future__ import annotations

import json
import os
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe.io.ours as serialization
from ubpe import UBPE, UBPEClassic, load
from ubpe.io.ours import decode_symbol, encode_symbol


@pytest.fixture(params=[UBPE, UBPEClassic])
def cls(request):
    return request.param


def fit_text(cls, **kwargs):
    tok = cls(alphabet="abcdefgh .", n_tokens=30, **kwargs)
    tok.fit(["abc def. abc gh", "fed cba. abc", "gh gh abc def"] * 3, quiet=True)
    return tok


def test_save_load_round_trip_keeps_everything(cls, tmp_path):
    tok = fit_text(cls, known_words=["abc"], break_tokens=" ", stop_tokens=".", regex_str=r"\w+|\W")
    path = tmp_path / "model.ubpe.json"
    tok.save(path)
    loaded = cls.load(path)
    assert loaded.vocabulary == tok.vocabulary  # merges, pieces, weights and ranks
    assert loaded.alphabet == tok.alphabet
    assert loaded.known_words == tok.known_words
    assert loaded.break_tokens == tok.break_tokens and loaded.stop_tokens == tok.stop_tokens
    assert loaded.regex_str == tok.regex_str
    assert loaded.dumps() == tok.dumps()
    assert load(path).vocabulary == tok.vocabulary


def test_ranks_survive_and_are_creation_order(cls, tmp_path):
    tok = fit_text(cls)
    ranks = tok.vocabulary.ranks
    assert sorted(ranks.tolist()) == sorted(set(ranks.tolist()))
    assert ranks.min() >= 0
    path = tmp_path / "m.json"
    tok.save(path)
    assert (cls.load(path).vocabulary.ranks == ranks).all()


def test_save_is_atomic(cls, tmp_path, monkeypatch):
    tok = fit_text(cls)
    path = tmp_path / "model.json"
    tok.save(path)
    before = path.read_text()

    def crash(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    other = cls(alphabet="ab", n_tokens=5)
    other.fit(["abab"], quiet=True)
    with pytest.raises(OSError, match="disk full"):
        other.save(path)
    assert path.read_text() == before  # the old model is intact
    assert [p.name for p in tmp_path.iterdir()] == ["model.json"]  # no temporary file left


def test_unfitted_model_round_trips(cls, tmp_path):
    tok = cls(alphabet=[3, 1, 2], n_tokens=9, break_tokens=[3])
    tok.save(tmp_path / "m.json")
    loaded = cls.load(tmp_path / "m.json")
    assert not loaded.is_fitted and loaded.alphabet == tok.alphabet and loaded.n_tokens == 9


def test_tuple_and_bytes_symbols_round_trip(cls, tmp_path):
    alphabet = [("C", 4), ("E", 4), ("G", 2)]
    tok = cls(alphabet=alphabet, n_tokens=8)
    docs = [[("C", 4), ("E", 4), ("G", 2), ("C", 4), ("E", 4)]] * 3
    tok.fit(docs, quiet=True)
    tok.save(tmp_path / "m.json")
    loaded = cls.load(tmp_path / "m.json")
    assert loaded.alphabet == tok.alphabet
    assert loaded.decode([len(alphabet)]) == tok.decode([len(alphabet)])


symbols = st.recursive(
    st.one_of(st.text(max_size=3), st.integers(), st.binary(max_size=3), st.booleans(), st.floats(allow_nan=False)),
    lambda inner: st.tuples(inner, inner),
    max_leaves=4,
)


@settings(max_examples=200, deadline=None)
@given(symbols)
def test_symbol_encoding_round_trips(symbol):
    decoded = decode_symbol(json.loads(json.dumps(encode_symbol(symbol))))
    assert decoded == symbol and type(decoded) is type(symbol)


def test_reference_json_round_trip_and_type_inference(cls):
    tok = fit_text(cls)
    loaded = cls.loads(tok.dumps())
    assert loaded.alphabet == tok.alphabet  # str symbols inferred, not int
    assert loaded.tokens_mapper == tok.tokens_mapper
    assert loaded.tokens_weights == tok.tokens_weights
    assert loaded.decode(range(len(loaded.vocabulary))) == tok.decode(range(len(tok.vocabulary)))


def test_int_alphabet_inferred_from_reference_json(cls):
    tok = cls(alphabet=5, n_tokens=9)
    tok.fit([[0, 1, 2, 0, 1, 2, 4]] * 2, quiet=True)
    loaded = cls.loads(tok.dumps())
    assert loaded.alphabet == {0: 0, 1: 1, 2: 2, 3: 3, 4: 4}
    assert cls.loads(tok.dumps(), token_type=str).alphabet == {str(i): i for i in range(5)}


def test_load_accepts_reference_json_file(cls, tmp_path):
    tok = fit_text(cls)
    path = tmp_path / "ref.json"
    path.write_text(tok.dumps())
    assert cls.load(path).tokens_mapper == tok.tokens_mapper


def test_pickle_round_trip(cls):
    tok = fit_text(cls, regex_str=r"\w+")
    clone = pickle.loads(pickle.dumps(tok))
    assert clone.vocabulary == tok.vocabulary and clone.dumps() == tok.dumps()


def test_format_version_is_written(cls, tmp_path):
    fit_text(cls).save(tmp_path / "m.json")
    document = json.loads((tmp_path / "m.json").read_text())
    assert document["format"] == serialization.FORMAT_NAME
    assert document["format_version"] == serialization.FORMAT_VERSION


def test_written_and_respelled_files_read_alike(cls, tmp_path, monkeypatch):
    """A file as ``save`` writes it (its body in the canonical spelling the checksum covers) is
    checked by hashing its text; the same document spelled otherwise (an older writer's spaces
    and key order, a newline added by an editor) is checked field by field: both read the same
    model, and a changed body is refused on both paths."""
    from ubpe.errors import ModelFormatError

    tok = fit_text(cls, known_words=["abc"], break_tokens=" ")
    path = tmp_path / "model.ubpe.json"
    tok.save(path)
    text = path.read_text(encoding="utf-8")
    document = json.loads(text)
    assert text.endswith(serialization._canonical(document["body"]) + "}")
    respelled = {"indented": json.dumps(document, indent=1) + "\n",
                 "old writer": json.dumps(document, ensure_ascii=False),
                 "keys reordered": json.dumps({k: document[k] for k in reversed(list(document))})}
    hashed, written_body = [], serialization._written_body

    def recorded(text, what):  # what the hashing path gave for each read
        hashed.append(written_body(text, what))
        return hashed[-1]

    monkeypatch.setattr(serialization, "_written_body", recorded)
    for spelling in [text, *respelled.values()]:
        loaded = serialization.from_json(spelling)
        assert loaded.vocabulary == tok.vocabulary and loaded.dumps() == tok.dumps()
    assert [body is not None for body in hashed] == [True, False, False, False]
    changed = text.replace('"n_tokens":', '"n_tokens": ', 1)  # the same body spelled otherwise: read
    assert serialization.from_json(changed).vocabulary == tok.vocabulary and hashed[-1] is None
    for corrupt in (text.replace('"weights":[', '"weights":[1.5,', 1),
                    json.dumps(document | {"body": document["body"] | {"n_tokens": 7}})):
        with pytest.raises(ModelFormatError, match="checksum does not match"):
            serialization.from_json(corrupt)


def test_bytelevel_save_and_generic_load(tmp_path):
    from ubpe import ByteLevelBPE

    tok = ByteLevelBPE().fit(["hello world, hello there"] * 20, n_tokens=280, quiet=True)
    path = tmp_path / "bytelevel.json"
    tok.save(path)
    for loaded in (ByteLevelBPE.load(path), load(path)):
        assert isinstance(loaded, ByteLevelBPE)
        assert loaded.mergeable_ranks() == tok.mergeable_ranks()
        assert loaded.encode("hello there") == tok.encode("hello there")


def test_bytelevel_file_keeps_whose_unicode_splits_it(tmp_path):
    """A fitted model's body has no ``unicode`` field (the `regex` module's classes, the
    default: its file is as before); a model read from a peer's file writes the peer's, and a
    value that names no table is refused."""
    from ubpe import ByteLevelBPE
    from ubpe.errors import ModelFormatError

    tok = ByteLevelBPE().fit(["hello world, hello there"] * 20, n_tokens=280, quiet=True)
    path = tmp_path / "bytelevel.json"
    tok.save(path)
    assert "unicode" not in json.loads(path.read_text())["body"] and load(path).unicode == "regex"
    ByteLevelBPE.from_mergeable_ranks(tok.mergeable_ranks(), unicode="tiktoken").save(path)
    document = json.loads(path.read_text())
    assert document["body"]["unicode"] == "tiktoken" and load(path).unicode == "tiktoken"
    document["body"]["unicode"] = "unicodedata"
    document["checksum"] = serialization.checksum(document["body"])
    path.write_text(json.dumps(document))
    with pytest.raises(ModelFormatError, match="`unicode` must be one of regex, tiktoken"):
        load(path)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet="a\r\n é\x85\u2028", max_size=40))
def test_read_text_reads_as_text_mode_does(tmp_path_factory, text):
    """`ubpe.files.read_text` decodes the bytes at once and then translates newlines: what
    ``Path.read_text`` (universal newlines) gives, ``\\r\\n`` and lone ``\\r`` alike, and nothing
    else (U+0085 and U+2028 kept)."""
    from pathlib import Path

    from ubpe.files import read_text

    path = tmp_path_factory.mktemp("text") / "file.txt"
    path.write_bytes(text.encode("utf-8"))
    assert read_text(path) == Path(path).read_text(encoding="utf-8")
