"""Fit kernel vs the readable transcription of the reference, on random corpora."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import reference_impl as ref
from ubpe import UBPE, UBPEClassic, Vocabulary
from ubpe.splitting import SplitMode
from ubpe_native._fit import PairMerger

MAX_ALPHABET = 6

corpora = st.integers(1, MAX_ALPHABET).flatmap(
    lambda a: st.tuples(
        st.just(a),
        st.lists(  # documents
            st.lists(st.lists(st.integers(0, a - 1), max_size=14), min_size=0, max_size=3),  # parts
            min_size=1,
            max_size=6,
        ),
    )
)


def make_merger(corpus, n_base, unique_pieces=False) -> PairMerger:
    """The kernel on a corpus given as documents of parts of ids."""
    tokens, offsets, doc_of_part = [], [0], []
    for d, doc in enumerate(corpus):
        for part in doc:
            tokens.extend(part)
            offsets.append(len(tokens))
            doc_of_part.append(d)
    return PairMerger(
        np.asarray(tokens, np.int32), np.asarray(offsets, np.int64), np.asarray(doc_of_part, np.int32),
        len(corpus), n_base, unique_pieces,
    )


def kernel_merges(corpus, n_base, n_tokens, n_candidates):
    merger = make_merger(corpus, n_base)
    largest = n_base - 1
    while largest < n_tokens:
        created = merger.step(n_candidates)
        if created == 0:
            break
        largest += created
    left, right, documents, _ = merger.merges()
    return merger, list(zip(left.tolist(), right.tolist(), documents.tolist()))


@settings(max_examples=400, deadline=None)
@given(corpora, st.integers(1, 40), st.sampled_from([1, 2, 3, 50]))
def test_kernel_equals_reference_transcription(data, extra_tokens, n_candidates):
    n_base, corpus = data
    _, ours = kernel_merges(corpus, n_base, n_base + extra_tokens, n_candidates)
    assert ours == ref.fit_merges(corpus, n_base, n_base + extra_tokens, n_candidates)


@settings(max_examples=200, deadline=None)
@given(corpora, st.integers(1, 40))
def test_kernel_corpus_state_equals_replacement(data, extra_tokens):
    """After fitting, the kernel's corpus equals replaying the merges on the input."""
    n_base, corpus = data
    merger, merges = kernel_merges(corpus, n_base, n_base + extra_tokens, 1)
    parts = [list(p) for doc in corpus for p in doc if len(p)]
    for t, (left, right, _) in enumerate(merges):
        parts = [ref.replace_pairs(p, {(left, right): n_base + t}) for p in parts]
    tokens, offsets, multiplicities = merger.current_tokens()
    got = [tokens[s:e].tolist() for s, e, m in zip(offsets[:-1], offsets[1:], multiplicities) for _ in range(m)]
    assert sorted(got) == sorted(p for p in parts)


@settings(max_examples=300, deadline=None)
@given(corpora, st.integers(1, 30), st.integers(0, 30), st.booleans())
def test_rearrangement_equals_reference_transcription(data, extra_tokens, keep, classic):
    n_base, corpus = data
    merges = ref.fit_merges(corpus, n_base, n_base + extra_tokens, 50)
    vocab = Vocabulary.from_merges(
        n_base, [m[0] for m in merges], [m[1] for m in merges], documents=[m[2] for m in merges], n_docs=len(corpus)
    )
    weights = dict(enumerate(ref.weights_of(merges, len(corpus)), start=n_base))
    mapper = ref.classic_mapper(merges, n_base) if classic else ref.universal_mapper(merges, n_base)
    expected_mapper, expected_weights = ref.rearrange(mapper, weights, n_base, n_base + keep, classic)
    rearranged = vocab.rearranged(n_base + keep, classic=classic)
    assert (rearranged.pairs() if classic else rearranged.pieces()) == expected_mapper
    assert rearranged.weight_of() == expected_weights
    # ranks follow their tokens through renumbering
    for new, old in zip(range(n_base, n_base + rearranged.n_merged), rearranged.ranks.tolist()):
        assert tuple(rearranged.piece(new)) == tuple(vocab.piece(n_base + old))


text_corpora = st.lists(st.text(alphabet="abcde \n.", max_size=40), min_size=1, max_size=8)


@settings(max_examples=150, deadline=None)
@given(text_corpora, st.integers(1, 40), st.sampled_from([UBPE, UBPEClassic]), st.booleans())
def test_every_piece_is_its_pair_concatenated(corpus, extra, cls, rearrange):
    tok = cls(alphabet="abcde \n.", n_tokens=8 + extra, break_tokens=" ", regex_str=r"\w+|\W")
    tok.fit(corpus, quiet=True, rearrange_tokens=rearrange)
    vocab = tok.vocabulary
    for t in range(vocab.n_merged):
        left, right = vocab.merges[t].tolist()
        if left < 0 or right < 0:  # a universal token whose component was trimmed away
            assert cls is UBPE and rearrange
            continue
        expected = np.concatenate([vocab.piece(left), vocab.piece(right)])
        assert vocab.piece(vocab.n_base + t).tolist() == expected.tolist()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.text(alphabet="xyz", max_size=30), min_size=1, max_size=6), st.integers(1, 20))
def test_fit_never_crashes_and_decodes_its_pieces(corpus, extra):
    tok = UBPE(alphabet={"z", "y", "x"}, n_tokens=3 + extra)
    tok.fit(corpus, quiet=True, split_mode=SplitMode.NONE)
    for token in range(len(tok.vocabulary)):
        assert len(tok.decode([token])) >= 1


HASHSEED_SCRIPT = textwrap.dedent(
    """
    import json, sys
    from ubpe import UBPE
    alphabet = set("the quick brown fox jumps over lazy dog")
    tok = UBPE(alphabet=alphabet, n_tokens=60, break_tokens={" "})
    tok.fit(["the quick brown fox", "jumps over the lazy dog"] * 5, quiet=True)
    print(tok.dumps())
    """
)


def test_ids_do_not_depend_on_hash_seed():
    outputs = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [sys.executable, "-c", HASHSEED_SCRIPT], env=env, capture_output=True, text=True, check=True
        )
        outputs.append(json.loads(result.stdout))
    assert outputs[0] == outputs[1]
    assert outputs[0]["alphabet"][" "] == 0  # sets are sorted: space sorts first


@settings(max_examples=300, deadline=None)
@given(corpora, st.integers(1, 40), st.sampled_from([1, 3, 50]))
def test_unique_pieces_never_repeat_a_piece(data, extra_tokens, n_candidates):
    n_base, corpus = data
    merger = make_merger(corpus, n_base, unique_pieces=True)
    while merger.next_token - 1 < n_base + extra_tokens and merger.step(n_candidates):
        pass
    left, right, documents, _ = merger.merges()
    vocab = Vocabulary.from_merges(n_base, left, right, documents=documents, n_docs=len(corpus))
    pieces = [tuple(p) for p in vocab.pieces().values()]
    assert len(pieces) == len(set(pieces))
    # the corpus still spells the input
    state, bounds, multiplicities = merger.current_tokens()
    spelled = [
        [s for t in state[b:e].tolist() for s in vocab.piece(t).tolist()]
        for b, e, m in zip(bounds[:-1], bounds[1:], multiplicities)
        for _ in range(m)
    ]
    assert sorted(spelled) == sorted(list(p) for doc in corpus for p in doc if len(p))
