"""What a numpy-free load leaves for later (issue 36, point 3): `imported.indexes_of` against a
Python oracle, ``token_types`` and an HF character model's scores made on first use equal to
what the numpy path made, from any thread at once, and through pickling before and after; the
word path of an HF character model whose pipeline runs in C, made when a text first needs it,
against ``tokenizers``."""

from __future__ import annotations

import pickle
import threading
from array import array

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe._lazy import LazyPattern
from ubpe.io.hf_import import from_json
from ubpe.models.hf_base import _merge_scores
from ubpe.models.imported import indexes_of

INT32 = st.integers(-(2**31), 2**31 - 1)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(st.integers(0, 6), INT32), max_size=40), st.lists(st.one_of(st.integers(0, 6), INT32),
                                                                            min_size=1, max_size=3), st.booleans())
def test_indexes_of_is_the_loop(values, wanted, first):
    """The bytes search finds exactly the items (never a match across two items: 256 is
    00 01 00 00, 1 then 0 is 01 00 00 00 00 00 00 00)."""
    found = indexes_of(array("i", values), wanted, first=first)
    every = [k for k, value in enumerate(values) if value in wanted]
    assert found == (every[:1] if first else every)


def test_indexes_of_never_matches_across_items():
    assert indexes_of(array("i", [256, 0, 1]), (1,)) == [2]
    assert indexes_of(array("i", [0x01000000, 0x00000001]), (1,)) == [1]


def _doc(fuse_unk: bool) -> str:
    import json

    vocab = {"<unk>": 0, "▁": 1, "a": 2, "b": 3, "▁a": 4, "ab": 5, "▁ab": 6, "c": 7}
    return json.dumps({
        "added_tokens": [{"id": 0, "content": "<unk>", "special": True, "single_word": False, "lstrip": False,
                          "rstrip": False, "normalized": False}],
        "normalizer": None, "decoder": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always"},
        "pre_tokenizer": {"type": "Metaspace", "replacement": "▁", "prepend_scheme": "always", "split": True},
        "model": {"type": "BPE", "vocab": vocab, "merges": ["▁ a", "a b", "▁a b", "▁ ab"], "unk_token": "<unk>",
                  "fuse_unk": fuse_unk, "byte_fallback": False}})


def test_scores_and_types_made_on_first_use_equal_the_eager_ones():
    tok = from_json(_doc(True))
    assert "scores" not in tok.__dict__ and "token_types" not in tok.__dict__  # left for later
    ids = tok.encode("ab a xb")
    expected = _merge_scores(len(tok.texts), array("i", [4, 5, 6, 6]), array("q", range(4)))
    assert expected.tolist() == [0, 0, 0, 0, -1, -2, -3, 0]  # a token's first rule's rank
    assert np.array_equal(tok.scores, expected) and tok.scores.dtype == np.float32
    assert tok.token_types.tolist() == [3, 1, 1, 1, 1, 1, 1, 1] and tok.token_types.dtype == np.int32
    assert tok.encode("ab a xb") == ids


def test_first_use_from_many_threads_makes_one_result():
    tok = from_json(_doc(False))
    seen: list = []
    barrier = threading.Barrier(8)

    def ask() -> None:
        barrier.wait()
        seen.append((tok.scores, tok.token_types))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(scores is seen[0][0] and types is seen[0][1] for scores, types in seen)


def test_pickled_before_and_after_first_use():
    for touch in (False, True):
        tok = from_json(_doc(True))
        if touch:
            tok.scores, tok.token_types  # noqa: B018
        copy = pickle.loads(pickle.dumps(tok))
        assert copy.encode("ab a xb") == tok.encode("ab a xb")
        assert np.array_equal(copy.scores, tok.scores) and np.array_equal(copy.token_types, tok.token_types)


#: texts of `_doc`'s characters, some holding its added token (which sends a text the general way)
PIECES = st.lists(st.sampled_from(["a", "b", "c", "x", " ", "▁", "<unk>", "ab "]), max_size=8).map("".join)


@settings(max_examples=150, deadline=None)
@given(st.lists(PIECES, min_size=1, max_size=6), st.booleans())
def test_the_word_path_made_when_a_text_first_needs_it_gives_the_peers_ids(texts, fuse_unk):
    """A file whose pipeline runs in C loads without the word path's kernels (`_kernel`,
    `_scanner`); a text holding an added token goes the general way, which makes them then:
    every text's ids are ``tokenizers``' either way, before and after."""
    from tokenizers import Tokenizer

    doc = _doc(fuse_unk)
    tok, reference = from_json(doc), Tokenizer.from_str(doc)
    assert "_kernel" not in tok.__dict__ and "_scanner" not in tok.__dict__
    for text in texts + ["ab<unk> a"] + texts:
        assert tok.encode(text) == reference.encode(text, add_special_tokens=False).ids, text
    assert "_kernel" in tok.__dict__ and "_word_path" not in tok.__dict__


def test_the_word_path_from_many_threads_is_made_once_and_survives_pickling():
    tok = from_json(_doc(False))
    copy = pickle.loads(pickle.dumps(tok))  # before it is made: the copy makes its own
    seen: list = []
    barrier = threading.Barrier(8)

    def ask() -> None:
        barrier.wait()
        seen.append((tok.encode("ab<unk> a"), tok._kernel))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(ids == [6, 0, 4] and kernel is seen[0][1] for ids, kernel in seen)
    assert copy.encode("ab<unk> a") == [6, 0, 4] and pickle.loads(pickle.dumps(tok)).encode("ab<unk> a") == [6, 0, 4]


def test_types_set_again_replace_the_view_made_of_the_first():
    """``_init_common`` run again (with an ``array('i')`` or with numpy's array) after
    ``token_types`` was made: what is read next is the new types, whichever way they came."""
    tok = from_json(_doc(True))
    n = len(tok.texts)
    assert tok.token_types.tolist()[0] == 3
    tok._init_common(tok.texts, array("i", [1]) * n, {}, None, tok.name, tok.where)
    assert tok.token_types.tolist() == [1] * n and tok._ids_of_types((3,)) == []
    tok._init_common(tok.texts, np.full(n, 2, dtype=np.int32), {}, None, tok.name, tok.where)
    assert tok._ids_of_types((2,)) == list(range(n)) and tok._type_of(0) == 2


def test_lazy_pattern_compiles_once_and_pickles_uncompiled():
    pattern = LazyPattern(r"[ab]+")
    assert pattern.pattern == "[ab]+" and pattern._compiled is None  # read without compiling
    assert pattern.findall("xaby") == ["ab"] and pattern._compiled is not None
    again = pickle.loads(pickle.dumps(pattern))
    assert again._compiled is None and again.sub("-", "abc") == "-c"
