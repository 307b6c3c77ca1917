"""`ubpe_native._spm_proto.bpe_tables` (a sentencepiece BPE model's merge rules, derived in
C) against the Python derivation it stands in for: ``SentencePieceBPE._build_spm_kernel``, its
rules by ``_derive_merge_rules``. On random small piece sets - pieces given twice, empty
pieces, characters of one to four bytes, every piece type, equal scores (``0.0`` and ``-0.0``
among them) - the kernel gets the very same arguments either way: the rules and their order,
the ids of the characters that are no piece (``n + j`` in the order they are first met), the
units, the byte fallback and the flags. And an `SpmBPE` that merges by the pieces' texts (a
``.model`` file's: ``bpe_tables(..., rules=False)`` and the pieces, no rules) gives the ids of
the one built on the derived rules, on random texts over the pieces' characters and others.
"""

from __future__ import annotations

from array import array

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe.models.sentencepiece as spm_models
import ubpe.tables_cache
from ubpe.text.normalizers import Normalizer
from ubpe_native._spm import SpmBPE
from ubpe_native._spm_proto import bpe_tables

NORMAL, UNKNOWN, CONTROL, USER_DEFINED, UNUSED, BYTE = 1, 2, 3, 4, 5, 6
TEXTS = st.one_of(st.text(alphabet="ab▁é東🦙", max_size=5),
                  st.sampled_from(["<0x61>", "<0xC3>", "<0xA9>", "<0xE2>", "<s>", "▁a", "ab"]))
TYPES = st.sampled_from([NORMAL] * 6 + [CONTROL, USER_DEFINED, UNUSED, BYTE])
SCORES = st.sampled_from([0.0, -0.0, -1.0, -2.5, 3.0, -1e9])


@st.composite
def piece_sets(draw) -> tuple[list[str], list[int], list[float], int]:
    """``(texts, types, scores, unk_id)``: one unknown piece, the others of any type."""
    n = draw(st.integers(1, 24))
    texts = draw(st.lists(TEXTS, min_size=n, max_size=n))
    types = draw(st.lists(TYPES, min_size=n, max_size=n))
    scores = draw(st.lists(SCORES, min_size=n, max_size=n))
    unk_id = draw(st.integers(0, n - 1))
    types[unk_id] = UNKNOWN
    return texts, types, scores, unk_id


def _plain(value):
    """numpy arrays and ``array.array`` objects as lists, the rest as it is."""
    return value.tolist() if hasattr(value, "tolist") else value


def _python_arguments(texts, types, scores, unk_id) -> list:
    """The arguments ``SentencePieceBPE._build_spm_kernel`` gives `SpmBPE` (its rules derived
    in Python, not read from the machine's cache)."""
    calls = []
    real_kernel, real_cache = spm_models.SpmBPE, ubpe.tables_cache.cached_arrays

    def record(*args):
        calls.append([_plain(a) for a in args])
        return real_kernel(*args)

    spm_models.SpmBPE = record
    ubpe.tables_cache.cached_arrays = lambda kind, key, build: {k: np.asarray(v) for k, v in build().items()}
    try:
        user = tuple(t for t, k in zip(texts, types) if k == USER_DEFINED and t)
        spm_models.SentencePieceBPE(texts, np.array(scores, np.float32), token_types=np.array(types, np.int32),
                                    specials={"unk": unk_id}, normalizer=Normalizer(b"", protected=user))
    finally:
        spm_models.SpmBPE, ubpe.tables_cache.cached_arrays = real_kernel, real_cache
    assert len(calls) == 1
    return calls[0]


@settings(max_examples=300, deadline=None)
@given(piece_sets())
def test_bpe_tables_give_the_python_derivations_kernel_arguments(pieces):
    texts, types, scores, unk_id = pieces
    encoded = [t.encode() for t in texts]
    offsets = array("q", [0])
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    *rules, fallback, collapse_unk, split_words = bpe_tables(b"".join(encoded), offsets, array("i", types),
                                                             array("f", scores), unk_id)
    found = [len(texts), *map(_plain, rules), unk_id, _plain(fallback), collapse_unk, split_words]
    assert found == _python_arguments(texts, types, scores, unk_id)


def _pieces(texts, types, scores) -> tuple:
    encoded = [t.encode() for t in texts]
    offsets = array("q", [0])
    for e in encoded:
        offsets.append(offsets[-1] + len(e))
    return b"".join(encoded), offsets, array("i", types), array("f", scores)


@settings(max_examples=500, deadline=None)
@given(piece_sets(), st.lists(st.one_of(st.integers(0, 23), st.sampled_from("ab▁é東🦙z")), max_size=12),
       st.lists(st.sampled_from([0.0, -1.0, -2.5, 3.0, -7.0, 1.5]), min_size=24, max_size=24), st.booleans())
def test_merging_by_text_gives_the_derived_rules_ids(pieces, parts, other_scores, distinct):
    """The text: pieces (by index) and characters, one after another; half the time the
    scores are of more distinct values (then the order of the merges is the scores')."""
    texts, types, scores, unk_id = pieces
    if distinct:
        scores = other_scores[: len(texts)]
    kept = {text: k for k, text in reversed(list(enumerate(texts)))}  # each text once: its first piece
    if kept[texts[unk_id]] != unk_id:
        return
    keep = sorted(kept.values())
    unk_id = keep.index(unk_id)
    texts, types, scores = ([values[k] for k in keep] for values in (texts, types, scores))
    blob, offsets, kinds, weights = _pieces(texts, types, scores)
    *rules, fallback, collapse_unk, split_words = bpe_tables(blob, offsets, kinds, weights, unk_id)
    derived = SpmBPE(len(texts), *rules, unk_id, fallback, collapse_unk, split_words)
    *tables, fallback_2, collapse_2, split_2 = bpe_tables(blob, offsets, kinds, weights, unk_id, False)
    assert [len(t) for t in tables[:4]] == [0] * 4
    assert (_plain(fallback_2), collapse_2, split_2) == (_plain(fallback), collapse_unk, split_words)
    by_text = SpmBPE(len(texts), *tables, unk_id, fallback, collapse_unk, split_words,
                     pieces=(blob, offsets, kinds, weights))
    text = "".join(texts[p % len(texts)] if isinstance(p, int) else p for p in parts).encode()
    assert by_text.encode(text).tolist() == derived.encode(text).tolist()
