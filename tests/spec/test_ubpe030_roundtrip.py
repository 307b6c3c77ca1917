"""ubpe 0.3.0 JSON round trips lose nothing (issue 13, item 1): what the reference's fields
cannot hold travels in the ``ubpe_model`` key, which the reference ignores (recorded from
ubpe 0.3.0 by ``tests/golden/make_extra_key_fixture.py``)."""

from __future__ import annotations

import json
import random
import warnings
from pathlib import Path

import pytest

import ubpe
from ubpe.errors import IgnoredInputWarning
from ubpe.io import ours, ubpe030

FIXTURE = json.loads((Path(__file__).resolve().parents[1] / "golden" / "ubpe030_extra_key.json").read_text())


def _fit(cls, alphabet, corpus, n_tokens):
    tok = cls(alphabet=alphabet, n_tokens=n_tokens)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok.fit(corpus, quiet=True)
    return tok


def _round_trip(tok, tmp_path):
    path = tmp_path / "reference.json"
    ubpe.save(tok, path, format="ubpe030")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no IgnoredInputWarning: the key matched
        return ubpe.load(path)


@pytest.mark.parametrize("name", sorted(FIXTURE["models"]))
def test_the_reference_ignores_the_extra_key(name):
    record = FIXTURE["models"][name]
    assert record["dumps_with_key"] == record["dumps_without_key"]
    assert record["encode_with_key"] == record["encode_without_key"]
    cls = ubpe.UBPE if name == "universal" else ubpe.UBPEClassic
    alphabet = sorted(set("".join(FIXTURE["corpus"])))
    ours_now = json.loads(ubpe030.dumps(_fit(cls, alphabet, FIXTURE["corpus"], 30)))
    recorded = json.loads(record["dump"])
    assert ours_now == recorded  # the fixture still describes what dumps writes


@pytest.mark.parametrize("cls", [ubpe.UBPE, ubpe.UBPEClassic])
def test_digits_only_text_alphabet_stays_text(cls, tmp_path):
    """Once: the alphabet came back as ints, and encoding text failed."""
    tok = _fit(cls, "0123", ["0123012301", "3210", "1122"] * 3, 10)
    back = _round_trip(tok, tmp_path)
    assert back.alphabet == {"0": 0, "1": 1, "2": 2, "3": 3}
    assert back.encode("012301") == tok.encode("012301")


def test_float_alphabet_stays_float(tmp_path):
    """Once: float symbols came back as str."""
    tok = _fit(ubpe.UBPE, [0.5, 1.5, 2.5], [[0.5, 1.5, 2.5, 0.5, 1.5]] * 3, 8)
    back = _round_trip(tok, tmp_path)
    assert back.alphabet == {0.5: 0, 1.5: 1, 2.5: 2}
    assert back.decode(back.encode([0.5, 1.5, 2.5])[0][0]) == [0.5, 1.5, 2.5]


@pytest.mark.parametrize("cls", [ubpe.UBPE, ubpe.UBPEClassic])
def test_round_trip_keeps_every_encoding(cls, tmp_path):
    """Once: ranks and merges were dropped, and classic/ranked changed on ~490 of 500 documents."""
    rng = random.Random(0)
    words = ["the", "cat", "sat", "on", "mat", "dog", "log", "and", "met", "a"]
    corpus = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(200)]
    tok = _fit(cls, sorted(set("".join(corpus))), corpus, 60)
    back = _round_trip(tok, tmp_path)
    assert ours.to_json(back) == ours.to_json(tok)
    docs = [" ".join(rng.choice(words) for _ in range(rng.randrange(1, 8))) for _ in range(500)]
    for encoder in ("classic", "ranked", "tfidf", "fewest"):
        assert back.encode_batch(docs, encoder=encoder) == tok.encode_batch(docs, encoder=encoder), encoder


def test_edited_reference_fields_warn_and_fall_back():
    tok = _fit(ubpe.UBPE, "abc ", ["abc abc cab", "cab abc"] * 3, 12)
    model = json.loads(ubpe030.dumps(tok))
    model["n_tokens"] += 1  # another tool changed the file
    with pytest.warns(IgnoredInputWarning, match="`ubpe_model` key is ignored: it does not match"):
        back = ubpe030.loads(json.dumps(model))
    assert back.tokens_mapper == tok.tokens_mapper  # the reference's fields still hold the pieces


def test_a_reference_file_without_the_key_loads_as_before():
    tok = _fit(ubpe.UBPEClassic, "abc ", ["abc abc cab", "cab abc"] * 3, 12)
    model = json.loads(ubpe030.dumps(tok))
    model.pop(ubpe030.EXTRA_KEY)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        back = ubpe030.loads(json.dumps(model))
    assert back.tokens_mapper == tok.tokens_mapper
