"""Unicode tables (issue 13, item 9): ByteLevelBPE splits text exactly as ``regex.findall``
with its pattern, using the ``regex`` module's Unicode tables, not tiktoken's.

tiktoken's Rust engine carries older tables: a code point assigned since (U+330A7, a CJK
ideograph of Extension J, Unicode 17.0) is a letter for ``regex`` but unassigned for
tiktoken, so ``"\\U000330a7's"`` splits as ``[ideograph, "'s"]`` here and as
``[ideograph + "'", "s"]`` there. We follow ``regex``: the same tables serve fitting, the
native scanner, the HF import and the README's stated rule (ids equal ``regex.findall``'s
pieces encoded), and a newly assigned ideograph is a letter. On text whose characters both
tables know, the ids are tiktoken's (``tests/spec/test_bytelevel.py``)."""

from __future__ import annotations

import pytest
import regex

from ubpe.text.patterns import PATTERNS
from ubpe.models.bytelevel import ByteLevelBPE

IDEOGRAPH = "\U000330a7"  # CJK Unified Ideographs Extension J (Unicode 17.0)
TEXT = IDEOGRAPH + "'s"
RAW = IDEOGRAPH.encode()
RANKS = {**{bytes([i]): i for i in range(256)}, b"'s": 256, RAW[:2]: 257, RAW[2:]: 258, RAW: 259, RAW + b"'": 260}
OURS = [259, 256]  # [ideograph] ["'s"]
OLDER_TABLES = [260, 115]  # [ideograph + "'"] ["s"]: the ideograph taken for a non-letter


def _regex_knows_the_ideograph() -> bool:
    return regex.fullmatch(r"\p{L}", IDEOGRAPH) is not None


pytestmark = pytest.mark.skipif(not _regex_knows_the_ideograph(),
                                reason="this regex module predates Unicode 17.0")


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "llama3"])
def test_we_split_as_the_regex_module(pattern):
    tok = ByteLevelBPE.from_mergeable_ranks(RANKS, pattern=pattern)
    assert regex.findall(PATTERNS[pattern], TEXT) == [IDEOGRAPH, "'s"]
    assert tok.encode(TEXT) == OURS


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "llama3"])
def test_tiktoken_differs_only_by_its_older_tables(pattern):
    tiktoken = pytest.importorskip("tiktoken")
    enc = tiktoken.Encoding("t", pat_str=PATTERNS[pattern], mergeable_ranks=RANKS, special_tokens={})
    assert enc.encode(TEXT) in (OURS, OLDER_TABLES)  # OURS once tiktoken's tables know Unicode 17
    known = "\u4e00's"  # an ideograph every table knows: the same split and ids
    assert enc.encode(known) == ByteLevelBPE.from_mergeable_ranks(RANKS, pattern=pattern).encode(known)
