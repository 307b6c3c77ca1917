"""The kernel's scanner splits the `words` pattern, the byte-level presets and patterns of no
preset (the regex VM) exactly as the `regex` module does, inside `SplitPipeline` (issue 12):
differential tests, scanner vs regex."""

from __future__ import annotations

import numpy as np
import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

from ubpe import UBPE
from ubpe.alphabet import Alphabet
from ubpe.text.patterns import PATTERNS
from ubpe.splitting import WORDS, SplitMode, make_pipeline, native_pattern, split_classes
from ubpe_native._pretokenize import split_ranges

# characters where the alternatives meet: blanks, other whitespace, apostrophes and the
# contraction letters, underscores (the `words` gap), digits and other numerals, marks,
# letters of several scripts and cases, punctuation, symbols
TRICKY = " \t\n\r\x0b\u00a0\u2003'sdmtlvreSLVR_a9\u00b2\u0663\u0301\u094d\u0928\u00e9Z\u02b0\u01c5!?.-/\u2019\u203f$\u00ad\U0001f600"
texts = st.text(alphabet=st.sampled_from(TRICKY), max_size=40) | st.text(max_size=30)
# patterns of no preset, which the kernel's regex VM runs (ubpe.text.regex_program): whisper's
# exact regex, and GPT-2's as users pass it to UBPE (regex_str) without the possessive forms
OWN_PATTERNS = [r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+""",
                r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+$|\s+(?!\S)|\s"""]
SCANNED = [WORDS, *PATTERNS.values(), *OWN_PATTERNS]


def regex_parts(pattern: str, text: str) -> tuple[list[int], list[int]]:
    """Piece bounds and gap starts as SplitPipeline's regex path computes them."""
    bounds, covered = [], set()
    for match in regex.finditer(pattern, text):
        if match.end() > match.start():
            bounds += [match.start(), match.end()]
            covered.update(range(match.start(), match.end()))
    gaps = [i for i in range(len(text)) if i not in covered]
    return bounds, gaps


@settings(max_examples=300, deadline=None)
@given(text=texts, pattern=st.sampled_from(SCANNED))
def test_scanner_agrees_with_regex(text: str, pattern: str) -> None:
    try:
        data = np.frombuffer(text.encode("utf-8"), np.uint8)
    except UnicodeEncodeError:
        return  # lone surrogates: SplitPipeline keeps the regex path
    bounds, gaps = split_ranges(data, np.array([0]), np.array([len(data)]), split_classes(), native_pattern(pattern))
    expected_bounds, expected_gaps = regex_parts(pattern, text)
    to_char = {len(text[:i].encode()): i for i in range(len(text) + 1)}
    chars = [to_char[b] for b in bounds.tolist()]
    gap_chars = [to_char[g] for g in gaps.tolist()]
    pieces = list(zip(chars[0::2], chars[1::2]))
    matched = [p for p in pieces if not (p[1] == p[0] + 1 and p[0] in gap_chars)]
    assert [x for p in matched for x in p] == expected_bounds
    assert gap_chars == expected_gaps


def pipelines(regex_str: str, **options):
    """The same pipeline twice: the scanner's, and one forced onto the regex path."""
    alphabet = Alphabet.from_spec(sorted(set(TRICKY) - {"\u00ad"}))
    native = make_pipeline(alphabet, regex_str=regex_str, **options)
    assert native._native is not None
    plain = make_pipeline(alphabet, regex_str=regex_str, **options)
    plain._native = None
    return native, plain


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(st.text(alphabet=st.sampled_from(TRICKY.replace("\u00ad", "")), max_size=30), max_size=5),
       pattern=st.sampled_from(SCANNED), breaks=st.booleans())
def test_pipeline_same_parts_as_regex_path(docs: list[str], pattern: str, breaks: bool) -> None:
    native, plain = pipelines(pattern, break_tokens="!" if breaks else None, known_words=["sd"] if breaks else None)
    for mode in (SplitMode.FULL, SplitMode.REGEX):
        a, b = native.split_batch(docs, mode=mode), plain.split_batch(docs, mode=mode)
        for field in ("tokens", "part_offsets", "part_is_separator", "doc_part_offsets"):
            assert getattr(a, field).tolist() == getattr(b, field).tolist()


@pytest.mark.parametrize("regex_str", [WORDS, *OWN_PATTERNS])
def test_fit_and_encode_unchanged_by_the_scanner(regex_str: str) -> None:
    docs = ["They'll pay 42_000 dollars, won't they?\n\n  Yes_no. ", "naïve café: 3 x²", "a  b\tc"] * 20
    alphabet = sorted(set("".join(docs)))
    native = UBPE(alphabet=alphabet, n_tokens=80, regex_str=regex_str)
    plain = UBPE(alphabet=alphabet, n_tokens=80, regex_str=regex_str)
    assert native.split_pipeline._native is not None
    plain.split_pipeline._native = None
    native.fit(docs, quiet=True)
    plain.fit(docs, quiet=True)
    assert native.dumps() == plain.dumps()
    assert native.encode_batch(docs, top_n=3) == plain.encode_batch(docs, top_n=3)


def test_split_ranges_rejects_bad_ranges() -> None:
    data = np.frombuffer("aé b".encode(), np.uint8)
    classes = split_classes()
    with pytest.raises(ValueError, match="character boundaries"):
        split_ranges(data, np.array([0]), np.array([2]), classes, 5)
    with pytest.raises(ValueError, match="ascending"):
        split_ranges(data, np.array([3, 0]), np.array([4, 1]), classes, 5)
    with pytest.raises(ValueError, match="same length"):
        split_ranges(data, np.array([0]), np.array([], dtype=np.int64), classes, 5)
    with pytest.raises(ValueError, match="pattern"):
        split_ranges(data, np.array([0]), np.array([1]), classes, 9)


def test_encode_batch_same_whatever_the_threads(monkeypatch) -> None:
    import ubpe.models.split_batch
    from ubpe import UBPEClassic

    docs = [f"They'll pay {n} dollars_{n % 7}, won't they?  Yes. " * (n % 5) for n in range(300)]
    alphabet = sorted(set("".join(docs)))
    monkeypatch.setattr(ubpe.models.split_batch, "BATCH_CHUNK_SYMBOLS", 500)  # many chunks, so threads share them
    for cls, options in ((UBPE, {}), (UBPE, {"top_n": 3}), (UBPEClassic, {}), (UBPEClassic, {"encoder": "ranked"})):
        tok = cls(alphabet=alphabet, n_tokens=120, regex_str=WORDS)
        tok.fit(docs, quiet=True)
        one = tok.encode_batch(docs, threads=1, **options)
        assert tok.encode_batch(docs, threads=2, **options) == one
        monkeypatch.setenv("UBPE_NUM_THREADS", "2")
        assert tok.encode_batch(docs, **options) == one
        monkeypatch.delenv("UBPE_NUM_THREADS")
        assert one == [tok.encode(doc, **options) for doc in docs]


def test_threads_variable_must_be_a_positive_int(monkeypatch) -> None:
    from ubpe.errors import InvalidParameterError

    tok = UBPE(alphabet="ab", n_tokens=4)
    tok.fit(["abab", "abba"], quiet=True)
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("UBPE_NUM_THREADS", bad)
        with pytest.raises(InvalidParameterError, match="UBPE_NUM_THREADS"):
            tok.encode_batch(["ab"])


@pytest.mark.parametrize("docs", [[], [""], ["", "as", ""], ["a s", "é_"], ["a  ", "\t"]])
def test_fast_text_split_matches_the_general_path(docs: list[str]) -> None:
    native, plain = pipelines(WORDS)
    a, b = native.split_batch(docs), plain.split_batch(docs)
    for field in ("tokens", "part_offsets", "part_is_separator", "doc_part_offsets"):
        assert getattr(a, field).tolist() == getattr(b, field).tolist()


def test_unknown_symbol_reported_alike() -> None:
    from ubpe.errors import UnknownSymbolError

    native, plain = pipelines(WORDS)
    messages = []
    for pipeline in (native, plain):
        with pytest.raises(UnknownSymbolError) as error:
            pipeline.split_batch(["as", "a#s"], first_doc=7)
        messages.append(str(error.value))
    assert messages[0] == messages[1] and "document 8" in messages[0]
