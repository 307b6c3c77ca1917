"""Unicode tables (issue 13, item 9; revisited by issue 36): a ByteLevelBPE that ubpe fits splits
text exactly as ``regex.findall`` with its pattern, using the ``regex`` module's Unicode tables;
one read from a peer's file (``.tiktoken``, tekken) splits as the peer, with tiktoken's.

tiktoken's Rust engine carries older tables: a code point assigned since (U+330A7, a CJK
ideograph of Extension J, Unicode 17.0) is a letter for ``regex`` but unassigned for
tiktoken, so ``"\\U000330a7's"`` splits as ``[ideograph, "'s"]`` with ``regex`` and as
``[ideograph + "'", "s"]`` in tiktoken. A fitted model follows ``regex``: the same tables serve
fitting, the native scanner and the README's stated rule (a fitted model encodes as its fit
split: ids equal ``regex.findall``'s pieces encoded), and a newly assigned ideograph is a
letter. A model read from a ``.tiktoken`` file is tiktoken's, so it follows tiktoken's tables
(`ByteLevelBPE.unicode`, `ubpe.text.peer_classes`): its ids are tiktoken's on every code point
(``tests/spec/test_peer_classes.py``). On text whose characters both tables know, the two agree
(``tests/spec/test_bytelevel.py``)."""

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


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "llama3"])
def test_a_model_read_from_a_tiktoken_file_splits_as_tiktoken(pattern, tmp_path):
    tiktoken = pytest.importorskip("tiktoken")
    import ubpe

    enc = tiktoken.Encoding("t", pat_str=PATTERNS[pattern], mergeable_ranks=RANKS, special_tokens={})
    path = tmp_path / "ranks.tiktoken"
    ubpe.save(ByteLevelBPE.from_mergeable_ranks(RANKS, pattern=pattern), path, format="tiktoken")
    loaded = ubpe.load(path, pattern=pattern)
    assert loaded.unicode == "tiktoken" and loaded.encode(TEXT) == enc.encode(TEXT) == OLDER_TABLES
    assert ByteLevelBPE.from_mergeable_ranks(RANKS, pattern=pattern, unicode="tiktoken").encode(TEXT) == OLDER_TABLES
    # it keeps tiktoken's through a pickle, a new pattern and ubpe's own format (its `unicode` field)
    import pickle

    assert pickle.loads(pickle.dumps(loaded)).encode(TEXT) == OLDER_TABLES
    assert loaded.with_pattern(pattern).encode(TEXT) == OLDER_TABLES
    ours = tmp_path / "model.json"
    ubpe.save(loaded, ours)
    assert ubpe.load(ours).encode(TEXT) == OLDER_TABLES
