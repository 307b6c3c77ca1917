"""The tokenizers' encoding API: any container in, lossless out, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import UBPE, InvalidParameterError, UBPEClassic, UnknownSymbolError, UnknownTokenError, available_encoders


# encoders that need options to run at all
OPTIONS = {"additive": {"score": float}}  # score = the token id: any additive score will do


def encode(tok, doc, name, **kwargs):
    return tok.encode(doc, encoder=name, **OPTIONS.get(name, {}), **kwargs)


@pytest.fixture(scope="module", params=[UBPE, UBPEClassic])
def tok(request):
    tok = request.param(alphabet="abcd .", n_tokens=40, break_tokens=" ", stop_tokens=".")
    tok.fit(["abc abd. dab cab", "abcd abcd. bad cab", "dd aa bb. cc"] * 3, quiet=True)
    return tok


@pytest.mark.parametrize("doc", ["", "a", "abc abd", "dcba.abcd", ". .", "aaaaaaaaaaaaaaaa"])
def test_every_encoder_round_trips(tok, doc):
    for name in available_encoders():
        try:
            encoding = encode(tok, doc, name)
        except InvalidParameterError as exc:  # e.g. an encoder needing merges this vocabulary lacks
            pytest.fail(f"{name}: {exc}")
        tokens, score = encoding[0]
        assert tok.decode(tokens) == doc, name
        assert isinstance(score, float)


def test_containers(tok):
    expected = tok.encode(list("abc abd"))
    for doc in (tuple("abc abd"), np.array(list("abc abd")), "abc abd"):
        assert tok.encode(doc) == expected
    assert tok.encode_to_numpy("abc abd").tolist() == expected[0][0]
    assert tok.encode_to_numpy("abc abd").dtype == np.int32


def test_top_n(tok):
    if isinstance(tok, UBPE):
        candidates = tok.encode("abcd abcd", top_n=5)
        assert 1 < len(candidates) <= 5
        scores = [s for _, s in candidates]
        assert scores == sorted(scores, reverse=True)
        assert all(tok.decode(t) == "abcd abcd" for t, _ in candidates)
    else:
        with pytest.raises(InvalidParameterError, match="top_n must be 1"):
            tok.encode("abcd", top_n=2)
    with pytest.raises(InvalidParameterError, match="at least 1"):
        tok.encode("abcd", top_n=0, encoder="tfidf")
    with pytest.raises(InvalidParameterError, match="at most"):
        tok.encode("abcd", top_n=10**9, encoder="tfidf")


def test_unknown_symbol_and_encoder(tok):
    with pytest.raises(UnknownSymbolError, match=r"symbol 'z' at position 2 of the document"):
        tok.encode("abz")
    with pytest.raises(InvalidParameterError, match="unknown encoder 'nope'"):
        tok.encode("ab", encoder="nope")


def test_encode_batch_equals_encode(tok):
    docs = ["abc abd", "", "dab. cab", "a"] * 40
    assert tok.encode_batch(docs) == [tok.encode(d) for d in docs]
    assert tok.encode_batch(docs, threads=1, encoder="ranked") == [tok.encode(d, encoder="ranked") for d in docs]
    assert tok.decode_batch([e[0][0] for e in tok.encode_batch(docs)]) == docs


def test_vocabulary_lookups(tok):
    assert len(tok) == tok.n_vocab == len(tok.vocabulary)
    for token in range(len(tok)):
        assert tok.piece_to_id(tok.id_to_piece(token)) <= token
    assert tok.piece_to_id("a") == tok.alphabet["a"]
    with pytest.raises(UnknownTokenError):
        tok.piece_to_id("zz")


text_alphabets = st.sets(st.characters(codec="utf-8", categories=["L", "N", "P", "Zs"]), min_size=2, max_size=8)


@settings(max_examples=60, deadline=None)
@given(text_alphabets, st.data(), st.sampled_from([UBPE, UBPEClassic]))
def test_round_trip_random_alphabets_and_vocabularies(symbols, data, cls):
    alphabet = sorted(symbols)
    docs = data.draw(st.lists(st.text(alphabet=alphabet, max_size=30), min_size=1, max_size=6))
    tok = cls(alphabet=alphabet, n_tokens=len(alphabet) + data.draw(st.integers(1, 30)))
    tok.fit(docs, quiet=True)
    doc = data.draw(st.text(alphabet=alphabet, max_size=40))
    for name in available_encoders():
        assert tok.decode(encode(tok, doc, name)[0][0]) == doc, name


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 50), st.data())
def test_round_trip_integer_sequences(size, data):
    docs = data.draw(st.lists(st.lists(st.integers(0, size - 1), max_size=40), min_size=1, max_size=5))
    tok = UBPE(alphabet=size, n_tokens=size + data.draw(st.integers(1, 40)))
    tok.fit(docs, quiet=True)
    doc = data.draw(st.lists(st.integers(0, size - 1), max_size=60))
    for name in available_encoders():
        for top_n in ((1, 3) if name in ("tfidf", "fewest", "additive") else (1,)):
            for tokens, _ in encode(tok, np.array(doc, dtype=np.int64), name, top_n=top_n):
                assert tok.decode(tokens) == doc, name


def test_a_tokenizer_keeps_its_most_recently_used_encoders_only():
    """Encoders are reused (the same object), up to ``KEPT_ENCODERS`` of them: each holds tables
    the size of the vocabulary, so a model that ran every encoder does not keep them all."""
    from ubpe.models.base import KEPT_ENCODERS

    tok = UBPE(alphabet="ab", n_tokens=6)
    tok.fit(["abab", "abba", "baab", "bbaa"], quiet=True)
    names = ["fewest", "longest_prefix", "longest_suffix", "longest_token", "classic", "ranked"]
    assert len(names) > KEPT_ENCODERS
    first = tok.encoder(names[0])
    assert tok.encoder(names[0]) is first
    kept = [tok.encoder(name) for name in names[1 : KEPT_ENCODERS + 1]]  # names[0] is now the oldest
    assert tok.encoder(names[0]) is not first  # dropped, built again
    assert tok.encoder(names[KEPT_ENCODERS]) is kept[-1]  # recently used: still the same object
    assert tok.encode("abba", encoder=names[0]) == tok.encode("abba", encoder=names[0])


def test_each_builtin_encoder_is_found_in_its_module_alone():
    """``BUILTIN_MODULE`` (name -> module, what lets a first encode import its encoder's module
    alone) names every built-in encoder's module, and only those; in a fresh process, asking
    for one encoder imports its module and no other encoder module (but those ``sample`` builds
    on: its encoder is a path encoder, its lattice reads ``ranked``'s piece table)."""
    import importlib
    import subprocess
    import sys

    from ubpe import encoders

    declared = {info.name: module for module in encoders.ENCODER_MODULES
                for info in importlib.import_module(f"ubpe.encoders.{module}").ENCODERS}
    assert encoders.BUILTIN_MODULE == declared
    for name, module in declared.items():
        code = ("import sys\nfrom ubpe.encoders import encoder_info\n"
                f"assert encoder_info({name!r}).name == {name!r}\n"
                "print(sorted(m for m in sys.modules if m.startswith('ubpe.encoders.')\n"
                f"             and m[14:] in {encoders.ENCODER_MODULES!r}))")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        builds_on = {"ubpe.encoders.paths", "ubpe.encoders.ranked"} if module == "sample" else set()
        expected = sorted({f"ubpe.encoders.{module}"} | builds_on)
        assert done.stdout.strip() == str(expected), name
