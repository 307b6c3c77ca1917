"""Kernels out of memory (issue 13, item 10): every kernel that grows a C++ container raises
MemoryError when it cannot, and leaves its objects usable.

Before, the growing helpers were ``noexcept``: on ``std::bad_alloc`` Cython printed "Exception
ignored in ..." and the kernel carried on with half-built state (a short or wrong result, a
cache lock never released), and ``vector.assign(n, value)`` (not declared ``except +``) would
abort the process. Each case runs in a subprocess whose address space is capped a little above
what it already uses, after its inputs exist, so only the kernel's own allocations can fail.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# ``limit(mb)`` caps the address space at what the process uses now plus ``mb`` MiB;
# ``unlimit()`` lifts the cap again (the hard limit stays unlimited).
PRELUDE = """
import resource
import numpy as np

def limit(mb):
    with open("/proc/self/status") as status:
        used = next(int(line.split()[1]) for line in status if line.startswith("VmSize:")) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (used + mb * 2**20, resource.RLIM_INFINITY))

def unlimit():
    resource.setrlimit(resource.RLIMIT_AS, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))

def expect_memory_error(call):
    try:
        result = call()
    except MemoryError as exc:
        unlimit()
        print("MemoryError:", exc)
    else:
        unlimit()
        print("no error:", type(result))
"""

# the doctest's table of _merges: units a -> 0, b -> 1; (0 1) -> 2, (2 2) -> 3
MERGES_TABLE = """
from ubpe_native._merges import PairMerges, pack_units
i32 = lambda *v: np.array(v, np.int32)
table = PairMerges(4, i32(0, 2), i32(1, 2), i32(2, 3), np.array([0, 1]), np.array([0], np.int64),
                   i32(), pack_units([b"a", b"b"]), i32(0, 1), np.full(256, -1, np.int32), False,
                   b"", np.array([0], np.int64), i32())
"""

# name -> (setup and calls, text the script must print after the MemoryError line)
CASES = {
    "ranked_encode": (
        """
from ubpe_native._ranked import MergeTable
table = MergeTable(2, np.array([0, 2], np.int64), np.array([0, 0], np.int32), np.array([0], np.int64))
word = np.zeros(4_000_000, np.int32)
bounds = np.array([0, len(word)], np.int64)
limit(100)
expect_memory_error(lambda: table.encode(word, bounds, False, 0.0, 0))
print("after:", table.encode(np.zeros(4, np.int32), np.array([0, 4], np.int64), False, 0.0, 0).tolist())
""",
        "after: [2, 2]",
    ),
    "ranked_table": (
        """
from ubpe_native._ranked import MergeTable
n = 4_000_000
offsets = np.arange(0, 2 * n + 1, 2, dtype=np.int64)
symbols = np.zeros(2 * n, np.int32)
symbols[1::2] = np.arange(n) % 2
priorities = np.arange(n, dtype=np.int64)
limit(100)
expect_memory_error(lambda: MergeTable(2, offsets, symbols, priorities))
""",
        "",
    ),
    "ranked_encode_text": (
        """
from ubpe.text.patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
from ubpe_native._ranked import MergeTable
table = MergeTable(256, np.array([0, 2], np.int64), np.array([97, 98], np.int32), np.array([0], np.int64))
classes = code_point_classes()
data = np.frombuffer(b" a" * 4_000_000, np.uint8)
limit(48)
expect_memory_error(lambda: table.encode_text(data, classes, NATIVE_PATTERNS[PATTERNS["gpt2"]]))
""",
        "",
    ),
    "merges_encode_texts": (  # the cache lock must be free afterwards: the last call would hang
        MERGES_TABLE + """
from ubpe.text.patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
classes = code_point_classes()
gpt2 = NATIVE_PATTERNS[PATTERNS["gpt2"]]
data = b"ab " * 4_000_000
limit(48)
expect_memory_error(lambda: table.encode_texts(data, [len(data)], classes, gpt2))
print("after:", table.encode_texts(b"ab ab", [2, 3], classes, gpt2)[0].tolist())
""",
        "after: [2, 2]",
    ),
    "ranked_encode_texts": (
        """
from ubpe.text.patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
from ubpe_native._ranked import MergeTable
table = MergeTable(256, np.array([0, 2], np.int64), np.array([97, 98], np.int32), np.array([0], np.int64))
classes = code_point_classes()
data = b" a" * 4_000_000
limit(48)
expect_memory_error(lambda: table.encode_texts(data, [len(data)], classes, NATIVE_PATTERNS[PATTERNS["gpt2"]]))
""",
        "",
    ),
    "split_text": (
        """
from ubpe.text.patterns import NATIVE_PATTERNS, PATTERNS, code_point_classes
from ubpe_native._pretokenize import split_text
classes = code_point_classes()
data = np.frombuffer(b" a" * 4_000_000, np.uint8)
limit(24)
expect_memory_error(lambda: split_text(data, classes, NATIVE_PATTERNS[PATTERNS["gpt2"]]))
""",
        "",
    ),
    "classic": (
        """
from ubpe_native._classic import PairTable, encode_words
table = PairTable(np.array([0], np.int32), np.array([0], np.int32), np.array([2], np.int32))
weights = np.array([0.0, 0.0, 0.5])
word = np.zeros(4_000_000, np.int32)
limit(64)
expect_memory_error(lambda: encode_words(table, weights, word, np.array([0, len(word)], np.int64)))
print("after:", encode_words(table, weights, np.zeros(4, np.int32), np.array([0, 4]))[0].tolist())
""",
        "after: [2, 2]",
    ),
    "merges_cache_lock": (
        # most words are cached: the output grows while the cache lock is held
        MERGES_TABLE
        + """
n = 8_000_000
data = np.frombuffer(b"ab" * n, np.uint8)
bounds = np.arange(0, 2 * n + 1, 2, dtype=np.int64)
limit(32)
expect_memory_error(lambda: table.encode(data, bounds))
print("after:", table.encode(np.frombuffer(b"abab", np.uint8), np.array([0, 4])).tolist())
""",
        "after: [3]",
    ),
    "merges_long_word": (
        MERGES_TABLE
        + """
data = np.frombuffer(b"ab" * 4_000_000, np.uint8)
limit(64)
expect_memory_error(lambda: table.encode(data, np.array([0, len(data)])))
print("after:", table.encode(np.frombuffer(b"abab", np.uint8), np.array([0, 4])).tolist())
""",
        "after: [3]",
    ),
    "unigram": (
        """
from ubpe_native._unigram import UnigramLattice
lattice = UnigramLattice(b"ab", np.array([0, 1, 2]), np.array([3, 4], np.int32),
                         np.array([-1.0, -1.0], np.float32), np.zeros(2, np.uint8),
                         0, -11.0, np.full(256, -1, np.int32))
data = np.frombuffer(b"ab" * 4_000_000, np.uint8)
limit(64)
expect_memory_error(lambda: lattice.encode(data))
print("after:", lattice.encode(np.frombuffer(b"ab", np.uint8)).tolist())
""",
        "after: [3, 4]",
    ),
    "unigram_build": (
        # the double-array trie of a million 8-byte pieces (its vectors: clear + resize, never
        # assign(n, value), which would abort)
        """
from ubpe_native._unigram import UnigramLattice
n = 1_000_000
pieces = np.random.default_rng(0).integers(97, 123, (n, 8)).astype(np.uint8).tobytes()
args = (pieces, np.arange(0, 8 * n + 1, 8), np.arange(1, n + 1, dtype=np.int32), np.full(n, -1.0, np.float32),
        np.zeros(n, np.uint8), 0, -11.0, np.full(256, -1, np.int32))
limit(200)
expect_memory_error(lambda: UnigramLattice(*args))
print("after:", UnigramLattice(*args).encode(np.frombuffer(pieces[:8], np.uint8)).tolist())
""",
        "after: [1]",
    ),
    "spm_bpe_and_pipeline": (
        # sentencepiece BPE (whole text, then words apart with the cache) and the batch pipeline
        """
from ubpe_native._spm import SpmBPE, SpmNormalizer
from ubpe_native._spm_pipeline import SpmPipeline
i32 = lambda *v: np.array(v, np.int32)
def model(split):
    return SpmBPE(5, i32(1, 3), i32(2, 2), i32(3, 4), np.array([0, 1]), np.zeros(5, np.uint8), b"ab",
                  np.array([0, 1, 2]), i32(1, 2), np.zeros(2, np.uint8), i32(), np.array([0]), 0,
                  np.full(256, -1, np.int32), True, split)
norm = SpmNormalizer(np.zeros(0, np.uint32), b"", True, True, True, False, b"", np.array([0]), i32())
whole, split = model(False), SpmPipeline(norm, model(True))
data = np.frombuffer(b"ab" * 4_000_000, np.uint8)
texts = [" ".join(["abbab"] * 1_000_000)]
limit(64)
expect_memory_error(lambda: whole.encode(data))
limit(64)
expect_memory_error(lambda: split.encode_batch(texts))
print("after:", whole.encode(np.frombuffer(b"abbab", np.uint8)).tolist(), split.encode_batch(["abbab x"]))
""",
        "after: [4, 3] [[0, 4, 3, 0]]",
    ),
    "combine_walk": (
        """
from ubpe_native._combine import walk
n = 2_000_000
limit_args = (np.arange(n + 1, dtype=np.int64), np.arange(n + 1, dtype=np.int64),
              np.zeros(n, np.int32), np.zeros(n))
limit(48)
expect_memory_error(lambda: walk(*limit_args, 1))
""",
        "",
    ),
    "radix_insert": (
        # a failed insert leaves the tree as it was
        """
from ubpe_native._radix import RadixTree
tree = RadixTree(2, np.array([0, 2]), np.array([0, 1], np.int32))
key = np.zeros(20_000_000, np.int32)
limit(48)
expect_memory_error(lambda: tree.insert(key, 7))
print("after:", len(tree), tree.get([0]), tree.get([0, 1]), tree.get([0, 0]))
tree.insert([0, 0], 9)
print("then:", len(tree), tree.get([0, 0]), tree.get([0, 1]))
""",
        "after: 3 0 2 None\nthen: 4 9 2",
    ),
    "radix_build": (
        """
from ubpe_native._radix import RadixTree
limit(64)
expect_memory_error(lambda: RadixTree(8_000_000))
""",
        "",
    ),
    "part_counter": (
        # an add cut short leaves a counter that says so instead of wrong counts
        """
from ubpe_native._parts import PartCounter
counter = PartCounter()
n = 4_000_000
tokens = np.arange(n, dtype=np.int32)
offsets = np.arange(n + 1, dtype=np.int64)
limit(48)
expect_memory_error(lambda: counter.add(tokens, offsets, np.zeros(n, np.int32), 1))
try:
    counter.export()
except MemoryError as exc:
    print("after:", exc)
""",
        "after: an earlier add() ran out of memory",
    ),
    "part_scores": (
        """
from ubpe_native._score import part_scores
n = 8_000_000
weights = np.ones(n)
tokens = np.arange(n, dtype=np.int32)
limit(48)
expect_memory_error(lambda: part_scores(weights, tokens, np.array([0, n])))
""",
        "",
    ),
}


def _under_asan() -> bool:
    return "asan" in os.environ.get("LD_PRELOAD", "")


@pytest.mark.skipif(sys.platform != "linux", reason="RLIMIT_AS and /proc/self/status")
@pytest.mark.skipif(_under_asan(), reason="AddressSanitizer reserves terabytes of address space")
@pytest.mark.parametrize("case", CASES)
def test_kernel_raises_memory_error_and_stays_usable(case):
    import ubpe_native

    script, after = CASES[case]
    root = str(Path(ubpe_native.__file__).resolve().parent.parent)
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    done = subprocess.run([sys.executable, "-c", PRELUDE + script], capture_output=True, text=True,
                          env=env, check=False, timeout=120)
    report = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    assert done.returncode == 0, report
    assert "Exception ignored" not in done.stderr, report
    assert "MemoryError:" in done.stdout, report
    assert after in done.stdout, report
