"""Bad input raises one of our exceptions, with a message naming the problem."""

from __future__ import annotations

import json

import numpy as np
import pytest

from ubpe import (
    UBPE,
    AlreadyFittedError,
    EmptyCorpusError,
    InvalidParameterError,
    ModelFormatError,
    NotFittedError,
    SymbolTypeError,
    UBPEClassic,
    UnknownSymbolError,
    UnknownTokenError,
    load,
)


@pytest.fixture(params=[UBPE, UBPEClassic])
def cls(request):
    return request.param


@pytest.fixture
def fitted(cls):
    tok = cls(alphabet="abc ", n_tokens=10)
    tok.fit(["abc abc", "cab cab", "ab ab ab", "ca ca"], quiet=True)
    assert tok.vocabulary.n_merged > 0
    return tok


def test_unknown_symbol_names_symbol_and_document(cls):
    tok = cls(alphabet="abc", n_tokens=10)
    with pytest.raises(UnknownSymbolError, match=r"symbol 'z' at position 2 of document 1 is not in the alphabet"):
        tok.fit(["abc", "abz"], quiet=True)


def test_unknown_symbol_in_int_corpus(cls):
    tok = cls(alphabet=4, n_tokens=10)
    with pytest.raises(UnknownSymbolError, match=r"symbol 7 at position 1 of document 0"):
        tok.fit([[0, 7, 1], [1, 2]], quiet=True)


def test_unknown_symbol_is_a_value_error(cls):
    tok = cls(alphabet="ab", n_tokens=10)
    with pytest.raises(ValueError):
        tok.fit(["ac"], quiet=True)


def test_empty_corpus(cls):
    tok = cls(alphabet="ab", n_tokens=10)
    with pytest.raises(EmptyCorpusError, match="empty"):
        tok.fit([], quiet=True)


@pytest.mark.parametrize("n_tokens", [2, 1, 0, -5])
def test_n_tokens_not_larger_than_alphabet(cls, n_tokens):
    with pytest.raises(InvalidParameterError, match=r"`n_tokens` \(.*\) must be larger than the alphabet"):
        cls(alphabet="ab", n_tokens=n_tokens)


def test_n_tokens_counts_known_words(cls):
    with pytest.raises(InvalidParameterError, match=r"together \(4\)"):
        cls(alphabet="ab", known_words=["aa", "ab"], n_tokens=4)


def test_n_tokens_wrong_type(cls):
    with pytest.raises(InvalidParameterError, match="must be an int"):
        cls(alphabet="ab", n_tokens="100")


@pytest.mark.parametrize("n_candidates", [0, -1])
def test_n_candidates_below_one(cls, n_candidates):
    tok = cls(alphabet="ab", n_tokens=10)
    with pytest.raises(InvalidParameterError, match="`n_candidates` must be at least 1"):
        tok.fit(["abab"], n_candidates=n_candidates, quiet=True)


def test_n_candidates_wrong_type(cls):
    tok = cls(alphabet="ab", n_tokens=10)
    with pytest.raises(InvalidParameterError, match="`n_candidates` must be an int"):
        tok.fit(["abab"], n_candidates=2.5, quiet=True)


def test_mixed_symbol_types_in_alphabet(cls):
    with pytest.raises(SymbolTypeError, match="one type, got: int, str"):
        cls(alphabet=["a", 1, "b"], n_tokens=10)


def test_document_of_wrong_symbol_type(cls):
    tok = cls(alphabet=3, n_tokens=10)
    with pytest.raises(SymbolTypeError, match="is a str but the alphabet's symbols are int"):
        tok.fit(["012"], quiet=True)


def test_document_of_wrong_container_type(cls):
    tok = cls(alphabet=3, n_tokens=10)
    with pytest.raises(SymbolTypeError, match="document 1 must be a str, list, tuple or 1-D array, not int"):
        tok.fit([[0, 1], 5], quiet=True)


def test_corpus_given_as_single_string(cls):
    tok = cls(alphabet="ab", n_tokens=10)
    with pytest.raises(SymbolTypeError, match="not a single str"):
        tok.fit("abab", quiet=True)


def test_missing_alphabet(cls):
    with pytest.raises(SymbolTypeError, match="`alphabet` must be given"):
        cls(n_tokens=10)


def test_empty_alphabet(cls):
    with pytest.raises(InvalidParameterError, match="non-empty"):
        cls(alphabet=[], n_tokens=10)


def test_alphabet_dict_with_gaps(cls):
    with pytest.raises(InvalidParameterError, match="ids 0..len"):
        cls(alphabet={"a": 0, "b": 2}, n_tokens=10)


def test_invalid_regex(cls):
    with pytest.raises(InvalidParameterError, match="not a valid regex"):
        cls(alphabet="ab", n_tokens=10, regex_str="(unclosed")


def test_fitting_twice(fitted):
    with pytest.raises(AlreadyFittedError, match="only once"):
        fitted.fit(["abc"], quiet=True)


def test_not_fitted(cls):
    tok = cls(alphabet="ab", n_tokens=10)
    with pytest.raises(NotFittedError):
        tok.rearrange_tokens()
    with pytest.raises(NotFittedError):
        tok.decode([0])


def test_rearrange_to_absurd_size(fitted):
    with pytest.raises(InvalidParameterError, match="positive int"):
        fitted.rearrange_tokens(n_tokens=0)


def test_decode_unknown_token(fitted):
    with pytest.raises(UnknownTokenError, match=r"token 99 is not in the vocabulary"):
        fitted.decode([0, 99])
    with pytest.raises(UnknownTokenError):
        fitted.decode([-1])


def test_decode_wrong_types(fitted):
    with pytest.raises(SymbolTypeError):
        fitted.decode("ab")
    with pytest.raises(SymbolTypeError):
        fitted.decode([0.5])


# -- model files ---------------------------------------------------------------------------


def test_truncated_model_file(fitted, tmp_path):
    path = tmp_path / "model.json"
    fitted.save(path)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        type(fitted).load(path)


def test_corrupt_model_file(fitted, tmp_path):
    path = tmp_path / "model.json"
    fitted.save(path)
    document = json.loads(path.read_text())
    document["body"]["vocabulary"]["weights"][0] += 1.0  # a flipped digit still parses
    path.write_text(json.dumps(document))
    with pytest.raises(ModelFormatError, match="checksum"):
        type(fitted).load(path)


def test_unknown_format_version(fitted, tmp_path):
    path = tmp_path / "model.json"
    fitted.save(path)
    document = json.loads(path.read_text())
    document["format_version"] = 99
    path.write_text(json.dumps(document))
    with pytest.raises(ModelFormatError, match="format version 99"):
        load(path)


def test_binary_garbage_model_file(fitted, tmp_path):
    path = tmp_path / "model.json"
    path.write_bytes(np.random.default_rng(0).integers(0, 256, 500, dtype=np.uint8).tobytes())
    with pytest.raises(ModelFormatError):
        type(fitted).load(path)


def test_not_a_model(tmp_path):
    path = tmp_path / "model.json"
    path.write_text('{"hello": 1}')
    with pytest.raises(ModelFormatError, match="not a ubpe model"):
        UBPE.load(path)


def test_wrong_variant(fitted, tmp_path):
    path = tmp_path / "model.json"
    fitted.save(path)
    other = UBPEClassic if isinstance(fitted, UBPE) else UBPE
    with pytest.raises(ModelFormatError, match="model, not a"):
        other.load(path)


@pytest.mark.parametrize(
    "mutate, message",
    [
        (lambda m: m.pop("mapper"), "no `mapper`"),
        (lambda m: m.update(alphabet=[1, 2]), "no `alphabet`"),
        (lambda m: m["mapper"].pop(next(iter(m["mapper"]))), "ids"),
        (lambda m: m["weights"].update({"999": 1.0}), "different tokens"),
        (lambda m: m["mapper"].update({k: ["x"] for k in m["mapper"]}), "malformed"),
    ],
)
def test_corrupt_reference_json(fitted, mutate, message):
    model = json.loads(fitted.dumps())
    mutate(model)
    with pytest.raises(ModelFormatError, match=message):
        type(fitted).loads(json.dumps(model))


def test_truncated_reference_json(fitted):
    with pytest.raises(ModelFormatError, match="not valid JSON"):
        type(fitted).loads(fitted.dumps()[:-10])


def test_reference_json_with_cycle():
    model = {"n_tokens": 4, "alphabet": {"a": 0, "b": 1}, "mapper": {"2": [3, 0], "3": [2, 1]}, "weights": {"2": 0.1, "3": 0.2}}
    with pytest.raises(ModelFormatError, match="built from itself"):
        UBPEClassic.loads(json.dumps(model))
