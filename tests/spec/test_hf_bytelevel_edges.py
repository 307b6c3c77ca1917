"""Issue 36 point 2: byte-level BPE ``tokenizer.json`` files on their edges, as ``tokenizers``
encodes them: a byte that is no token is dropped before merging when there is no unknown token
(so its neighbours merge), is the unknown token when there is one (which merges as any token
does), and a run of them is one unknown token with ``fuse_unk``; and whatever else random small
vocabularies expose (trimmed byte sets, merges listed twice, merges of tokens that later merges
make, ids in any order, ``ignore_merges``, an end-of-word suffix).

Every encode path is checked: ``encode``, ``encode_batch`` and ``encode_batch_to_numpy`` on two
threads (the kernel's scanner, or its program of HF's steps, without the GIL), and HF's steps in
Python (a pre-tokenizer the kernel does not take).
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe.text.byte_chars import BYTE_TO_CHAR

tokenizers = pytest.importorskip("tokenizers")
from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers  # noqa: E402

from ubpe.io import hf_import  # noqa: E402

#: the texts' characters: ASCII letters, punctuation, spaces and two of two and three bytes
TEXT_CHARS = ' abc["\n\té€'
TEXT_BYTES = sorted(set("".join(TEXT_CHARS).encode()))
UNK = "<unk>"


def _pre_tokenizer(kind: str, add_prefix_space: bool):
    if kind == "bytelevel":  # the kernel's scanner
        return pre_tokenizers.ByteLevel(add_prefix_space=add_prefix_space, use_regex=True)
    if kind == "split":  # the kernel's program of HF's steps
        return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r"\s+|[^\s]+"), "isolated"),
                                        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    # a Split the kernel does not run (merged with the previous piece): HF's steps in Python
    return pre_tokenizers.Sequence([pre_tokenizers.Split(Regex(r"\s"), "merged_with_previous"),
                                    pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])


def _both(vocab: dict[str, int], merges: list[tuple[str, str]], unk: str | None, fuse_unk: bool,
          ignore_merges: bool, kind: str, add_prefix_space: bool, suffix: str | None = None):
    options = dict(unk_token=unk, fuse_unk=fuse_unk, ignore_merges=ignore_merges)
    if suffix is not None:
        options = dict(unk_token=unk, end_of_word_suffix=suffix)
    hf = Tokenizer(models.BPE(vocab=vocab, merges=merges, **options))
    hf.pre_tokenizer = _pre_tokenizer(kind, add_prefix_space)
    hf.decoder = decoders.ByteLevel()
    return hf, hf_import.from_json(hf.to_str())


def _check(hf, tok, texts: list[str]) -> None:
    expected = [hf.encode(t).ids for t in texts]
    assert [tok.encode(t) for t in texts] == expected
    assert tok.encode_batch(texts) == expected
    ids, offsets = tok.encode_batch_to_numpy(texts, threads=2).best()
    assert [ids[offsets[d]:offsets[d + 1]].tolist() for d in range(len(texts))] == expected


@pytest.mark.parametrize("kind", ["bytelevel", "split", "python"])
def test_the_issues_example(kind):
    """``{Ġ, ", Ġ"}``: ``' ["'`` is ``[2]`` (the ``[`` dropped, ``Ġ"`` merged); with an unknown
    token it stands between them, one per byte or one per run."""
    for unk, fuse in [(None, False), (UNK, False), (UNK, True)]:
        vocab = {"Ġ": 0, '"': 1, 'Ġ"': 2, **({UNK: 3} if unk else {})}
        hf, tok = _both(vocab, [("Ġ", '"')], unk, fuse, False, kind, False)
        texts = [' ["', ' [["x"', "[", "x", " ", "", ' "[[', '[" ["']
        _check(hf, tok, texts)
        if unk is None and kind == "bytelevel":  # one word: ' ["'
            assert tok.encode(' ["') == [2]


def test_the_unknown_token_merges():
    """A merge that names the unknown token applies to a byte that is no token, as HF's."""
    vocab = {"a": 0, UNK: 1, "a" + UNK: 2, UNK + "a": 3}
    for fuse in (False, True):
        hf, tok = _both(vocab, [("a", UNK), (UNK, "a")], UNK, fuse, False, "bytelevel", False)
        _check(hf, tok, ["ab", "ba", "abba", "bab", "b"])


@st.composite
def byte_level_models(draw):
    """A small byte-level vocabulary: some of the texts' bytes (a trimmed one), random merges
    of its tokens (a pair listed twice, a token that a later merge makes, ...), ids shuffled,
    maybe an unknown token (fused or not, maybe merging)."""
    present = draw(st.lists(st.sampled_from(TEXT_BYTES), unique=True, min_size=1))
    tokens = [BYTE_TO_CHAR[b] for b in present]
    unk = draw(st.sampled_from([None, UNK]))
    if unk is not None:
        tokens.append(unk)
    merges: list[tuple[str, str]] = []
    for _ in range(draw(st.integers(0, 14))):
        left, right = draw(st.sampled_from(tokens)), draw(st.sampled_from(tokens))
        merges.append((left, right))
        if left + right not in tokens:
            tokens.append(left + right)
    if merges and draw(st.booleans()):  # a merge listed again, later (HF keeps the last rank)
        merges.append(draw(st.sampled_from(merges)))
    if draw(st.booleans()):  # merges out of the order their operands are made in
        merges = draw(st.permutations(merges))
    ids = draw(st.permutations(range(len(tokens))))
    vocab = dict(zip(tokens, ids))
    return vocab, merges, unk, draw(st.booleans()), draw(st.booleans())


_RANDOM_MODELS = given(byte_level_models(), st.sampled_from(["bytelevel", "split", "python"]), st.booleans(),
                       st.lists(st.text(st.sampled_from(TEXT_CHARS), max_size=14), min_size=1, max_size=6))


def _random_model(model, kind, add_prefix_space, texts):
    vocab, merges, unk, fuse_unk, ignore_merges = model
    hf, tok = _both(vocab, merges, unk, fuse_unk, ignore_merges, kind, add_prefix_space)
    _check(hf, tok, texts)


@_RANDOM_MODELS
@settings(max_examples=150, deadline=None)
def test_random_small_vocabularies(model, kind, add_prefix_space, texts):
    _random_model(model, kind, add_prefix_space, texts)


@pytest.mark.long
@_RANDOM_MODELS
@settings(max_examples=2000, deadline=None)
def test_random_small_vocabularies_at_length(model, kind, add_prefix_space, texts):
    _random_model(model, kind, add_prefix_space, texts)


@given(byte_level_models(), st.lists(st.text(st.sampled_from(TEXT_CHARS), max_size=14), min_size=1, max_size=6))
@settings(max_examples=60, deadline=None)
def test_random_small_vocabularies_with_a_word_end(model, texts):
    """The same with an end-of-word suffix (CLIP's ``</w>``): the last byte of a word is a
    unit of its own, which may be no token either."""
    vocab, merges, unk, _, _ = model
    suffixed = {f"{c}</w>" for c in vocab if len(c) == 1}
    vocab = {**vocab, **{t: len(vocab) + k for k, t in enumerate(sorted(suffixed)) if sum(map(ord, t)) % 3}}
    hf, tok = _both(vocab, merges, unk, False, False, "split", False, suffix="</w>")
    _check(hf, tok, texts)


def test_a_saved_file_keeps_fuse_unk(tmp_path):
    """``fuse_unk`` on a byte-level model is read from the file (one unknown token per run)."""
    vocab = {"a": 0, UNK: 1}
    hf, tok = _both(vocab, [], UNK, True, False, "bytelevel", False)
    doc = json.loads(hf.to_str())
    assert doc["model"]["fuse_unk"] is True
    assert tok.encode("abba") == hf.encode("abba").ids == [0, 1, 0]


def test_byte_fallback_on_a_byte_level_model():
    """``byte_fallback`` where a byte is no token and its byte tokens exist: HF writes those
    (and merges them), which ubpe does not do, so it refuses the file; where no byte needs it,
    the option changes nothing and the file reads."""
    from ubpe.errors import ModelFormatError

    vocab = {"a": 0, "<0x62>": 1}
    hf = Tokenizer(models.BPE(vocab=vocab, merges=[], byte_fallback=True))
    hf.pre_tokenizer = _pre_tokenizer("bytelevel", False)
    assert hf.encode("ab").ids == [0, 1]
    with pytest.raises(ModelFormatError, match="byte_fallback"):
        hf_import.from_json(hf.to_str())
    hf = Tokenizer(models.BPE(vocab={"a": 0, "b": 1}, merges=[], byte_fallback=True))
    hf.pre_tokenizer = _pre_tokenizer("bytelevel", False)
    assert hf_import.from_json(hf.to_str()).encode("abc") == hf.encode("abc").ids


@pytest.fixture(scope="module", params=[None, "NFKC"])
def with_added(request):
    """A trained byte-level model with added tokens of every kind (`hf_builders.trained_bytelevel`),
    without a normalizer or with NFKC and a normalized added token that NFKC changes ("ﬁx" is
    matched as "fix"), and ubpe's reading of it."""
    from hf_builders import trained_bytelevel
    from tokenizers import AddedToken, normalizers

    hf = trained_bytelevel()
    if request.param:
        hf.normalizer = normalizers.NFKC()
        hf.add_tokens([AddedToken("\ufb01x", normalized=True)])
    return hf, hf_import.from_json(hf.to_str())


ADDED_PIECES = [" hello world", "hello world", "[word]", "x[word]", "@@", " @@ ", "<|endoftext|>", "<|", "<", "[",
                "@", " ", "the", "é", "\n", "1", "fix", "\ufb01x", "\ufb01", "A\u030a", "\u212b"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(ADDED_PIECES), max_size=8))
def test_encode_of_texts_with_and_without_added_tokens(with_added, pieces):
    """`HFByteLevelBPE.encode`'s one kernel call (a text holding no added token's first
    character as matched, and ASCII under a normalizer of Unicode forms) and its general path
    (added tokens cut out first) give HF's ids alike."""
    hf, tok = with_added
    text = "".join(pieces)
    assert tok.encode(text) == hf.encode(text, add_special_tokens=False).ids
    assert tok.encode(text, add_special=True) == hf.encode(text).ids
