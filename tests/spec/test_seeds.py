"""Seeded encoders repeat (issue 28, point 6): a call with ``seed=s`` gives the same result every
time, on any object of the same model, on any number of threads; a call without a seed is not
held to any earlier one."""

from __future__ import annotations

import copy
import pickle
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import UBPE, ByteLevelBPE, UBPEClassic
from ubpe.errors import VocabularySizeWarning

TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met on the mat",
         "the cats and the dogs sat together", "then the cat saw the dog"] * 4
# each sampling encoder with options under which a document has several outcomes
SAMPLERS = [("dropout", {"p": 0.5}), ("sample", {"temperature": 2.0})]


@pytest.fixture(scope="module")
def families():
    alphabet = sorted(set("".join(TEXTS)))
    universal = UBPE(alphabet=alphabet, n_tokens=60, break_tokens=" ")
    classic = UBPEClassic(alphabet=alphabet, n_tokens=60, break_tokens=" ")
    with warnings.catch_warnings():  # how many tokens the corpus holds is not this test's subject
        warnings.simplefilter("ignore", VocabularySizeWarning)
        universal.fit(TEXTS, quiet=True)
        classic.fit(TEXTS, quiet=True)
    bytelevel = ByteLevelBPE().fit(TEXTS, n_tokens=300, pattern="gpt2", quiet=True)
    return {"universal": universal, "classic": classic, "bytelevel": bytelevel}


docs = st.text(alphabet=st.sampled_from(list("the catsdogmn ")), min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(doc=docs, seed=st.integers(0, 2**32), family=st.sampled_from(["universal", "classic", "bytelevel"]),
       sampler=st.sampled_from(SAMPLERS))
def test_a_seeded_call_repeats_on_any_object(families, doc, seed, family, sampler):
    tok = families[family]
    name, options = sampler
    first = tok.encode_with(doc, name, seed=seed, **options)
    tok.encode_with(doc, name, **options)  # an unseeded call in between must not move the seeded stream
    assert tok.encode_with(doc, name, seed=seed, **options) == first
    assert tok.encode_with(doc, name, seed=seed, **options) == first
    for other in (copy.deepcopy(tok), pickle.loads(pickle.dumps(tok))):
        assert other.encode_with(doc, name, seed=seed, **options) == first
    assert tok.decode(first[0][0]) == doc


@pytest.mark.parametrize("name, options", SAMPLERS)
def test_a_seeded_batch_repeats_on_any_number_of_threads(families, name, options):
    tok = families["universal"]
    batch = TEXTS[:7]
    one = tok.encode_batch(batch, encoder=name, seed=5, threads=1, **options)
    assert tok.encode_batch(batch, encoder=name, seed=5, threads=3, **options) == one
    assert tok.encode_batch_to_numpy(batch, encoder=name, seed=5, threads=2, **options).tolist() == one
    assert [tok.decode(encodings[0][0]) for encodings in one] == batch


def test_seeds_make_a_difference(families):
    """The test above is not vacuous: different seeds (and unseeded calls) give different draws."""
    tok = families["universal"]
    doc = "the cats and the dogs sat together"
    draws = {tuple(tok.encode(doc, encoder="dropout", p=0.5, seed=seed)[0][0]) for seed in range(20)}
    assert len(draws) > 1
    unseeded = {tuple(tok.encode(doc, encoder="dropout", p=0.5)[0][0]) for _ in range(20)}
    assert len(unseeded) > 1
