"""Every kernel module's ``def`` entries, found by inspection (issue 37): the modules of
``ubpe_native`` are listed by ``pkgutil`` and every public function, class and method of each
compiled one must have hostile calls in ``test_kernel_entries.HOSTILE`` or in ``HOSTILE`` here
(the modules that file did not list: ``_base64_lines``, ``_classic``, ``_pieces``, ``_hf_pretok``,
``_merge_core``, ``_merges``, ``_multipass``, ``_ranked``, ``_spm``, ``_wordpiece``). And every
kernel class with an ``__init__`` refuses a second one (``_checks.build_once``, as
``PairMerger`` did first): its tables are read without the GIL by other threads, which a
rebuild would pull from under them (a segfault)."""

from __future__ import annotations

import importlib
import importlib.machinery
import inspect
import pkgutil

import numpy as np
import pytest

import ubpe_native
from ubpe_native._base64_lines import first_repeat, parse_lines
from ubpe_native._classic import PairTable, encode_texts, encode_words
from ubpe_native._pieces import first_misspelled, flatten_pairs
from ubpe_native._fit import PairMerger
from ubpe_native._hf_pretok import GPT2_SPELLING, HFPreTokenizer
from ubpe_native._merge_core import ScratchPool
from ubpe_native._merges import TextIds, id_lists, pack_units
from ubpe_native._multipass import split_passes
from ubpe_native._radix import RadixTree
from ubpe_native._ranked import MergeTable, TextEncoder
from ubpe_native._textsplit import BREAK_SYMBOL, NO_PATTERN, TextSplitter
from ubpe_native._tables import vocab_span
from ubpe_native._vocab import vocab_from_json, vocab_ids
from ubpe_native._wordpiece import WordPieceKernel, class_table, utf8_pieces

import test_kernel_entries
import test_merges_kernel
import test_spm_kernels
from test_kernel_entries import AB_TABLE, I32, I64, TREE, U8, WEIGHTS, _classes
from test_wordpiece_kernel import GOOD as WORDPIECE

NOT_UTF8 = np.array([0xFF, 0x61], U8)
TEXT = np.frombuffer(b"ab ab", U8)


def _merges():
    return test_merges_kernel.merges()


def _ranked():
    return MergeTable(2, np.array([0, 2], I64), np.array([0, 1], I32), np.array([0], I64))


def _wordpiece():
    return WordPieceKernel(*WORDPIECE.values())


#: unk, max_chars, empty_initial, classes of a WordPieceKernel.from_vocabulary call
_WORDPIECE_OPTIONS = (0, -1, -1, np.zeros(0x110000, np.uint8))


def _byte_table():
    """The 256 byte values and one merge, b"ab"."""
    return MergeTable(256, np.array([0, 2], I64), np.array([97, 98], I32), np.array([0], I64))


def _ab_splitter():
    """"a" and "b" with "b" a break symbol, no pattern."""
    return TextSplitter(AB_TABLE, np.zeros(0, np.uint16), NO_PATTERN, np.array([0, BREAK_SYMBOL], U8))


def _pretokenizer():
    return HFPreTokenizer([[1, 1, 0, 0]], None, GPT2_SPELLING)



NO_RULES = dict(left=np.zeros(0, np.int32), right=np.zeros(0, np.int32), result=np.zeros(0, np.int32),
                rank=np.zeros(0, np.int64))


def _by_text(blob=b"xabab", offsets=(0, 1, 2, 3, 5, 5), types=(2, 1, 1, 5, 1), scores=(0, -1, -1, -2, -3),
             **changes):
    """`SpmBPE` given the pieces ``x a b ab`` (unused) and an empty one, to merge by their
    texts (with the rules of `test_spm_kernels._bpe` unless ``changes`` drop them)."""
    from array import array

    pieces = (blob, array("q", offsets) if isinstance(offsets, tuple) else offsets,
              array("i", types) if isinstance(types, tuple) else types,
              array("f", scores) if isinstance(scores, tuple) else scores)
    pieces = changes.pop("pieces", pieces)
    flags = {name: changes.pop(name) for name in ("split_words", "hf_unknowns") if name in changes}
    return test_spm_kernels.SpmBPE(*test_spm_kernels._bpe_arguments(**changes).values(), pieces=pieces, **flags)


HOSTILE = {
    "parse_lines/None": (lambda: parse_lines(None, True), TypeError),
    "parse_lines/int32 data": (lambda: parse_lines(np.zeros(3, I32), True), ValueError),
    "first_repeat/offsets past the end": (lambda: first_repeat(TEXT, np.array([0, 9], I64)), ValueError),
    "first_repeat/offsets descending": (lambda: first_repeat(TEXT, np.array([0, 3, 1], I64)), ValueError),
    "PairTable/lengths differ": (lambda: PairTable([0], [1, 2], [3]), ValueError),
    "PairTable/negative component": (lambda: PairTable([0, -1], [1, 2], [3, 4]), ValueError),
    "encode_words/None": (lambda: encode_words(None, WEIGHTS, np.array([0, 1], I32), np.array([0, 2], I64)),
                          TypeError),
    "encode_words/offsets past the end": (
        lambda: encode_words(PairTable([0], [1], [2]), WEIGHTS, np.array([0, 1], I32), np.array([0, 5], I64)),
        ValueError),
    "first_misspelled/negative n_base": (
        lambda: first_misspelled(-1, np.zeros(0, I32), np.zeros(1, I64), np.zeros(0, I32)), ValueError),
    "first_misspelled/offsets past the symbols": (
        lambda: first_misspelled(2, np.array([0, 1], I32), np.array([0, 9], I64), np.array([0, 1], I32)), ValueError),
    "first_misspelled/no offsets": (
        lambda: first_misspelled(2, np.zeros(0, I32), np.zeros(0, I64), np.zeros(0, I32)), ValueError),
    "first_misspelled/one id per merge": (
        lambda: first_misspelled(2, np.array([0], I32), np.array([0, 2], I64), np.array([0, 1], I32)), ValueError),
    "first_misspelled/floats": (
        lambda: first_misspelled(2, np.array([0.5, 1]), np.array([0, 2], I64), np.array([0, 1], I32)), TypeError),
    "flatten_pairs/negative n_base": (lambda: flatten_pairs(-1, np.zeros(0, I32)), ValueError),
    "flatten_pairs/an odd number of ids": (lambda: flatten_pairs(2, np.array([0, 1, 0], I32)), ValueError),
    "flatten_pairs/floats": (lambda: flatten_pairs(2, np.array([0.5, 1.0])), TypeError),
    "flatten_pairs/ids past int32": (lambda: flatten_pairs(2, np.array([0, 2**40])), ValueError),
    "flatten_pairs/two dimensions": (lambda: flatten_pairs(2, np.zeros((2, 2), I32)), ValueError),
    "encode_texts/None": (lambda: encode_texts(None, WEIGHTS, _ab_splitter(), ["ab"]), TypeError),
    "encode_texts/no splitter": (lambda: encode_texts(PairTable([0], [1], [2]), WEIGHTS, None, ["ab"]), TypeError),
    "encode_texts/weights short": (
        lambda: encode_texts(PairTable([0], [1], [2]), np.zeros(1), _ab_splitter(), ["ab"]), ValueError),
    "encode_texts/not a list": (lambda: encode_texts(PairTable([0], [1], [2]), WEIGHTS, _ab_splitter(), "ab"),
                                TypeError),
    "TextSplitter/kinds short": (
        lambda: TextSplitter(AB_TABLE, np.zeros(0, np.uint16), NO_PATTERN, np.zeros(1, U8)), ValueError),
    "TextSplitter/kinds unknown bit": (
        lambda: TextSplitter(AB_TABLE, np.zeros(0, np.uint16), NO_PATTERN, np.array([0, 8], U8)), ValueError),
    "TextEncoder/None": (lambda: TextEncoder(None, _classes(), 1), TypeError),
    "TextEncoder/bad pattern": (lambda: TextEncoder(_byte_table(), _classes(), 63), ValueError),
    "TextEncoder/ids short": (lambda: TextEncoder(_byte_table(), _classes(), 1, np.arange(3)), ValueError),
    "TextEncoder/negative id": (lambda: TextEncoder(_byte_table(), _classes(), 1, -np.arange(257)), ValueError),
    "TextEncoder.__call__/bytes": (lambda: TextEncoder(_byte_table(), _classes(), 1)(b"ab"), TypeError),
    "TextEncoder/no byte values": (lambda: TextEncoder(_ranked(), _classes(), 1), ValueError),
    "HFPreTokenizer/unknown step": (lambda: HFPreTokenizer([[7, 0, 0, 0]], _classes(), GPT2_SPELLING), ValueError),
    "HFPreTokenizer/no program": (lambda: HFPreTokenizer([[0, 63, 1, 0]], _classes(), GPT2_SPELLING), ValueError),
    "HFPreTokenizer.words/None": (lambda: _pretokenizer().words(None), TypeError),
    "HFPreTokenizer.words/not UTF-8": (lambda: _pretokenizer().words(NOT_UTF8), ValueError),
    "ScratchPool/not a scratch": (lambda: ScratchPool(int), TypeError),
    "PairMerges/ranks short": (lambda: test_merges_kernel.merges(rank=np.array([0], I64)), ValueError),
    "PairMerges/result past n_ids": (lambda: test_merges_kernel.merges(result=np.array([256, 900], I32)), ValueError),
    "PairMerges.encode/bounds past the end": (lambda: _merges().encode(TEXT, np.array([0, 99], I64)), ValueError),
    "PairMerges.encode/None": (lambda: _merges().encode(None, np.array([0], I64)), TypeError),
    "PairMerges.encode_texts/lengths": (
        lambda: _merges().encode_texts(TEXT, [99], _classes(), 5), ValueError),
    "PairMerges.encode_texts/no pattern": (lambda: _merges().encode_texts(TEXT, [5], _classes(), 63), ValueError),
    "PairMerges.encode_one_text/bytes": (lambda: _merges().encode_one_text(b"ab", _classes(), 5), TypeError),
    "PairMerges.encode_one_text/no pattern": (lambda: _merges().encode_one_text("ab", _classes(), 63), ValueError),
    "PairMerges.encode_one_text/flagged short": (
        lambda: _merges().encode_one_text("ab", _classes(), 5, flagged=np.zeros(3, U8)), ValueError),
    "PairMerges.encode_one_text/ASCII flagged": (
        lambda: _merges().encode_one_text("ab", _classes(), 5, flagged=np.ones(0x110000, U8)), ValueError),
    "PairMerges.encode_one_text/surrogate": (lambda: _merges().encode_one_text("a\ud800", _classes(), 5),
                                             UnicodeEncodeError),
    "PairMerges.text_ids/no pattern": (lambda: _merges().text_ids(_classes(), 63), ValueError),
    "PairMerges.text_ids/flagged short": (lambda: _merges().text_ids(_classes(), 5, flagged=np.zeros(3, U8)),
                                          ValueError),
    "PairMerges.text_ids/ASCII flagged": (
        lambda: _merges().text_ids(_classes(), 5, flagged=np.ones(0x110000, U8)), ValueError),
    "PairMerges.text_ids/bytes": (lambda: _merges().text_ids(_classes(), 5)(b"ab"), TypeError),
    "PairMerges.text_ids/surrogate": (lambda: _merges().text_ids(_classes(), 5)("a\ud800"), UnicodeEncodeError),
    "TextIds/not made by text_ids": (lambda: TextIds()("ab"), ValueError),
    "id_lists/None": (lambda: id_lists(None, None), TypeError),
    "id_lists/offsets past the end": (lambda: id_lists(np.array([1, 2], I32), np.array([0, 5], I64)), ValueError),
    "pack_units/None": (lambda: pack_units(None), TypeError),
    "pack_units/too long": (lambda: pack_units([b"x" * 100]), ValueError),
    "split_passes/no program": (lambda: split_passes(TEXT, [5], np.array([63], I32)), ValueError),
    "split_passes/not UTF-8": (lambda: split_passes(NOT_UTF8, [1], np.zeros(0, I32)), ValueError),
    "split_passes/lengths": (lambda: split_passes(TEXT, [-1, 6], np.zeros(0, I32)), ValueError),
    "MergeTable/no base": (lambda: MergeTable(0, np.array([0], I64), np.zeros(0, I32), np.zeros(0, I64)), ValueError),
    "MergeTable/offsets short": (
        lambda: MergeTable(2, np.array([0], I64), np.array([0, 1], I32), np.array([0], I64)), ValueError),
    "MergeTable.encode/id past base": (
        lambda: _ranked().encode(np.array([0, 7], I32), np.array([0, 2], I64), False, 0.0, 0), ValueError),
    "MergeTable.encode/bounds": (
        lambda: _ranked().encode(np.array([0, 1], I32), np.array([1, 2], I64), False, 0.0, 0), ValueError),
    "MergeTable.encode_text/not bytes": (lambda: _ranked().encode_text(TEXT, _classes(), 5), ValueError),
    "MergeTable.encode_texts/None": (lambda: _ranked().encode_texts(None, [1], _classes(), 5), TypeError),
    "MergeTable.set_cache_limit/negative": (lambda: _ranked().set_cache_limit(-1), OverflowError),
    "MergeTable.find/None": (lambda: _ranked().find(None), TypeError),
    "SpmBPE/ranks short": (lambda: test_spm_kernels._bpe(rank=np.array([0], I64)), ValueError),
    "SpmBPE/rules and pieces": (lambda: _by_text(), ValueError),
    "SpmBPE/pieces with hf_unknowns": (lambda: _by_text(hf_unknowns=True, **NO_RULES), ValueError),
    "SpmBPE/pieces not four": (lambda: _by_text(pieces=(b"ab",), **NO_RULES), ValueError),
    "SpmBPE/pieces None": (lambda: _by_text(pieces=(None, None, None, None), **NO_RULES), ValueError),
    "SpmBPE/pieces a list": (lambda: _by_text(pieces=[b"ab"], **NO_RULES), TypeError),
    "SpmBPE/pieces short": (lambda: _by_text(offsets=(0, 1, 2), **NO_RULES), ValueError),
    "SpmBPE/pieces' offsets past the end": (lambda: _by_text(offsets=(0, 1, 2, 3, 5, 9), **NO_RULES), ValueError),
    "SpmBPE/pieces' types short": (lambda: _by_text(types=(2, 1), **NO_RULES), ValueError),
    "SpmBPE/pieces' NaN score": (lambda: _by_text(scores=(0, 0, 0, float("nan"), 0), **NO_RULES), ValueError),
    "SpmBPE/pieces' float64 scores": (lambda: _by_text(scores=np.zeros(5), **NO_RULES), ValueError),
    "SpmBPE/a piece twice": (lambda: _by_text(blob=b"xaaaa", **NO_RULES), ValueError),
    "SpmBPE.encode/None": (lambda: test_spm_kernels._bpe().encode(None), TypeError),
    "SpmBPE.encode/int32 data": (lambda: test_spm_kernels._bpe().encode(np.zeros(3, I32)), ValueError),
    "SpmNormalizer/offsets": (lambda: test_spm_kernels._normalizer(offsets=np.array([1], I64)), ValueError),
    "SpmNormalizer.normalize/None": (lambda: test_spm_kernels._normalizer().normalize(None), TypeError),
    "SpmNormalizer.normalize/int32 data": (lambda: test_spm_kernels._normalizer().normalize(np.zeros(3, I32)),
                                           ValueError),
    "class_table/None": (lambda: class_table(None), TypeError),
    "class_table/a class past the last": (lambda: class_table([(4, [(0x20, 0x20)])]), ValueError),
    "class_table/a negative class": (lambda: class_table([(-1, [(0x20, 0x20)])]), ValueError),
    "class_table/a range backwards": (lambda: class_table([(1, [(0x21, 0x20)])]), ValueError),
    "class_table/a range past the code points": (lambda: class_table([(1, [(0x20, 0x110000)])]), ValueError),
    "class_table/a negative code point": (lambda: class_table([(1, [(-1, 0x20)])]), ValueError),
    "class_table/a layer of three": (lambda: class_table([(1, [(0, 1)], 2)]), ValueError),
    "class_table/a range of one end": (lambda: class_table([(1, [(0x20,)])]), ValueError),
    "WordPieceKernel/ids short": (lambda: WordPieceKernel(*{**WORDPIECE, "initial_ids": []}.values()), ValueError),
    "WordPieceKernel.from_vocabulary/ids short": (
        lambda: WordPieceKernel.from_vocabulary(b"a\0b", [1], b"", b"##", *_WORDPIECE_OPTIONS), ValueError),
    "WordPieceKernel.from_vocabulary/ids long": (
        lambda: WordPieceKernel.from_vocabulary(b"a", [1, 2], b"", b"##", *_WORDPIECE_OPTIONS), ValueError),
    "WordPieceKernel.from_vocabulary/no ids, a piece": (
        lambda: WordPieceKernel.from_vocabulary(b"a", [], b"", b"##", *_WORDPIECE_OPTIONS), ValueError),
    "WordPieceKernel.from_vocabulary/negative id": (
        lambda: WordPieceKernel.from_vocabulary(b"a", [-1], b"", b"##", *_WORDPIECE_OPTIONS), ValueError),
    "WordPieceKernel.from_vocabulary/not UTF-8": (
        lambda: WordPieceKernel.from_vocabulary(b"\xc3\0\xa9", [1, 2], b"", b"##", *_WORDPIECE_OPTIONS), ValueError),
    "WordPieceKernel.from_vocabulary/prefix not UTF-8": (
        lambda: WordPieceKernel.from_vocabulary(b"a", [1], b"\xff", b"##", *_WORDPIECE_OPTIONS), ValueError),
    "WordPieceKernel.from_vocabulary/prefix with NUL": (
        lambda: WordPieceKernel.from_vocabulary(b"a", [1], b"", b"#\0", *_WORDPIECE_OPTIONS), ValueError),
    "WordPieceKernel.from_vocabulary/pieces str": (
        lambda: WordPieceKernel.from_vocabulary("a", [1], b"", b"##", *_WORDPIECE_OPTIONS), TypeError),
    "WordPieceKernel.from_vocabulary/pieces None": (
        lambda: WordPieceKernel.from_vocabulary(None, [1], b"", b"##", *_WORDPIECE_OPTIONS), TypeError),
    "WordPieceKernel.from_vocabulary/classes short": (
        lambda: WordPieceKernel.from_vocabulary(b"a", [1], b"", b"##", 0, -1, -1, np.zeros(3, np.uint8)), ValueError),
    "utf8_pieces/None": (lambda: utf8_pieces(None), TypeError),
    "utf8_pieces/a list": (lambda: utf8_pieces([("a", 0)]), TypeError),
    "utf8_pieces/a str": (lambda: utf8_pieces("a"), TypeError),
    "vocab_from_json/None": (lambda: vocab_from_json(None), TypeError),
    "vocab_from_json/a str": (lambda: vocab_from_json('{"a": 0}'), TypeError),
    "vocab_from_json/a dict": (lambda: vocab_from_json({"a": 0}), TypeError),
    "vocab_span/None": (lambda: vocab_span(None), TypeError),
    "vocab_span/a str": (lambda: vocab_span('{"model": {"vocab": {}}}'), TypeError),
    "vocab_ids/None": (lambda: vocab_ids(None, 5), TypeError),
    "vocab_ids/a list": (lambda: vocab_ids([("a", 0)], 5), TypeError),
    "vocab_ids/negative largest": (lambda: vocab_ids({"a": 0}, -1), ValueError),
    "vocab_ids/largest past int64": (lambda: vocab_ids({"a": 0}, 2**70), OverflowError),
    "WordPieceKernel.encode_texts/never built": (
        lambda: WordPieceKernel.__new__(WordPieceKernel).encode_texts(TEXT, [5]), ValueError),
    "WordPieceKernel.text_ids/never built": (lambda: WordPieceKernel.__new__(WordPieceKernel).text_ids(TEXT), ValueError),
    "WordPieceKernel.encode_words/never built": (
        lambda: WordPieceKernel.__new__(WordPieceKernel).encode_words(["a"]), ValueError),
    "WordPieceKernel.encode_texts/lengths": (lambda: _wordpiece().encode_texts(TEXT, [99]), ValueError),
    "WordPieceKernel.encode_texts/not UTF-8": (lambda: _wordpiece().encode_texts(NOT_UTF8, [2]), ValueError),
    "WordPieceKernel.encode_words/None": (lambda: _wordpiece().encode_words(None), TypeError),
    "WordPieceKernel.text_ids/None": (lambda: _wordpiece().text_ids(None), TypeError),
    "WordPieceKernel.text_ids/not UTF-8": (lambda: _wordpiece().text_ids(NOT_UTF8), ValueError),
}
# entries with no argument to be hostile about (or only flags), checked by other tests
HARMLESS = {"Lattice.clear_cache", "PairMerger.merges", "PairMerger.current_tokens", "PairMerger.pair_counts",
            "SegmentLattice.edges", "SegmentLattice.count_parts", "RadixTree.__contains__", "RadixTree.__len__",
            "PairTable.__len__", "PairTable.stops", "ScratchPool.__len__", "ScratchPool.clear",
            "ScratchPool.cached_words", "PairMerges.clear_cache", "PairMerges.cache_size", "MergeTable.clear_cache",
            "MergeTable.cache_size", "MergeTable.pair_count"}


@pytest.mark.parametrize("name", HOSTILE)
def test_hostile_arguments_raise_a_clear_error(name):
    call, error = HOSTILE[name]
    with pytest.raises(error):
        call()


def _kernel_modules() -> list:
    """Every compiled module of ubpe_native (the .py helpers left out)."""
    found = []
    for info in pkgutil.iter_modules(ubpe_native.__path__):
        module = importlib.import_module(f"ubpe_native.{info.name}")
        if str(module.__file__).endswith(tuple(importlib.machinery.EXTENSION_SUFFIXES)):
            found.append(module)
    return found


def _entries(module) -> list[str]:
    """The public functions, classes and methods (with ``__contains__`` and ``__len__``) that
    ``module`` defines."""
    found = []
    for name, value in vars(module).items():
        if name.startswith("_") or getattr(value, "__module__", module.__name__) != module.__name__:
            continue
        if inspect.isclass(value) and not issubclass(value, BaseException):
            if value.__init__ is not object.__init__:
                found.append(name)
            for method, member in vars(value).items():
                if (callable(member) or isinstance(member, classmethod)) \
                        and (not method.startswith("_") or method in ("__contains__", "__len__")):
                    found.append(f"{name}.{method}")
        elif callable(value):
            found.append(name)
    return found


def test_every_entry_is_called():
    """Each def and public method of every kernel module appears in a HOSTILE table (a new
    entry, or a new module, needs its hostile calls there)."""
    modules = _kernel_modules()
    assert len(modules) >= 24  # what the package held when this test was written
    called = {name.split("/")[0] for name in (*test_kernel_entries.HOSTILE, *HOSTILE)} | HARMLESS
    missing = [f"{module.__name__}: {entry}" for module in modules for entry in _entries(module)
               if entry not in called]
    assert not missing, missing


class _Arguments:
    """Stands in for a kernel class inside a test's builder: keeps what it was called with."""

    def __init__(self, *args, **kwargs):
        self.args, self.kwargs = args, kwargs


def _built_by(monkeypatch, module, name, builder):
    """``(cls, args, kwargs)`` of the kernel object that ``builder()`` makes with ``module.name``."""
    real = getattr(module, name)
    monkeypatch.setattr(module, name, _Arguments)
    arguments = builder()
    monkeypatch.setattr(module, name, real)
    return real, arguments.args, arguments.kwargs


def _constructors(monkeypatch) -> dict:
    import ubpe_native._spm_pipeline as spm_pipeline
    from ubpe_native._lattice_cache import Lattice
    from ubpe_native._sampling import SegmentLattice
    from ubpe_native._tables import StringIds
    from ubpe_native._textsplit import TextSplitter

    return {
        "PairTable": (PairTable, (np.array([0], I32), np.array([1], I32), np.array([2], I32)), {}),
        "PairMerger": (PairMerger, (np.array([0, 1, 0, 1], I32), np.array([0, 4], I64), np.array([0], I32), 1, 2), {}),
        "HFPreTokenizer": (HFPreTokenizer, ([[1, 1, 0, 0]], None, GPT2_SPELLING), {}),
        "Lattice": (Lattice, (TREE, WEIGHTS), {}),
        "ScratchPool": (ScratchPool, (), {}),
        "PairMerges": _built_by(monkeypatch, test_merges_kernel, "PairMerges", test_merges_kernel.merges),
        "RadixTree": (RadixTree, (2, np.array([0, 2]), np.array([0, 1], I32)), {}),
        "MergeTable": (MergeTable, (2, np.array([0, 2], I64), np.array([0, 1], I32), np.array([0], I64)), {}),
        "SegmentLattice": (SegmentLattice, (TREE, np.array([0, 1, 0], I32), np.array([0, 3], I64)), {}),
        "SpmBPE": _built_by(monkeypatch, test_spm_kernels, "SpmBPE", test_spm_kernels._bpe),
        "SpmNormalizer": _built_by(monkeypatch, test_spm_kernels, "SpmNormalizer", test_spm_kernels._normalizer),
        "SpmPipeline": _built_by(monkeypatch, spm_pipeline, "SpmPipeline", test_kernel_entries._pipeline),
        "StringIds": (StringIds, (b"abcd", np.array([0, 1, 2, 4], I64)), {}),
        "TextSplitter": (TextSplitter, (AB_TABLE, _classes(), 5), {}),
        "TextEncoder": (TextEncoder, (_byte_table(), _classes(), 1), {}),
        "UnigramLattice": _built_by(monkeypatch, test_kernel_entries, "UnigramLattice", test_kernel_entries._unigram),
        "WordPieceKernel": (WordPieceKernel, tuple(WORDPIECE.values()), {}),
    }


def test_every_kernel_object_is_built_once(monkeypatch):
    """A second ``__init__`` on a built object - the same arguments, so nothing else could
    refuse them - raises ValueError and leaves the object as it was."""
    constructors = _constructors(monkeypatch)
    classes = {name for module in _kernel_modules() for name in _entries(module)
               if "." not in name and inspect.isclass(getattr(module, name))}
    assert classes == set(constructors)  # a new kernel class needs its constructor here
    for name, (cls, args, kwargs) in constructors.items():
        built = cls(*args, **kwargs)
        with pytest.raises(ValueError, match=f"a {name} is built once"):
            built.__init__(*args, **kwargs)


def test_a_table_cannot_be_rebuilt_while_another_thread_encodes():
    """Once a segfault: ``MergeTable.__init__`` again while ``encode_text`` read the table
    without the GIL. The second ``__init__`` is refused, so every encode sees one table."""
    from concurrent.futures import ThreadPoolExecutor

    from ubpe.models.bytelevel import ByteLevelBPE
    from ubpe.text.patterns import code_point_classes

    tok = ByteLevelBPE().fit(["ab ab ab"] * 4, n_tokens=260, pattern="gpt2", quiet=True)
    table = tok._encoder._table
    data = ("ab " * 200_000).encode()
    want = table.encode_text(data, code_point_classes(), 1)
    with ThreadPoolExecutor(2) as pool:
        running = pool.submit(lambda: [table.encode_text(data, code_point_classes(), 1) for _ in range(3)])
        for _ in range(20):
            with pytest.raises(ValueError, match="built once"):
                table.__init__(256, np.array([0, 1], I64), np.array([97], I32), np.array([0], I64))
        assert all((got == want).all() for got in running.result())
