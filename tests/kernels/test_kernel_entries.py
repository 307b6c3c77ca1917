"""Every ``def`` entry and public method of the kernels in ``_combine``, ``_lattice_cache``,
``_parts``, ``_fit``, ``_unigram``, ``_paths``, ``_radix``, ``_sampling``, ``_score``,
``_tables``, ``_textsplit``, ``_pretokenize``, ``_regex`` and ``_spm_pipeline``, called with hostile
arguments (issue 28, point 9): negative ids, ids past the vocabulary, offsets that do not start
at 0, do not ascend or run past the end, empty arrays, wrong dtypes, None, and sizes no memory
holds. Each must raise a clear Python exception - never crash, never read past an array, never
try to allocate terabytes (the ASan lane, ``.ci/debug_build.sh``, runs this file). Stateful
objects (``PartCounter``, ``PairMerger``) refuse a second call while one runs on another
thread (``ubpe_native.BusyError``). ``test_kernel_tables.py`` finds every kernel module's
entries by inspection and checks that each one is called here or there.

The regressions of point 9 are the first tests; each failed before its fix (a segfault, a
"double free", ids read from heap memory, or no error).
"""

from __future__ import annotations

import threading

import numpy as np
import pytest

from ubpe_native._base64_lines import ranked_tables
from ubpe_native._combine import top1_documents, walk
from ubpe_native._errors import BusyError
from ubpe_native._fit import MAX_THREADS, PairMerger
from ubpe_native._lattice_cache import Lattice, encode_parts
from ubpe_native._parts import WHOLE_DOCUMENTS, PartCounter
from ubpe_native._paths import kbest_paths, longest_prefix, longest_token
from ubpe_native._pretokenize import find_pieces, or_classes, split_ranges, split_text
from ubpe_native._regex import n_free_slots, register_program
from ubpe_native._radix import RadixTree
from ubpe_native._sampling import SegmentLattice
from ubpe_native._score import part_scores, score_tokens
from ubpe_native._tables import StringIds, length_prefixed, merges_span, pair_ids_in, pair_ids_in_json
from ubpe_native._spm_proto import bpe_tables, piece_texts, read_model_proto, unigram_tables, user_defined_table
from ubpe_native._textsplit import TextSplitter
from ubpe_native._unigram import UnigramLattice

I32, I64, F64, U8 = np.int32, np.int64, np.float64, np.uint8
# sizes no memory holds: refused before anything is allocated (under ASan an attempt aborts)
HUGE = 2**40
VAST = 2**62  # (n + 1) * VAST wraps to a small size in 64 bits: once a tiny buffer, then a crash
INT32_MAX = 2**31 - 1

# token 2 = [0 1] over base ids 0, 1
TREE = RadixTree(2, np.array([0, 2]), np.array([0, 1], I32))
WEIGHTS = np.array([0.0, 0.0, 0.5])
SYMBOLS = np.array([0, 1, 0], I32)
BOUNDS = np.array([0, 3], I64)
NO_CLASSES = np.zeros(0, np.uint16)
NO_FALLBACK = np.full(256, -1, I32)
# "a" -> 0, "b" -> 1 (a table of code points, as add_text and TextSplitter take)
AB_TABLE = np.array([-1] * 97 + [0, 1], I32)


def _compiled() -> int:
    """The id of a pattern compiled for the kernel's regex VM."""
    from ubpe.text.regex_program import compile_pattern

    return compile_pattern(r"\S+|\s+").pattern_id


def _classes():
    from ubpe.splitting import split_classes

    return split_classes()


def _unigram(**changes):
    args = dict(blob=b"ab", offsets=np.array([0, 1, 2], I64), ids=np.array([3, 4], I32),
                scores=np.array([-1.0, -1.0], np.float32), user_defined=np.zeros(2, U8), unk_id=0,
                unk_score=-11.0, byte_fallback=NO_FALLBACK)
    args.update(changes)
    return UnigramLattice(*args.values())


# -- the findings of issue 28, point 9 ------------------------------------------------------

def test_walk_refuses_negative_ids():
    # once: a negative id indexed the table of int objects backwards (segfault)
    with pytest.raises(ValueError, match="tokens may hold ids"):
        walk(np.array([0, 1], I64), np.array([0, 1], I64), np.array([-5], I32), np.array([1.0]), 1)


def test_walk_with_an_id_far_past_any_table_builds_no_table_for_it():
    # the table of shared ints grows to the largest id asked for: 2**31 - 2 would be 2**31 ints
    tokens, scores = walk(np.array([0, 1], I64), np.array([0, 2], I64), np.array([INT32_MAX - 1, 3], I32),
                          np.array([1.0]), 1)
    assert tokens == [[INT32_MAX - 1, 3]] and scores == [1.0]


def test_walk_with_a_top_n_past_its_paths_allocates_for_its_paths_only():
    # once: tails for parts * top_n candidates were allocated up front (2 * 2**31 - 2 of them)
    args = (np.array([0, 2, 3], I64), np.array([0, 1, 3, 4], I64), np.array([5, 1, 2, 3], I32),
            np.array([1.0, 0.5, 0.0]))
    assert walk(*args, INT32_MAX) == walk(*args, 2) == ([[5, 3], [1, 2, 3]], [1.0, 0.5])


def test_top1_documents_refuses_a_part_without_candidate():
    # once: part 1's candidate was candidate_offsets[1] = 1, past the one candidate: its tokens
    # were read from past token_offsets' end (3,633 ids of heap memory came back)
    with pytest.raises(ValueError, match="part 1 has no candidate"):
        top1_documents(np.array([5], I32), np.array([0, 1], I64), np.array([1.0]), np.array([0, 2], I64),
                       candidate_offsets=np.array([0, 1, 1], I64))
    with pytest.raises(ValueError, match="part 0 has no candidate"):
        top1_documents(np.array([5], I32), np.array([0, 1], I64), np.array([1.0]), np.array([0, 2], I64),
                       candidate_offsets=np.array([0, 0, 1], I64), arrays=True)


def _ab_text(n_docs, width):
    """``n_docs`` documents of ``width`` characters over "ab" (each one part of WHOLE_DOCUMENTS)."""
    rng = np.random.default_rng(n_docs)
    data = np.where(rng.random(n_docs * width) < 0.5, ord("a"), ord("b")).astype(U8)
    return data, np.arange(0, n_docs * width + 1, width, dtype=I64)


def _until_done(worker, call):
    """Run ``call`` while ``worker`` (a started thread) runs; ``(refused, done)``: how many
    calls raised BusyError and how many ran through."""
    refused = done = 0
    while worker.is_alive():
        try:
            call()
        except BusyError:
            refused += 1
        else:
            done += 1
    worker.join()
    return refused, done


def _retrying(call, errors):
    """``call`` until it is not refused: the main thread may hold the object when it starts."""
    def run():
        while True:
            try:
                call()
                return
            except BusyError:
                continue
            except BaseException as exc:  # noqa: BLE001 - reported by the test
                errors.append(exc)
                return
    return threading.Thread(target=run)


def test_part_counter_refuses_a_second_call_while_one_runs():
    # once: the busy flag was set only after add_text's first nogil block (two threads could
    # both pass the check: a segfault or "double free"), and export never set it
    data, chars = _ab_text(20_000, 40)
    small, small_chars = np.frombuffer(b"abba", U8), np.array([0, 4], I64)
    for attempt in range(20):
        counter, errors = PartCounter(), []
        worker = _retrying(lambda: counter.add_text(data, chars, NO_CLASSES, WHOLE_DOCUMENTS, AB_TABLE), errors)
        worker.start()
        calls = [lambda: counter.add_text(small, small_chars, NO_CLASSES, WHOLE_DOCUMENTS, AB_TABLE),
                 lambda: counter.export()]
        refused, done = _until_done(worker, lambda: calls[attempt % 2]())
        assert not errors
        expected = 20_000 + (done if attempt % 2 == 0 else 0)
        assert counter.n_docs == expected  # every call that ran, ran whole, one at a time
        if refused:
            break
    else:
        pytest.fail("no call was refused while add_text ran")


def test_absorb_refuses_a_counter_another_call_is_using():
    # absorb() runs without the GIL on both counters: it takes both flags
    data, chars = _ab_text(20_000, 40)
    for _ in range(20):
        first, second, errors = PartCounter(), PartCounter(), []
        worker = _retrying(lambda: second.add_text(data, chars, NO_CLASSES, WHOLE_DOCUMENTS, AB_TABLE), errors)
        worker.start()
        refused = 0
        while worker.is_alive():
            try:
                first.absorb(second)
            except BusyError:
                refused += 1
            except ValueError:  # absorbed before add_text began, which then found it released
                break
        worker.join()
        if refused and not errors:
            # (absorb may also have run once add_text was done)
            assert first.n_docs + second.n_docs == 20_000
            if second.n_docs:
                first.absorb(second)
            assert first.n_docs == 20_000
            break
    else:
        pytest.fail("absorb was never refused while the other counter was in use")


def _corpus(n_parts=4_000, length=30, n_symbols=12):
    rng = np.random.default_rng(7)
    tokens = rng.integers(0, n_symbols, n_parts * length).astype(I32)
    offsets = np.arange(0, n_parts * length + 1, length, dtype=I64)
    return tokens, offsets, (np.arange(n_parts) // 4).astype(I32), n_parts // 4, n_symbols


def test_pair_merger_refuses_a_second_call_while_one_runs():
    # once: no guard at all, and use_threads deleted the pool a running step was using
    tokens, offsets, docs, n_docs, n_symbols = _corpus()
    alone = PairMerger(tokens, offsets, docs, n_docs, n_symbols)
    while alone.step(8) and alone.next_token < 400:
        pass
    calls = [lambda m: m.use_threads(2), lambda m: m.merges(), lambda m: m.pair_counts(),
             lambda m: m.current_tokens(), lambda m: m.documents_of(np.array([0], I32), np.array([1], I32)),
             lambda m: m.step(8)]
    seen_refused = 0
    for call in calls:
        merger = PairMerger(tokens, offsets, docs, n_docs, n_symbols)
        merger.use_threads(2, 0)
        errors = []
        stepped = []

        def fit():
            while merger.next_token < 400:
                stepped.append(merger.step(8))
                if not stepped[-1]:
                    return
        worker = _retrying(fit, errors)
        worker.start()
        refused, _ = _until_done(worker, lambda: call(merger))
        assert not errors
        seen_refused += refused
        if call is not calls[-1]:  # (the last one steps too: its merges are its own)
            assert [a.tolist() for a in merger.merges()] == [a.tolist() for a in alone.merges()]
    assert seen_refused


def test_apply_merges_keeps_ids_below_2_31():
    # once: step checked it, apply_merges did not - the id after 2**31 - 2 wrapped negative
    merger = PairMerger(np.array([0, 1] * 4, I32), np.array([0, 8], I64), np.zeros(1, I32), 1, INT32_MAX - 1)
    with pytest.raises(ValueError, match="below 2\\*\\*31 - 1"):
        merger.apply_merges(np.array([0, 0], I32), np.array([1, INT32_MAX - 1], I32))
    assert merger.next_token == INT32_MAX - 1  # refused before anything was merged
    merger.apply_merges(np.array([0], I32), np.array([1], I32))
    assert merger.next_token == INT32_MAX


def test_pair_merger_and_part_counter_are_built_once():
    merger = PairMerger(SYMBOLS, BOUNDS, np.zeros(1, I32), 1, 2)
    with pytest.raises(ValueError, match="built once"):
        merger.__init__(SYMBOLS, BOUNDS, np.zeros(1, I32), 1, 2)
    counter = PartCounter()
    counter.add(SYMBOLS, BOUNDS, np.zeros(1, I32), 1)
    counter.__init__()  # (counts stay: the start entries are made once, by __cinit__)
    assert counter.n_docs == 1 and counter.export()[1].tolist() == [0, 3]


# -- hostile arguments at every entry ---------------------------------------------------------

def _merger():
    return PairMerger(np.array([0, 1, 0, 1], I32), np.array([0, 4], I64), np.zeros(1, I32), 1, 2)


def _lattice():
    return Lattice(TREE, WEIGHTS)


def _strings():
    return StringIds(b"abcd", np.array([0, 1, 2, 4], I64))


def _segments():
    return SegmentLattice(TREE, SYMBOLS, BOUNDS)


def _splitter(table=AB_TABLE):
    return TextSplitter(table, _classes(), 5)


def _pipeline(**changes):
    from ubpe_native._spm import SpmNormalizer
    from ubpe_native._spm_pipeline import SpmPipeline

    normalizer = SpmNormalizer(np.zeros(0, np.uint32), b"", True, True, True, False, b"", np.array([0], I64),
                               np.zeros(0, I32))
    lattice = UnigramLattice("▁ab".encode(), np.array([0, 3, 4, 5]), np.array([1, 2, 3], I32),
                             np.array([-1, -1, -1], np.float32), np.zeros(3, U8), 0, -11.0, NO_FALLBACK)
    args = dict(normalizer=normalizer, model=lattice, prefix_unless_space=False, trigger_blob=b"",
                trigger_offsets=None, trigger_ids=None)
    args.update(changes)
    return SpmPipeline(*args.values())


def _walk(candidate_offsets=(0, 2, 3), token_offsets=(0, 1, 3, 4), tokens=(5, 1, 2, 3), scores=(1.0, 0.5, 0.0),
          top_n=2):
    return walk(np.asarray(candidate_offsets, I64), np.asarray(token_offsets, I64), np.asarray(tokens, I32),
                np.asarray(scores, F64), top_n)


def _top1(tokens=(5, 1, 2), token_offsets=(0, 1, 3), scores=(1.0, 0.5), doc_part_offsets=(0, 2, 2), **options):
    return top1_documents(tokens, token_offsets, scores, doc_part_offsets, **options)


def _pieces(function, blob=b"<unk>ab", offsets=(0, 5, 6, 7), types=(2, 1, 1), scores=(0.0, -1.0, -2.0), **options):
    """A `_spm_proto` table function on three pieces (``<unk>``, ``a``, ``b``), one argument
    changed."""
    from array import array

    args = [blob, array("q", offsets) if isinstance(offsets, tuple) else offsets,
            array("i", types) if isinstance(types, tuple) else types]
    if function is not user_defined_table:
        args.append(array("f", scores) if isinstance(scores, tuple) else scores)
    return function(*args, **options)


# name -> (call, the exception it must raise)
HOSTILE = {
    # _combine
    # _spm_proto (bytes that are no model give None: tests/kernels/test_spm_proto.py)
    "read_model_proto/None": (lambda: read_model_proto(None), TypeError),
    "read_model_proto/str": (lambda: read_model_proto("\n\x00"), TypeError),
    "read_model_proto/int32 buffer": (lambda: read_model_proto(np.zeros(4, I32)), ValueError),
    "read_model_proto/2-D": (lambda: read_model_proto(np.zeros((2, 2), np.uint8)), ValueError),
    "bpe_tables/None": (lambda: _pieces(bpe_tables, blob=None, unk_id=0), TypeError),
    "bpe_tables/no pieces": (lambda: _pieces(bpe_tables, b"", (0,), (), (), unk_id=0), ValueError),
    "bpe_tables/offsets not from 0": (lambda: _pieces(bpe_tables, offsets=(1, 5, 6, 7), unk_id=0), ValueError),
    "bpe_tables/offsets past the end": (lambda: _pieces(bpe_tables, offsets=(0, 5, 6, 9), unk_id=0), ValueError),
    "bpe_tables/offsets not ascending": (lambda: _pieces(bpe_tables, offsets=(0, 6, 5, 7), unk_id=0), ValueError),
    "bpe_tables/types short": (lambda: _pieces(bpe_tables, types=(2, 1), unk_id=0), ValueError),
    "bpe_tables/scores short": (lambda: _pieces(bpe_tables, scores=(0.0,), unk_id=0), ValueError),
    "bpe_tables/NaN score": (lambda: _pieces(bpe_tables, scores=(0.0, float("nan"), 1.0), unk_id=0), ValueError),
    "bpe_tables/infinite score": (lambda: _pieces(bpe_tables, scores=(0.0, float("-inf"), 1.0), unk_id=0),
                                  ValueError),
    "bpe_tables/float64 scores": (lambda: _pieces(bpe_tables, scores=np.zeros(3), unk_id=0), ValueError),
    "bpe_tables/not UTF-8": (lambda: _pieces(bpe_tables, blob=b"<unk>\xffb", unk_id=0), ValueError),
    "bpe_tables/cut character": (lambda: _pieces(bpe_tables, blob="<unk>é".encode(), unk_id=0), ValueError),
    "bpe_tables/negative unk": (lambda: _pieces(bpe_tables, unk_id=-1), ValueError),
    "bpe_tables/unk past the pieces": (lambda: _pieces(bpe_tables, unk_id=3), ValueError),
    "bpe_tables/unk past int32": (lambda: _pieces(bpe_tables, unk_id=2**31), OverflowError),
    "unigram_tables/None": (lambda: _pieces(unigram_tables, types=None), TypeError),
    "unigram_tables/no pieces": (lambda: _pieces(unigram_tables, b"", (0,), (), ()), ValueError),
    "unigram_tables/offsets past the end": (lambda: _pieces(unigram_tables, offsets=(0, 5, 6, 8)), ValueError),
    "unigram_tables/types short": (lambda: _pieces(unigram_tables, types=(2,)), ValueError),
    "unigram_tables/NaN score": (lambda: _pieces(unigram_tables, scores=(0.0, float("nan"), 1.0)), ValueError),
    "unigram_tables/not UTF-8": (lambda: _pieces(unigram_tables, blob=b"<unk>\xed\xa0"), ValueError),
    "unigram_tables/int64 types": (lambda: _pieces(unigram_tables, types=np.array([2, 1, 1], I64)), ValueError),
    "user_defined_table/None": (lambda: _pieces(user_defined_table, offsets=None), TypeError),
    "user_defined_table/offsets past the end": (lambda: _pieces(user_defined_table, offsets=(0, 5, 6, 8)),
                                                ValueError),
    "user_defined_table/no offsets": (lambda: _pieces(user_defined_table, offsets=np.zeros(0, I64), types=()),
                                      ValueError),
    "user_defined_table/types short": (lambda: _pieces(user_defined_table, types=(2, 4)), ValueError),
    "piece_texts/None": (lambda: piece_texts(None, np.array([0], I64)), TypeError),
    "piece_texts/offsets past the end": (lambda: piece_texts(b"ab", np.array([0, 3], I64)), ValueError),
    "piece_texts/offsets not ascending": (lambda: piece_texts(b"ab", np.array([0, 2, 1], I64)), ValueError),
    "piece_texts/not UTF-8": (lambda: piece_texts(b"a\xff", np.array([0, 1, 2], I64)), UnicodeDecodeError),
    "ranked_tables/None": (lambda: ranked_tables(None), TypeError),
    "ranked_tables/str": (lambda: ranked_tables("YQ== 0"), TypeError),
    "ranked_tables/int32 buffer": (lambda: ranked_tables(np.zeros(4, I32)), ValueError),
    "ranked_tables/2-D": (lambda: ranked_tables(np.zeros((2, 2), np.uint8)), ValueError),
    "walk/negative id": (lambda: _walk(tokens=(5, -1, 2, 3)), ValueError),
    "walk/offsets not from 0": (lambda: _walk(candidate_offsets=(1, 2, 3)), ValueError),
    "walk/offsets not ascending": (lambda: _walk(token_offsets=(0, 3, 1, 4)), ValueError),
    "walk/offsets past the end": (lambda: _walk(token_offsets=(0, 1, 3, 9)), ValueError),
    "walk/part without candidate": (lambda: _walk(candidate_offsets=(0, 0, 3)), ValueError),
    "walk/one offset short": (lambda: _walk(token_offsets=(0, 1, 4), tokens=(5, 1, 2, 3)), ValueError),
    "walk/empty": (lambda: _walk((), (), (), ()), ValueError),
    "walk/float tokens": (lambda: walk(np.array([0, 1], I64), np.array([0, 1], I64), np.array([1.0]),
                                       np.array([1.0]), 1), ValueError),
    "walk/None": (lambda: walk(None, np.array([0], I64), np.zeros(0, I32), np.zeros(0), 1), TypeError),
    "walk/top_n 0": (lambda: _walk(top_n=0), ValueError),
    "walk/top_n past int": (lambda: _walk(top_n=2**40), OverflowError),
    "top1_documents/negative id": (lambda: _top1(tokens=(5, -1, 2)), ValueError),
    "top1_documents/id past int32": (lambda: _top1(tokens=(5, 2**31, 2)), ValueError),
    "top1_documents/float ids": (lambda: _top1(tokens=(5.0, 1.0, 2.0)), TypeError),
    "top1_documents/None": (lambda: _top1(tokens=None), TypeError),
    "top1_documents/docs past the end": (lambda: _top1(doc_part_offsets=(0, 2, 3)), ValueError),
    "top1_documents/docs not ascending": (lambda: _top1(doc_part_offsets=(0, 2, 1, 2)), ValueError),
    "top1_documents/candidates past the end": (lambda: _top1(doc_part_offsets=(0, 1), candidate_offsets=(0, 3)),
                                     ValueError),
    "top1_documents/scores short": (lambda: _top1(scores=(1.0,)), ValueError),
    # _lattice_cache
    "encode_parts/id past base": (lambda: encode_parts(TREE, WEIGHTS, np.array([0, 2], I32), np.array([0, 2])),
                                  ValueError),
    "encode_parts/negative id": (lambda: encode_parts(TREE, WEIGHTS, np.array([-1], I32), np.array([0, 1])),
                                 ValueError),
    "encode_parts/offsets": (lambda: encode_parts(TREE, WEIGHTS, SYMBOLS, np.array([0, 4])), ValueError),
    "encode_parts/weights short": (lambda: encode_parts(TREE, WEIGHTS[:2], SYMBOLS, BOUNDS), ValueError),
    "encode_parts/base weighs": (lambda: encode_parts(TREE, np.ones(3), SYMBOLS, BOUNDS), ValueError),
    "encode_parts/None tree": (lambda: encode_parts(None, WEIGHTS, SYMBOLS, BOUNDS), TypeError),
    "encode_parts/huge top_n": (lambda: encode_parts(TREE, WEIGHTS, SYMBOLS, BOUNDS, HUGE), ValueError),
    "encode_parts/top_n 0": (lambda: encode_parts(TREE, WEIGHTS, SYMBOLS, BOUNDS, 0), ValueError),
    "Lattice.encode_parts/top_n no memory holds": (lambda: _lattice().encode_parts(
        np.zeros(100, I32), np.array([0, 100]), INT32_MAX), MemoryError),
    "Lattice.encode_parts/negative id": (lambda: _lattice().encode_parts(np.array([-1], I32), np.array([0, 1])),
                                         ValueError),
    "Lattice/None tree": (lambda: Lattice(None, WEIGHTS), TypeError),
    "Lattice/weights None": (lambda: Lattice(TREE, None), TypeError),
    "Lattice.encode_documents/docs past the end": (
        lambda: _lattice().encode_documents(SYMBOLS, BOUNDS, np.array([0, 2])), ValueError),
    "Lattice.encode_documents/top_n past int": (
        lambda: _lattice().encode_documents(SYMBOLS, BOUNDS, np.array([0, 1]), 2**31), ValueError),
    "Lattice.encode_documents/wrong dtype": (
        lambda: _lattice().encode_documents(SYMBOLS.astype(F64) + 0.5, BOUNDS, np.array([0, 1])), TypeError),
    "Lattice.encode_texts/None splitter": (lambda: _lattice().encode_texts(None, ["ab"]), TypeError),
    "Lattice.encode_texts/docs no sequence": (lambda: _lattice().encode_texts(_splitter(), 5), TypeError),
    "Lattice.encode_texts/splitter past base": (
        lambda: _lattice().encode_texts(_splitter(np.array([-1] * 97 + [0, 5], I32)), ["ab"]), ValueError),
    "Lattice.encode_texts/top_n 0": (lambda: _lattice().encode_texts(_splitter(), ["ab"], 0), ValueError),
    # _parts
    "PartCounter.add/offsets": (lambda: PartCounter().add(SYMBOLS, np.array([0, 2, 1, 3]), np.zeros(3, I32), 1),
                                ValueError),
    "PartCounter.add/document past n_docs": (lambda: PartCounter().add(SYMBOLS, BOUNDS, np.array([1], I32), 1),
                                             ValueError),
    "PartCounter.add/negative n_docs": (lambda: PartCounter().add(SYMBOLS, BOUNDS, np.zeros(1, I32), -1),
                                        ValueError),
    "PartCounter.add/huge n_docs": (lambda: PartCounter().add(SYMBOLS, BOUNDS, np.zeros(1, I32), 2**31),
                                    ValueError),
    "PartCounter.add/weights": (lambda: PartCounter().add(SYMBOLS, BOUNDS, np.zeros(1, I32), 1,
                                                         np.zeros(1, I64), np.array([0, 1])), ValueError),
    "PartCounter.add/wrong dtype": (lambda: PartCounter().add(SYMBOLS.astype(I64), BOUNDS, np.zeros(1, I32), 1),
                                    ValueError),
    "PartCounter.add/None": (lambda: PartCounter().add(SYMBOLS, None, np.zeros(1, I32), 1), TypeError),
    "PartCounter.add_text/chars not from 0": (
        lambda: PartCounter().add_text(b"abab", np.array([1, 4]), NO_CLASSES, WHOLE_DOCUMENTS, AB_TABLE), ValueError),
    "PartCounter.add_text/chars not ascending": (
        lambda: PartCounter().add_text(b"abab", np.array([0, 3, 1, 4]), NO_CLASSES, WHOLE_DOCUMENTS, AB_TABLE),
        ValueError),
    "PartCounter.add_text/chars past the end": (
        lambda: PartCounter().add_text(b"abab", np.array([0, 9]), NO_CLASSES, WHOLE_DOCUMENTS, AB_TABLE), ValueError),
    "PartCounter.add_text/empty chars": (
        lambda: PartCounter().add_text(b"ab", np.zeros(0, I64), NO_CLASSES, WHOLE_DOCUMENTS, AB_TABLE), ValueError),
    "PartCounter.add_text/bad UTF-8": (
        lambda: PartCounter().add_text(b"a\xff", np.array([0, 2]), NO_CLASSES, WHOLE_DOCUMENTS, AB_TABLE), ValueError),
    "PartCounter.add_text/bad pattern": (
        lambda: PartCounter().add_text(b"ab", np.array([0, 2]), NO_CLASSES, 99, AB_TABLE), ValueError),
    "PartCounter.add_text/None table": (
        lambda: PartCounter().add_text(b"ab", np.array([0, 2]), NO_CLASSES, WHOLE_DOCUMENTS, None), TypeError),
    "PartCounter.add_values/offsets": (
        lambda: PartCounter().add_values(np.array([5, 6], I64), np.array([0, 3]), np.array([0, 1], I32), 5),
        ValueError),
    "PartCounter.add_values/None": (
        lambda: PartCounter().add_values(None, np.array([0]), np.array([0], I32), 0), TypeError),
    "PartCounter.absorb/itself": (lambda: (lambda c: c.absorb(c))(PartCounter()), ValueError),
    "PartCounter.absorb/None": (lambda: PartCounter().absorb(None), TypeError),
    "PartCounter.export/released": (lambda: (lambda c: (c.export(True), c.export()))(PartCounter()), ValueError),
    # _fit
    "PairMerger/negative id": (lambda: PairMerger(np.array([0, -1], I32), np.array([0, 2]), np.zeros(1, I32), 1, 2),
                               ValueError),
    "PairMerger/id past next_token": (
        lambda: PairMerger(np.array([0, 2], I32), np.array([0, 2]), np.zeros(1, I32), 1, 2), ValueError),
    "PairMerger/offsets past the end": (lambda: PairMerger(SYMBOLS, np.array([0, 4]), np.zeros(1, I32), 1, 2),
                                        ValueError),
    "PairMerger/negative next_token": (lambda: PairMerger(SYMBOLS, BOUNDS, np.zeros(1, I32), 1, -2), ValueError),
    "PairMerger/empty doc_of_part": (lambda: PairMerger(SYMBOLS, BOUNDS, np.zeros(0, I32), 1, 2), ValueError),
    "PairMerger/counted part in no document": (
        lambda: PairMerger(SYMBOLS, BOUNDS, np.zeros(0, I32), 1, 2, False, np.ones(1, I64), np.array([0, 0])),
        ValueError),
    "PairMerger.use_threads/0": (lambda: _merger().use_threads(0), ValueError),
    "PairMerger.use_threads/huge": (lambda: _merger().use_threads(INT32_MAX), ValueError),
    "PairMerger.use_threads/past the limit": (lambda: _merger().use_threads(MAX_THREADS + 1), ValueError),
    "PairMerger.use_threads/negative positions": (lambda: _merger().use_threads(2, -1), ValueError),
    "PairMerger.step/0": (lambda: _merger().step(0), ValueError),
    "PairMerger.step/huge": (lambda: _merger().step(INT32_MAX), ValueError),
    "PairMerger.documents_of/lengths": (
        lambda: _merger().documents_of(np.array([0], I32), np.array([1, 1], I32)), ValueError),
    "PairMerger.documents_of/None": (lambda: _merger().documents_of(None, np.array([1], I32)), TypeError),
    "PairMerger.apply_merges/unknown id": (
        lambda: _merger().apply_merges(np.array([0], I32), np.array([2], I32)), ValueError),
    "PairMerger.apply_merges/negative id": (
        lambda: _merger().apply_merges(np.array([-1], I32), np.array([0], I32)), ValueError),
    "PairMerger.apply_merges/lengths": (
        lambda: _merger().apply_merges(np.array([0, 1], I32), np.array([1], I32)), ValueError),
    "PairMerger.apply_merges/unique pieces": (
        lambda: PairMerger(SYMBOLS, BOUNDS, np.zeros(1, I32), 1, 2, True).apply_merges(
            np.array([0], I32), np.array([1], I32)), ValueError),
    # _unigram
    "UnigramLattice/offsets not ascending": (lambda: _unigram(offsets=np.array([0, 2, 1], I64)), ValueError),
    "UnigramLattice/empty piece": (lambda: _unigram(offsets=np.array([0, 0, 2], I64)), ValueError),
    "UnigramLattice/offsets past the end": (lambda: _unigram(offsets=np.array([0, 1, 5], I64)), ValueError),
    "UnigramLattice/lengths": (lambda: _unigram(ids=np.array([3], I32)), ValueError),
    "UnigramLattice/negative id": (lambda: _unigram(ids=np.array([3, -2], I32)), ValueError),
    "UnigramLattice/id at int32 max": (lambda: _unigram(ids=np.array([3, INT32_MAX], I32)), ValueError),
    "UnigramLattice/unk_id at int32 max": (lambda: _unigram(unk_id=INT32_MAX), ValueError),
    "UnigramLattice/negative unk_id": (lambda: _unigram(unk_id=-1), ValueError),
    "UnigramLattice/nan score": (lambda: _unigram(scores=np.array([np.nan, -1.0], np.float32)), ValueError),
    "UnigramLattice/byte_fallback short": (lambda: _unigram(byte_fallback=np.zeros(3, I32)), ValueError),
    "UnigramLattice/byte_fallback at int32 max": (
        lambda: _unigram(byte_fallback=np.full(256, INT32_MAX, I32)), ValueError),
    "UnigramLattice/wrong dtype": (lambda: _unigram(scores=np.array(["a", "b"])), ValueError),
    "UnigramLattice.encode/None": (lambda: _unigram().encode(None), TypeError),
    "UnigramLattice.encode/wrong dtype": (lambda: _unigram().encode(np.array([97], I32)), ValueError),
    "UnigramLattice.encode_words/None": (lambda: _unigram().encode_words(None, np.array([0], I64)), TypeError),
    "UnigramLattice.encode_words/bounds past the data": (
        lambda: _unigram().encode_words(np.frombuffer(b"ab", U8), np.array([0, 3], I64)), ValueError),
    "UnigramLattice.encode_words/bounds not ascending": (
        lambda: _unigram().encode_words(np.frombuffer(b"ab", U8), np.array([0, 2, 1, 2], I64)), ValueError),
    # _paths
    "kbest_paths/vast top_n": (lambda: kbest_paths(TREE, np.ones(3), SYMBOLS, BOUNDS, VAST), MemoryError),
    "kbest_paths/huge top_n": (lambda: kbest_paths(TREE, np.ones(3), SYMBOLS, BOUNDS, HUGE), MemoryError),
    "kbest_paths/top_n 0": (lambda: kbest_paths(TREE, np.ones(3), SYMBOLS, BOUNDS, 0), ValueError),
    "kbest_paths/nan cost": (lambda: kbest_paths(TREE, np.array([1.0, np.nan, 1.0]), SYMBOLS, BOUNDS), ValueError),
    "kbest_paths/costs short": (lambda: kbest_paths(TREE, np.ones(2), SYMBOLS, BOUNDS), ValueError),
    "kbest_paths/id past base": (lambda: kbest_paths(TREE, np.ones(3), np.array([2], I32), np.array([0, 1])),
                                 ValueError),
    "kbest_paths/empty bounds": (lambda: kbest_paths(TREE, np.ones(3), SYMBOLS, np.zeros(0, I64)), ValueError),
    "longest_prefix/negative id": (lambda: longest_prefix(TREE, np.array([-1], I32), np.array([0, 1])), ValueError),
    "longest_prefix/bounds past the end": (lambda: longest_prefix(TREE, SYMBOLS, np.array([0, 9])), ValueError),
    "longest_token/bounds not ascending": (lambda: longest_token(TREE, SYMBOLS, np.array([0, 2, 1, 3])),
                                           ValueError),
    "longest_token/None": (lambda: longest_token(TREE, None, BOUNDS), TypeError),
    # _radix
    "RadixTree/negative n_base": (lambda: RadixTree(-1), ValueError),
    "RadixTree/offsets without symbols": (lambda: RadixTree(2, np.array([0, 2])), ValueError),
    "RadixTree/offsets past the end": (lambda: RadixTree(2, np.array([0, 5]), np.array([0, 1], I32)), ValueError),
    "RadixTree/negative token": (lambda: RadixTree(2, np.array([0, 2]), np.array([0, 1], I32), np.array([-3], I32)),
                                 ValueError),
    "RadixTree/tokens short": (lambda: RadixTree(2, np.array([0, 2]), np.array([0, 1], I32), np.zeros(0, I32)),
                               ValueError),
    "RadixTree.insert/empty key": (lambda: RadixTree(2).insert([], 3), ValueError),
    "RadixTree.insert/negative symbol": (lambda: RadixTree(2).insert([0, -1], 3), ValueError),
    "RadixTree.insert/negative token": (lambda: RadixTree(2).insert([0, 1], -3), ValueError),
    "RadixTree.get/None": (lambda: TREE.get(None), (TypeError, ValueError)),
    "RadixTree.prefix_matches/start past the end": (lambda: TREE.prefix_matches(SYMBOLS, 4), IndexError),
    "RadixTree.prefix_matches/negative start": (lambda: TREE.prefix_matches(SYMBOLS, -1), IndexError),
    # _sampling
    "SegmentLattice/id past base": (lambda: SegmentLattice(TREE, np.array([3], I32), np.array([0, 1])), ValueError),
    "SegmentLattice/bounds not from 0": (lambda: SegmentLattice(TREE, SYMBOLS, np.array([1, 3])), ValueError),
    "SegmentLattice.backward/scores short": (lambda: _segments().backward(np.zeros(1)), ValueError),
    "SegmentLattice.backward/nan": (lambda: _segments().backward(np.full(_segments().n_edges, np.nan)), ValueError),
    "SegmentLattice.sample/uniforms narrow": (
        lambda: _segments().sample(np.zeros(_segments().n_edges), np.zeros((1, 1))), ValueError),
    "SegmentLattice.sample/uniforms outside [0, 1)": (
        lambda: _segments().sample(np.zeros(_segments().n_edges), np.full((1, 3), 1.0)), ValueError),
    "SegmentLattice.sample/uniforms 1-d": (
        lambda: _segments().sample(np.zeros(_segments().n_edges), np.zeros(3)), ValueError),
    "SegmentLattice.locate/lengths": (lambda: _segments().locate(np.array([0]), np.array([1, 2])), ValueError),
    # _score
    "part_scores/id past weights": (lambda: part_scores(WEIGHTS, np.array([3], I32), np.array([0, 1])), ValueError),
    "part_scores/negative id": (lambda: part_scores(WEIGHTS, np.array([-1], I32), np.array([0, 1])), ValueError),
    "part_scores/offsets": (lambda: part_scores(WEIGHTS, SYMBOLS, np.array([0, 2])), ValueError),
    "score_tokens/offsets not from 0": (lambda: score_tokens(WEIGHTS, SYMBOLS, np.array([1, 3])), ValueError),
    "score_tokens/None": (lambda: score_tokens(WEIGHTS, None, BOUNDS), TypeError),
    # _tables
    "StringIds/offsets past the end": (lambda: StringIds(b"ab", np.array([0, 3], I64)), ValueError),
    "StringIds/offsets not ascending": (lambda: StringIds(b"ab", np.array([0, 2, 1, 2], I64)), ValueError),
    "StringIds/None": (lambda: StringIds(None, np.array([0], I64)), TypeError),
    "StringIds.find/None": (lambda: _strings().find(None), TypeError),
    "StringIds.find/never built": (lambda: StringIds.__new__(StringIds).find(b"a"), ValueError),
    "StringIds.pair_ids/never built": (lambda: StringIds.__new__(StringIds).pair_ids(
        b"a b", np.array([0], I64), np.array([1], I64), np.array([3], I64)), ValueError),
    "pair_ids_in/None": (lambda: pair_ids_in(None, []), TypeError),
    "pair_ids_in/tuple of rules": (lambda: pair_ids_in({}, ("a b",)), TypeError),
    "pair_ids_in/negative id": (lambda: pair_ids_in({"a": -1}, ["a a"]), ValueError),
    "pair_ids_in/id past int32": (lambda: pair_ids_in({"a": 2**40}, ["a a"]), ValueError),
    "pair_ids_in_json/None": (lambda: pair_ids_in_json(None, b"[]"), TypeError),
    "pair_ids_in_json/str rules": (lambda: pair_ids_in_json({}, '["a b"]'), TypeError),
    "merges_span/None": (lambda: merges_span(None), TypeError),
    "merges_span/str": (lambda: merges_span('{"model": {"merges": []}}'), TypeError),
    "StringIds.pair_ids/cut past the end": (
        lambda: _strings().pair_ids(b"a b", np.array([0], I64), np.array([1], I64), np.array([9], I64)), ValueError),
    "StringIds.pair_ids/negative start": (
        lambda: _strings().pair_ids(b"a b", np.array([-1], I64), np.array([1], I64), np.array([3], I64)), ValueError),
    "StringIds.pair_ids/lengths": (
        lambda: _strings().pair_ids(b"a b", np.array([0], I64), np.zeros(0, I64), np.array([3], I64)), ValueError),
    "length_prefixed/negative pos": (lambda: length_prefixed(np.zeros(8, U8), -1, 1, 10), ValueError),
    "length_prefixed/huge n": (lambda: length_prefixed(np.zeros(8, U8), 0, VAST, 10), ValueError),
    "length_prefixed/string past the end": (
        lambda: length_prefixed(np.array([200, 0, 0, 0, 0, 0, 0, 0], U8), 0, 1, 1000), ValueError),
    # _textsplit
    "TextSplitter/empty table": (lambda: TextSplitter(np.zeros(0, I32), _classes(), 5), ValueError),
    "TextSplitter/bad pattern": (lambda: TextSplitter(AB_TABLE, _classes(), 63), ValueError),  # 6..63: no id
    "TextSplitter/classes short": (lambda: TextSplitter(AB_TABLE, NO_CLASSES, 5), ValueError),
    "TextSplitter/table of floats": (lambda: TextSplitter(np.array([0.5]), _classes(), 5), TypeError),
    "TextSplitter.split/no list": (lambda: _splitter().split("ab"), TypeError),
    # _pretokenize
    "or_classes/stop past the end": (
        lambda: or_classes(np.zeros(4, np.uint16), np.array([1], np.uint32), 0, 2, 1), ValueError),
    "or_classes/code point past the table": (
        lambda: or_classes(np.zeros(4, np.uint16), np.array([9], np.uint32), 0, 1, 1), ValueError),
    "or_classes/negative start": (
        lambda: or_classes(np.zeros(4, np.uint16), np.array([1], np.uint32), -1, 1, 1), ValueError),
    "split_text/bad UTF-8": (lambda: split_text(np.frombuffer(b"\xc3", U8), _classes(), 5), ValueError),
    "split_text/bad pattern": (lambda: split_text(np.frombuffer(b"ab", U8), _classes(), 0), ValueError),
    "split_text/None": (lambda: split_text(None, _classes(), 5), TypeError),
    "split_ranges/ranges past the end": (
        lambda: split_ranges(np.frombuffer(b"ab", U8), np.array([0], I64), np.array([5], I64), _classes(), 5),
        ValueError),
    "split_ranges/ranges not ascending": (
        lambda: split_ranges(np.frombuffer(b"abcd", U8), np.array([2, 0], I64), np.array([4, 2], I64), _classes(), 5),
        ValueError),
    "split_ranges/inside a character": (
        lambda: split_ranges(np.frombuffer("é".encode(), U8), np.array([1], I64), np.array([2], I64), _classes(), 5),
        ValueError),
    "split_ranges/lengths": (
        lambda: split_ranges(np.frombuffer(b"ab", U8), np.array([0], I64), np.zeros(0, I64), _classes(), 5),
        ValueError),
    "find_pieces/bad UTF-8": (lambda: find_pieces(np.frombuffer(b"\xc3", U8), _compiled()), ValueError),
    "find_pieces/a preset's id": (lambda: find_pieces(np.frombuffer(b"ab", U8), 5), ValueError),
    "find_pieces/no such id": (lambda: find_pieces(np.frombuffer(b"ab", U8), INT32_MAX), ValueError),
    "find_pieces/None": (lambda: find_pieces(None, _compiled()), TypeError),
    # _regex (more in test_regex_vm.py)
    "register_program/jump outside": (lambda: register_program(
        np.array([[6, 9, 0, 0]], I32), np.zeros(0x1100, np.uint16), np.zeros(256, U8), np.zeros(256, np.uint64),
        np.zeros(0, np.uint64), -1, -1, True), ValueError),
    "register_program/blocks past the table": (lambda: register_program(
        np.array([[0, 0, 0, 0]], I32), np.full(0x1100, 5, np.uint16), np.zeros(256, U8),
        np.zeros(256, np.uint64), np.zeros(0, np.uint64), -1, -1, True), ValueError),
    "register_program/None": (lambda: register_program(None, None, None, None, None, -1, -1, True), TypeError),
    "n_free_slots/an argument": (lambda: n_free_slots(1), TypeError),
    # _spm_pipeline
    "SpmPipeline/model": (lambda: _pipeline(model=TREE), TypeError),
    "SpmPipeline/None normalizer": (lambda: _pipeline(normalizer=None), TypeError),
    "SpmPipeline/trigger offsets past the end": (
        lambda: _pipeline(trigger_blob=b"ab", trigger_offsets=np.array([0, 3], I64)), ValueError),
    "SpmPipeline/empty trigger": (
        lambda: _pipeline(trigger_blob=b"ab", trigger_offsets=np.array([0, 0, 2], I64)), ValueError),
    "SpmPipeline/trigger id of a unigram": (
        lambda: _pipeline(trigger_blob=b"ab", trigger_offsets=np.array([0, 2], I64), trigger_ids=np.array([1], I32)),
        ValueError),
    "SpmPipeline/trigger ids short": (
        lambda: _pipeline(trigger_blob=b"ab", trigger_offsets=np.array([0, 2], I64), trigger_ids=np.zeros(0, I32)),
        ValueError),
    "SpmPipeline/negative trigger id": (
        lambda: _pipeline(trigger_blob=b"ab", trigger_offsets=np.array([0, 2], I64), trigger_ids=np.array([-3], I32)),
        ValueError),
    "SpmPipeline.encode_batch/None": (lambda: _pipeline().encode_batch(None), TypeError),
    "SpmPipeline.encode_batch/no sequence": (lambda: _pipeline().encode_batch(5), TypeError),
    "SpmPipeline.encode_flat/None": (lambda: _pipeline().encode_flat(None), TypeError),
    "SpmPipeline.encode_flat/no sequence": (lambda: _pipeline().encode_flat(5), TypeError),
    "SpmPipeline.encode_flat/not a str": (lambda: _pipeline().encode_flat(["a", b"b"]), TypeError),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_arguments_raise_a_clear_error(name):
    call, error = HOSTILE[name]
    with pytest.raises(error):
        call()


def test_no_kernel_allocates_with_vector_assign_of_a_count():
    """``vector.assign(n, value)`` is not ``except +`` in Cython's ``libcpp/vector.pxd``: out of
    memory, its ``std::bad_alloc`` leaves through C frames and aborts the process. The kernels
    use ``clear()`` + ``resize(n, value)`` (MemoryError) instead. Once: ``_unigram``'s trie and
    ``PairMerger.use_threads``. (A test out of memory cannot pin these calls: their allocations
    are never the peak of their builds - see test_kernel_memory.py for the MemoryError cases.)"""
    import re
    from pathlib import Path

    import ubpe_native

    # x.assign(count, value): two plain arguments, neither a pointer nor an iterator range
    count_and_value = re.compile(r"\.assign\(\s*[\w.]+(\s*[-+*]\s*[\w.]+)*\s*,\s*[-\w.]+\s*\)")
    found = []
    for source in sorted(Path(ubpe_native.__file__).parent.glob("_*.p[yx][xd]")):
        for number, line in enumerate(source.read_text().splitlines(), 1):
            code = line.split("#")[0]
            if count_and_value.search(code):
                found.append(f"{source.name}:{number}: {line.strip()}")
    assert not found, found
