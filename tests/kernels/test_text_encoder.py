"""``ByteLevelBPE.encode``'s one-call path (``_ranked.TextEncoder``: str -> ids for a tokenizer
without special tokens) gives tiktoken's ids and the general path's, for identity and shuffled
ranks, every preset, lone surrogates and the special-token arguments that keep it off: on every
code point for a tokenizer that classifies code points by tiktoken's Unicode (as one read from
a ``.tiktoken`` file does), on the code points both Unicodes classify alike for a fitted one
(which classifies by the `regex` module's)."""

from __future__ import annotations

import numpy as np
import pytest
import tiktoken
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import ByteLevelBPE
from ubpe.errors import DisallowedSpecialTokenError
from ubpe.text.patterns import PATTERNS, code_point_classes, table_of_runs
from ubpe.text.peer_classes import RUNS

CORPUS = ["the cat sat on the mat, naïve café 12345 don't", "ab ab abc\n\n  x \U0001f600 ünï",
          "the the the cat"] * 4
# Code points where the `regex` module's classes and tiktoken's differ (a character unassigned in
# tiktoken's Unicode but a letter in regex's, U+3EE07, puts "'t" in another piece)
# (tiktoken's read off `ubpe.text.peer_classes`, not through the code under test)
DIFFERING = frozenset(np.flatnonzero(code_point_classes("regex") != np.frombuffer(
    table_of_runs(RUNS["tiktoken"]), np.uint16)).tolist())
# Every code point but the surrogates (which a str holds and UTF-8 does not), those that differ,
# and the contractions that a differing code point before them cuts otherwise
TEXTS = st.lists(st.sampled_from("the cat'sé\u0928\U0001f600 \n\t9!") | st.characters(exclude_categories=("Cs",))
                 | st.sampled_from(sorted(map(chr, DIFFERING))[:: max(1, len(DIFFERING) // 500)] or ["a"])
                 | st.sampled_from(["'t", "'S", "'\u017f", "'ll", " x"]), max_size=40).map("".join)


def _tiktoken(tok: ByteLevelBPE) -> tiktoken.Encoding:
    return tiktoken.Encoding("t", pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks(), special_tokens={})


@pytest.fixture(scope="module", params=sorted(PATTERNS))
def pair(request) -> tuple[ByteLevelBPE, ByteLevelBPE, tiktoken.Encoding]:
    """A fitted tokenizer, the same ranks classifying by tiktoken's Unicode, and tiktoken."""
    tok = ByteLevelBPE().fit(CORPUS, n_tokens=300, pattern=request.param, quiet=True)
    twin = ByteLevelBPE.from_mergeable_ranks(tok.mergeable_ranks(), pattern=request.param, unicode="tiktoken")
    return tok, twin, _tiktoken(tok)


@pytest.fixture(scope="module")
def shuffled() -> tuple[ByteLevelBPE, tiktoken.Encoding]:
    """Ranks that are not the vocabulary's ids (single bytes in another order, gaps)."""
    fitted = ByteLevelBPE().fit(CORPUS, n_tokens=300, pattern="cl100k", quiet=True)
    byte_ranks = np.random.default_rng(0).permutation(256) * 3
    ranks = {piece: int(byte_ranks[piece[0]]) if len(piece) == 1 else 1000 + 2 * rank
             for piece, rank in fitted.mergeable_ranks().items()}
    tok = ByteLevelBPE.from_mergeable_ranks(ranks, pattern="cl100k", unicode="tiktoken")
    return tok, tiktoken.Encoding("s", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={})


def _general(tok: ByteLevelBPE, text: str) -> list[int]:
    """The general path (``disallowed_special`` given as an empty frozenset keeps the one-call path off)."""
    return tok.encode(text, disallowed_special=frozenset())


@settings(max_examples=150, deadline=None)
@given(text=TEXTS)
def test_one_call_path_is_tiktokens_and_the_general_paths(pair, text: str) -> None:
    tok, twin, reference = pair
    assert tok._plain_text_encoder()  # a preset over a tokenizer without special tokens: the path exists
    ids = twin.encode(text)
    assert ids == _general(twin, text) == reference.encode_ordinary(text)
    assert twin.encode_ordinary(text) == ids
    fitted = tok.encode(text)
    assert fitted == _general(tok, text) == tok.encode_ordinary(text)
    if DIFFERING.isdisjoint(map(ord, text)):
        assert fitted == ids


@settings(max_examples=100, deadline=None)
@given(text=TEXTS)
def test_one_call_path_maps_shuffled_ranks(shuffled, text: str) -> None:
    tok, reference = shuffled
    assert tok.encode(text) == _general(tok, text) == reference.encode_ordinary(text)


def test_special_tokens_are_refused_or_plain_text_as_before() -> None:
    """With special tokens the one-call path serves only the calls that treat them as plain
    text (``disallowed_special=()``, tekken's default); refused or allowed ones take the
    general path."""
    tok = ByteLevelBPE().fit(CORPUS, n_tokens=300, pattern="gpt2", special_tokens=["<|end|>"], quiet=True)
    reference = tiktoken.Encoding("t", pat_str=tok.pattern, mergeable_ranks=tok.mergeable_ranks(),
                                  special_tokens=tok.special_tokens)
    text = "the <|end|> cat"
    with pytest.raises(DisallowedSpecialTokenError):
        tok.encode(text)
    assert tok.encode_ordinary(text) == tok.encode(text, disallowed_special=()) == reference.encode_ordinary(text)
    assert tok.encode(text, allowed_special="all") == reference.encode(text, allowed_special="all")
    assert tok.encode(text, allowed_special="all") != tok.encode_ordinary(text)
    # parse_special (the one vocabulary's name of allowed_special="all") parses them, whatever disallowed_special
    assert tok.encode(text, parse_special=True, disallowed_special=()) == reference.encode(text, allowed_special="all")
    assert tok.encode(text, parse_special=True) == tok.encode(text, allowed_special="all")
    plain = ByteLevelBPE().fit(CORPUS, n_tokens=300, pattern="gpt2", quiet=True)
    assert plain.encode(text, allowed_special="all") == plain.encode(text)
    with pytest.raises(TypeError):
        plain._plain_text_encoder()(b"bytes")


def test_a_pickled_tokenizer_builds_its_own_call() -> None:
    import pickle

    tok = ByteLevelBPE().fit(CORPUS, n_tokens=300, pattern="o200k", quiet=True)
    want = tok.encode("the cat")
    copy = pickle.loads(pickle.dumps(tok))
    assert copy._plain is None and copy.encode("the cat") == want


@pytest.fixture(scope="module")
def from_file(tmp_path_factory, shuffled) -> tuple[ByteLevelBPE, tiktoken.Encoding]:
    """The shuffled ranks written as a ``.tiktoken`` file and read back: the load path that
    builds the merge table and this one-call path without numpy (`ByteLevelBPE._from_tables`)."""
    import ubpe

    tok, encoding = shuffled
    path = tmp_path_factory.mktemp("tiktoken") / "shuffled.tiktoken"
    ubpe.save(tok, path, format="tiktoken")
    loaded = ubpe.load(path, pattern=tok.pattern)
    assert loaded._is_deferred("vocabulary")  # read by that path, nothing built yet
    return loaded, encoding


@settings(max_examples=150, deadline=None)
@given(text=TEXTS)
def test_a_file_read_without_numpy_encodes_as_tiktoken(from_file, text: str) -> None:
    loaded, encoding = from_file
    assert loaded.encode(text, disallowed_special=()) == encoding.encode(text, disallowed_special=())


def test_a_file_read_without_numpy_builds_the_rest_when_asked(shuffled, tmp_path) -> None:
    """Its vocabulary, token ids and encoder come when first used, equal to a tokenizer built
    the numpy way; it pickles, copies, decodes and encodes batches like one."""
    import copy
    import pickle

    import ubpe

    tok, _ = shuffled
    path = tmp_path / "shuffled.tiktoken"
    ubpe.save(tok, path, format="tiktoken")

    def load() -> ByteLevelBPE:
        return ubpe.load(path, pattern=tok.pattern)

    fresh = load()
    np.testing.assert_array_equal(fresh.token_ids, tok.token_ids)
    assert fresh.vocabulary.pieces() == tok.vocabulary.pieces() and not fresh._is_deferred("vocabulary")
    texts = ["the cat sat", "naïve café 12345", ""]
    for other in (pickle.loads(pickle.dumps(load())), copy.deepcopy(load()), load(), fresh):
        assert [other.encode(t) for t in texts] == [tok.encode(t) for t in texts]
        assert other.decode(other.encode("the cat")) == "the cat"
        assert other.encode_batch(texts) == tok.encode_batch(texts)
        assert other.mergeable_ranks() == tok.mergeable_ranks()


@pytest.mark.parametrize("special", [3, 1000, 10**6])
def test_a_file_read_without_numpy_checks_its_special_tokens_as_the_numpy_path(shuffled, tmp_path, special) -> None:
    """A special token's id among the ranks (a byte's, a merged token's) is refused with the
    message of `ByteLevelBPE._install`; one past them is taken."""
    import ubpe
    from ubpe.errors import InvalidParameterError

    tok, _ = shuffled
    path = tmp_path / "shuffled.tiktoken"
    ubpe.save(tok, path, format="tiktoken")
    ranks = set(tok.mergeable_ranks().values())
    if special in ranks:
        with pytest.raises(InvalidParameterError, match=rf"special token ids \[{special}\] are mergeable tokens"):
            ubpe.load(path, pattern=tok.pattern, special_tokens={"<s>": special})
        with pytest.raises(InvalidParameterError, match=rf"special token ids \[{special}\] are mergeable tokens"):
            ByteLevelBPE.from_mergeable_ranks(tok.mergeable_ranks(), pattern=tok.pattern, special_tokens={"<s>": special})
    else:
        loaded = ubpe.load(path, pattern=tok.pattern, special_tokens={"<s>": special})
        assert loaded.encode("a<s>b", allowed_special="all")[1] == special


def test_a_file_read_without_numpy_refits_and_builds_once_across_threads(shuffled, tmp_path) -> None:
    """Refitting a loaded file's tokenizer replaces its tables (a pickle holds the new model,
    not the file's); threads that ask for its vocabulary at once get the one built."""
    import pickle
    import threading

    import ubpe

    tok, _ = shuffled
    path = tmp_path / "shuffled.tiktoken"
    ubpe.save(tok, path, format="tiktoken")
    refit = ubpe.load(path, pattern=tok.pattern).fit(["xyz xyz xyz"], n_tokens=258, quiet=True)
    again = pickle.loads(pickle.dumps(refit))
    assert again.encode("xyz") == refit.encode("xyz") and len(again.vocabulary) == 258
    loaded = ubpe.load(path, pattern=tok.pattern)
    seen, barrier = [], threading.Barrier(4)

    def ask() -> None:
        barrier.wait()
        seen.append((loaded.vocabulary, loaded._encoder, loaded.token_ids))

    workers = [threading.Thread(target=ask) for _ in range(4)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(seen) == 4 and all(entry[0] is seen[0][0] and entry[1] is seen[0][1] for entry in seen)
