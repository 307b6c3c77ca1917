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
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe._lazy import LazyPattern
from ubpe.io.hf_import import from_json
from ubpe.models.deferred import Deferred
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
    assert "_kernel" not in tok.__dict__ and {"_kernel", "_scanner", "_python_reason"} <= set(tok._pending())
    for text in texts + ["ab<unk> a"] + texts:
        assert tok.encode(text) == reference.encode(text, add_special_tokens=False).ids, text
    assert "_kernel" in tok.__dict__ and "_scanner" in tok.__dict__ and "_kernel" not in tok._pending()


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


# -- the mechanism the three models share (ubpe.models.deferred) -------------------------

class _Counted(Deferred):
    """A `Deferred` whose builders log their runs; ``b``'s builder reads ``a`` (another
    builder's name: the lock is re-entered); ``a``'s fails as often as ``failures`` says."""

    def __init__(self, failures: int = 0):
        self.runs: list[str] = []
        self.failures = failures
        self._defer(_Counted.build_a, "a", "a2")
        self._defer(_Counted.build_b, "b")

    def build_a(self) -> None:
        self.runs.append("a")
        if self.failures:
            self.failures -= 1
            raise OSError("a failed builder leaves its names deferred")
        self.a, self.a2 = 1, 2

    def build_b(self) -> None:
        self.runs.append("b")
        self.b = self.a + 10


def test_deferred_names_are_built_once_by_their_builder():
    model = _Counted()
    assert model._pending() == ["a", "a2", "b"] and "a" not in vars(model)
    assert model.b == 11 and model.a2 == 2 and model.a == 1  # b's builder read a: built a first
    assert model.runs == ["b", "a"] and model._pending() == []
    with pytest.raises(AttributeError, match="'_Counted' object has no attribute 'c'"):
        model.c  # noqa: B018
    assert not model._is_deferred("a")


def test_a_builder_that_fails_is_run_again_on_the_next_read():
    model = _Counted(failures=1)
    with pytest.raises(OSError, match="leaves its names deferred"):
        model.a  # noqa: B018
    assert model._is_deferred("a") and model.a == 1 and model.runs == ["a", "a"]


def test_deferred_names_from_many_threads_are_built_once():
    for name in ("a", "a2", "b"):
        model = _Counted()
        barrier = threading.Barrier(8)
        seen: list = []

        def ask() -> None:
            barrier.wait()
            seen.append(getattr(model, name))

        threads = [threading.Thread(target=ask) for _ in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(seen) == 8 and len(set(seen)) == 1
        assert sorted(model.runs) == (["a", "b"] if name == "b" else ["a"])


def test_cancelled_builders_never_run():
    model = _Counted()
    model._cancel_deferred()
    assert model._pending() == [] and model.runs == []
    with pytest.raises(AttributeError):
        model.a  # noqa: B018


def test_a_tiktoken_file_with_a_users_pattern_builds_its_vocabulary_when_asked(tmp_path):
    """A ``.tiktoken`` file read without numpy, with a user's pattern, leaves its vocabulary
    for later (also through pickling, which builds it first) and encodes as tiktoken does."""
    import tiktoken

    import ubpe
    from ubpe.models.bytelevel import ByteLevelBPE

    pattern = r"[a-z]+|\s+|[^a-z\s]+"
    tok = ByteLevelBPE().fit(["the cat sat on the mat"] * 5, n_tokens=280, pattern="gpt2", quiet=True)
    path = tmp_path / "m.tiktoken"
    ubpe.save(tok, path, format="tiktoken")
    reference = tiktoken.Encoding("m", pat_str=pattern, mergeable_ranks=tok.mergeable_ranks(), special_tokens={})
    text = "the cat, 12 mats!"
    loaded = ubpe.load(path, pattern=pattern)
    assert loaded._pending() == ["_encoder", "token_ids", "vocabulary"]
    assert loaded.encode(text) == reference.encode(text) and loaded._pending()  # (one text needs no vocabulary)
    copy = pickle.loads(pickle.dumps(loaded))
    assert loaded._pending() == copy._pending() == [] and copy.encode_batch([text, ""]) == [reference.encode(text), []]
    assert loaded.vocabulary.pieces() == copy.vocabulary.pieces()
