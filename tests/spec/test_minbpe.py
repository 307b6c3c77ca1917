"""minbpe ``.model`` files: read, written and encoded id for id as minbpe does it.

The peer is ``cminbpe`` (PyPI), whose ``RegexTokenizer`` keeps karpathy/minbpe's format
(``save``/``load``) and its pure-Python encoder (``encode_ordinary``, ``_encode_python``),
which is the reference algorithm used here.
"""

from __future__ import annotations

import pytest
from cminbpe import RegexTokenizer

import ubpe
from ubpe import ByteLevelBPE
from ubpe.models.minbpe import MinbpeBPE
from ubpe.errors import InvalidParameterError, ModelFormatError
from ubpe.io import detect
from ubpe.io.minbpe import parse_minbpe, write

from vocab_corpora import text_lines

GPT4_SPLIT = r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]++[\r\n]*|\s*[\r\n]|\s+(?!\S)|\s+"""
SPECIALS = {"<|endoftext|>": 1100, "<|fim|>": 1101}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A minbpe model of 800 merges trained on real prose, saved by the peer."""
    peer = RegexTokenizer(GPT4_SPLIT)
    peer.train("\n".join(text_lines(limit=4000)), 256 + 800, backend="c")
    # the C trainer fills `merges` out of id order; minbpe's `save` writes dict order and `load`
    # numbers lines 256, 257, ... - so order it by id, as minbpe's own trainer does
    peer.merges = dict(sorted(peer.merges.items(), key=lambda item: item[1]))
    assert list(peer.merges.values()) == list(range(256, 256 + 800))
    peer.register_special_tokens(SPECIALS)
    prefix = tmp_path_factory.mktemp("minbpe") / "tok"
    peer.save(str(prefix))
    return peer, prefix.with_suffix(".model")


def heldout() -> list[str]:
    return text_lines("kjv", limit=1500) + ["héllo wörld 🦙 ١٢٣", "  two  spaces\n\nand lines\r\n", ""]


def test_ids_equal_minbpe_on_real_text(trained):
    peer, path = trained
    assert detect(path) == "minbpe"
    tok = ubpe.load(path)
    assert isinstance(tok, MinbpeBPE) and tok.n_vocab == 1102
    lines = heldout()
    differ = [line for line in lines if tok.encode(line) != peer.encode_ordinary(line)]
    assert not differ, f"{len(differ)}/{len(lines)} lines differ, first: {differ[0]!r}"
    for line in lines[:200]:
        assert tok.decode(tok.encode(line)) == line


def test_special_tokens_as_minbpe_allows_them(trained):
    peer, path = trained
    tok = ubpe.load(path)
    text = "the end<|endoftext|>of days <|fim|> and <|fim"
    assert tok.encode(text, parse_special=True) == peer._encode_python(text, allowed_special="all")
    assert tok.encode(text) == peer.encode_ordinary(text)  # specials as plain text


def test_written_file_is_read_back_by_minbpe(trained, tmp_path):
    peer, path = trained
    tok = ubpe.load(path)
    out = tmp_path / "again.model"
    write(tok, out)
    assert out.read_text() == path.read_text()
    reread = RegexTokenizer()
    reread.load(str(out))
    assert reread.merges == peer.merges and reread.special_tokens == SPECIALS


def test_every_ubpe_encoder_runs_on_a_minbpe_vocabulary(trained):
    tok = ubpe.load(trained[1])
    for line in heldout()[:100]:
        native = tok.encode(line)
        for encoder in ("fewest", "longest_prefix", "tfidf", "ranked"):
            (ids, _), = tok.encode_with(line, encoder)
            assert tok.decode(ids) == line
            if encoder == "fewest":
                assert len(ids) <= len(native)


def test_fitted_bytelevel_model_is_written_for_minbpe(tmp_path):
    texts = text_lines(limit=3000)
    ours = ByteLevelBPE().fit(texts, n_tokens=256 + 400, pattern="cl100k", special_tokens={"<|end|>": 700}, quiet=True)
    path = tmp_path / "ours.model"
    ubpe.io.save(ours, path, format="minbpe")
    peer = RegexTokenizer()
    peer.load(str(path))
    back = ubpe.load(path)
    for line in heldout()[:500]:
        assert back.encode(line) == peer.encode_ordinary(line)
        # pair-ranked merges (minbpe) and rank-by-bytes merges (tiktoken) agree on a fitted vocabulary
        assert back.encode(line) == ours.encode_ordinary(line)


@pytest.mark.parametrize(
    "text, message",
    [
        ("minbpe v2\n\n0\n", "first line"),
        ("minbpe v1\n", "pattern line"),
        ("minbpe v1\n\\w+\nx\n", "number of special tokens"),
        ("minbpe v1\n\\w+\n5\n<a> 300\n", "announced"),
        ("minbpe v1\n\\w+\n0\n104 105 106\n", "expected '<left id> <right id>'"),
        ("minbpe v1\n\\w+\n0\n104 999\n", "not created before"),
        ("minbpe v1\n\\w+\n0\n104 105\n104 105\n", "same bytes"),
        ("minbpe v1\n\\w+\n1\n<a> 2147483646\n104 105\n", "not in 257"),
        ("minbpe v1\n\\w+\n1\n<a> 99999999999\n", "non-negative integer"),
        ("minbpe v1\n(\n0\n", "not a valid regex"),
        ("minbpe v1\n\\w+\n2\n<a> 300\n<b> 300\n", "share an id"),
    ],
)
def test_bad_files_are_clear_errors(text, message):
    with pytest.raises(ModelFormatError, match=message):
        parse_minbpe(text)


def test_only_creation_ordered_bytelevel_models_are_writable(tmp_path):
    cl100k_like = ByteLevelBPE.from_mergeable_ranks({bytes([b]): 255 - b for b in range(256)} | {b"ab": 256})
    with pytest.raises(InvalidParameterError, match="only records ranks"):
        ubpe.io.save(cl100k_like, tmp_path / "x.model", format="minbpe")
    universal = ubpe.UBPE(alphabet="ab", n_tokens=4)
    universal.fit(["abab"], quiet=True)
    with pytest.raises(InvalidParameterError, match="cannot hold a universal model"):
        ubpe.io.save(universal, tmp_path / "y.model", format="minbpe")


def test_an_empty_pattern_line_is_basic_tokenizers_no_split(tmp_path):
    """Issue 28, point 1: minbpe's ``BasicTokenizer`` writes an empty pattern line and encodes
    the whole text as one piece; ubpe read such a file as "split by the empty regex" and
    encoded every text to ``[]``. The peer's ``RegexTokenizer`` with a pattern that matches a
    whole text is ``BasicTokenizer``'s algorithm: the ids must be its."""
    whole = r"(?s).+"
    peer = RegexTokenizer(whole)
    peer.train("\n".join(text_lines(limit=300)), 256 + 120, backend="c")
    peer.merges = dict(sorted(peer.merges.items(), key=lambda item: item[1]))
    peer.save(str(tmp_path / "basic"))
    model = tmp_path / "basic.model"
    lines = model.read_text().split("\n")
    assert lines[1] == whole
    lines[1] = ""  # what BasicTokenizer.save writes
    model.write_text("\n".join(lines))
    tok = ubpe.load(model)
    texts = text_lines("kjv", limit=60) + ["héllo wörld 🦙", "  two  spaces\n\nand lines\r\n", "x"]
    assert [tok.encode(t) for t in texts] == [peer.encode_ordinary(t) for t in texts]
    assert all(tok.decode(tok.encode(t)) == t for t in texts)
    assert tok.encode("") == []
