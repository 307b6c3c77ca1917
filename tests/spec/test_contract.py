"""The tokenizer contract (``ubpe.Tokenizer``): every family answers the same calls, so the
command line and the views need no type switches."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import ByteLevelBPE, Tokenizer, UBPE, UBPEClassic
from ubpe.text.patterns import PATTERNS
from ubpe.encoders import make_encoder
from ubpe.errors import InvalidParameterError, VocabularySizeWarning

TEXTS = ["hello hello world", "hello there, world", "the cat sat on the mat", "héllo wörld 123"] * 5


@pytest.fixture(scope="module")
def families():
    """One fitted tokenizer per family (fitted when the first test asks, not at import)."""
    alphabet = sorted(set("".join(TEXTS)))
    universal = UBPE(alphabet=alphabet, n_tokens=50, break_tokens=" ")
    classic = UBPEClassic(alphabet=alphabet, n_tokens=50)
    with warnings.catch_warnings():  # the corpus has fewer pairs than 50 tokens need: not this test's subject
        warnings.simplefilter("ignore", VocabularySizeWarning)
        universal.fit(TEXTS, quiet=True)
        classic.fit(TEXTS, quiet=True)
    bytelevel = ByteLevelBPE().fit(TEXTS, n_tokens=280, pattern="gpt2", quiet=True)
    return {tok.variant: tok for tok in (universal, classic, bytelevel)}


VARIANTS = ["universal", "classic", "bytelevel"]


@pytest.fixture(params=VARIANTS)
def tok(request, families):
    return families[request.param]


def test_every_family_implements_the_contract(tok):
    assert isinstance(tok, Tokenizer)
    doc = "hello world"
    (ids, score), = tok.encode_with(doc)
    assert isinstance(score, float) and all(isinstance(i, int) for i in ids)
    assert tok.decode(ids) == doc
    pieces = tok.pieces(ids)
    joined = b"".join(pieces).decode() if tok.symbol_unit == "byte" else "".join(pieces)
    assert joined == doc
    assert tok.n_symbols(doc) == len(doc.encode()) and tok.covers(doc)
    assert tok.encode_batch_with([doc, "the cat"]) == [tok.encode_with(doc), tok.encode_with("the cat")]
    assert "vocabulary" in tok.describe() and tok.n_vocab >= len(tok.vocabulary)
    inventory = tok.inventory()
    assert len(inventory.ids) == len(set(inventory.ids)) and set(inventory.pieces) == set(inventory.ids)
    for token in inventory.ids[:60]:
        assert tok.piece_to_id(inventory.pieces[token]) <= token or token in inventory.base


def test_any_encoder_by_name(tok):
    for name in ("fewest", "longest_prefix", "ranked"):
        (ids, _), = tok.encode_with("the cat sat", name)
        assert tok.decode(ids) == "the cat sat"


def test_bytelevel_default_is_tiktoken_encode_and_gives_one_encoding(families):
    tok = families["bytelevel"]
    assert tok.encode_with("hello there") == [(tok.encode("hello there"), 0.0)]
    with pytest.raises(InvalidParameterError, match="top_n must be 1"):
        tok.encode_with("hello", top_n=2)
    assert len(tok.encode_with("hello there", "fewest", top_n=3)) >= 1


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab 1\n\t'éΩ😀.,")), max_size=40))
def test_bytelevel_pretokenization_is_the_native_scanner_and_agrees_with_regex(families, text):
    """The CLI's non-default encoders see the pieces tiktoken's regex cuts (via the scanner)."""
    tok = families["bytelevel"]
    symbols, bounds = tok.pretokenize(text)
    pieces = [bytes(symbols[a:b].tolist()) for a, b in zip(bounds[:-1], bounds[1:])]
    assert pieces == [p.encode() for p in regex.findall(PATTERNS["gpt2"], text)]
    parts = [symbols[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    expected = make_encoder("longest_prefix", tok.vocabulary).encode(parts)[0][0]
    assert tok.encode_with(text, "longest_prefix")[0][0] == tok.token_ids[np.asarray(expected, dtype=np.int64)].tolist()


def test_view_and_cli_have_no_type_switches():
    from pathlib import Path

    import ubpe

    root = Path(ubpe.__file__).resolve().parent  # the package imported (the checkout's or a wheel's)
    for path in [root / "view.py", *sorted((root / "cli").glob("*.py"))]:
        assert "isinstance(model, ByteLevelBPE)" not in path.read_text()
        assert "isinstance(tokenizer, ByteLevelBPE)" not in path.read_text()


def test_isinstance_works_on_unfitted_tokenizers_and_rejects_partial_ones():
    assert isinstance(UBPE(alphabet="ab", n_tokens=3), Tokenizer)  # its properties raise NotFittedError
    assert isinstance(ByteLevelBPE(), Tokenizer)
    assert not isinstance("text", Tokenizer)

    class Partial:
        variant = "x"

        def encode_with(self, doc, encoder=None, top_n=1):
            return []

    assert not isinstance(Partial(), Tokenizer)
