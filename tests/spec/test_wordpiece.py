"""WordPiece (BERT), issue 26 point 6: HF ``tokenizers`` is the reference for ``tokenizer.json``
WordPiece files, llama.cpp for the GGUF ``bert`` type: its own tests (``.inp`` / ``.out``) and
its own WPM tokenizer compiled from the pinned sdist (`llama_wpm`).

The tokenizer.json files are built with ``tokenizers`` (``BertWordPieceTokenizer``) on BERT's
vocabulary as llama.cpp's ``ggml-vocab-bert-bge.gguf`` holds it (`hf_builders.bert`): uncased
(lowercase, accents stripped), cased, and the two mixed variants. On every text of
`vocab_corpora.varied_texts` (1,100+: prose, the UDHR's scripts, Python source, random code
points, whitespace runs, emoji) ubpe's ids, with and without the special tokens, and its
decoded text are HF's.
"""

from __future__ import annotations

import functools

import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe
from ubpe.encoders import available_encoders
from ubpe.errors import InvalidParameterError, ModelFormatError
from ubpe.io import detect
from ubpe.io import gguf as gguf_io
from ubpe.lab.datasets import DataNotInstalledError

from cli_checks import cli_encode_and_compare_agree
from vocab_corpora import text_lines, varied_texts, vocab_path

tokenizers = pytest.importorskip("tokenizers")
pytest.importorskip("gguf")
hf_builders = pytest.importorskip("hf_builders")

from ubpe.io import hf_import  # noqa: E402
from ubpe.text.normalizers import BertNormalizer  # noqa: E402
from ubpe.text.bert_words import bert_words  # noqa: E402

VARIANTS = {"uncased": {}, "cased": {"lowercase": False}, "lowercase-accents-kept": {"strip_accents": False},
            "cased-accents-stripped": {"lowercase": False, "strip_accents": True}}
ENCODERS = available_encoders()
OPTIONS = {"additive": {"score": float}}  # score = the token id: any additive score will do
@functools.lru_cache(maxsize=None)  # dropped when the module ends (tests/conftest.py)
def _pair(variant: str):
    """(HF's tokenizer, ubpe's reading of its tokenizer.json)."""
    reference = hf_builders.bert(**VARIANTS[variant])
    return reference, hf_import.from_json(reference.to_str())


@functools.lru_cache(maxsize=1)
def _gguf():
    return gguf_io.read(vocab_path("bert-bge"))


@pytest.fixture(scope="module")
def texts() -> list[str]:
    found = varied_texts()
    assert len(found) >= 1000
    return found


# -- HF tokenizers ------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", VARIANTS)
def test_ids_equal_hf_tokenizers_on_every_text(variant, texts):
    reference, tok = _pair(variant)
    differ = [text for text in texts if tok.encode(text) != reference.encode(text, add_special_tokens=False).ids]
    assert not differ, f"{len(differ)} of {len(texts)} texts differ, first: {differ[0]!r}"
    framed = [text for text in texts[::7] if tok.encode(text, add_special=True) != reference.encode(text).ids]
    assert not framed, f"[CLS] ... [SEP] differ on {framed[0]!r}"


@pytest.mark.parametrize("variant", VARIANTS)
def test_decode_is_hf_decode_and_inverts_encode_where_hf_does(variant, texts):
    reference, tok = _pair(variant)
    round_trips = 0
    for text in texts:
        ids = reference.encode(text).ids
        assert tok.decode(ids) == reference.decode(ids), repr(text)
        if reference.decode(ids) == text:
            round_trips += 1
            assert tok.decode(tok.encode(text)) == text
    assert round_trips > 0


def test_batch_and_threads_give_the_same_ids(texts):
    _, tok = _pair("uncased")
    assert tok.encode_batch(texts[:300], threads=2) == [tok.encode(text) for text in texts[:300]]


def test_unknown_words_and_the_word_length_limit():
    reference, tok = _pair("uncased")
    unk = tok.piece_to_id("[UNK]")
    for text in ["ok \U0001f999\U0001f999 ok", "a" * 100, "a" * 101, "ab" * 60 + " x", "\u0378x \U000e0100"]:
        assert tok.encode(text) == reference.encode(text, add_special_tokens=False).ids
    assert tok.encode("a" * 101) == [unk]


@pytest.mark.long
def test_tables_are_tokenizers_on_every_code_point():
    """The Unicode tables of `ubpe.text.bert_tables` (read off ``tokenizers`` by
    ``tests/golden/make_bert_tables.py``) give HF's normalization and words on every code point."""
    from tokenizers import normalizers, pre_tokenizers

    every = "a".join(chr(cp) for cp in range(0x110000) if not 0xD800 <= cp < 0xE000)
    for options in [dict(clean_text=True, handle_chinese_chars=True, strip_accents=True, lowercase=True),
                    dict(clean_text=True, handle_chinese_chars=False, strip_accents=False, lowercase=False),
                    dict(clean_text=False, handle_chinese_chars=False, strip_accents=True, lowercase=False),
                    dict(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=True)]:
        assert BertNormalizer(**options)(every) == normalizers.BertNormalizer(**options).normalize_str(every), options
    words = [word for word, _ in pre_tokenizers.BertPreTokenizer().pre_tokenize_str(every)]
    assert bert_words(every) == words


def _check_every_encoder(tok, encoder: str, texts: list[str]) -> None:
    """``encoder`` runs on every text; where the native encoding has no unknown token, its
    encoding decodes to the same text (a WordPiece segmentation of the same words)."""
    unk = tok.special_ids["unk"]
    options = dict(OPTIONS.get(encoder, {}))
    if encoder == "sample":  # sampling needs weights, which a WordPiece file has none of: refused without
        with pytest.raises(InvalidParameterError, match="fit_weights"):
            tok.encode_with("a cat", encoder)
        options["weights"] = -np.ones(len(tok.vocabulary))
    for text in texts:
        [(ids, score)] = tok.encode_with(text, encoder, **options)
        native = tok.encode(text)
        if unk not in native:
            assert tok.decode(ids) == tok.decode(native), (encoder, text[:80])
        if encoder == "fewest":
            assert len(ids) <= len(native)
        assert np.isfinite(score)


@settings(max_examples=300, deadline=None)
@given(st.text(st.characters(max_codepoint=0x7F), max_size=40))
def test_the_ascii_paths_cut_as_the_tables_do(text):
    """ASCII text skips the big Unicode classes (a fast path): the same words."""
    from ubpe.text import bert_words as bert_module

    assert bert_words(text) == bert_module._bert_words_regex().findall(text)
    dropped, words, _ = bert_module._wpm_regexes()
    for lowercase in (True, False):
        general = [w.lower() if lowercase else w for w in words.findall(dropped.sub("", text))]
        assert bert_module.wpm_words(text, lowercase, True) == general


@pytest.mark.parametrize("encoder", ENCODERS)
def test_every_encoder_runs_on_the_hf_model(encoder, texts):
    _check_every_encoder(_pair("uncased")[1], encoder, texts[::25])


def test_description_contract_and_pickle():
    _, tok = _pair("uncased")
    info = tok.describe()
    assert info["variant"] == "hf:wordpiece" and info["continuing_subword_prefix"] == "##"
    assert info["max_input_chars_per_word"] == 100 and info["post_processor"] == {"prefix": [101], "suffix": [102]}
    ids = tok.encode("Playing unaffable")
    assert [tok.id_to_piece(i) for i in ids][:2] == ["playing", "una"] and tok.id_to_piece(ids[2]).startswith("##")
    assert tok.pieces(ids[:3]) == [" playing", " una", tok.id_to_piece(ids[2])[2:]]
    copy = pickle.loads(pickle.dumps(tok))
    assert copy.encode("Playing unaffable") == ids


def test_ambiguity_weights_and_top_n_on_both(texts):
    lines = text_lines(limit=200)
    for tok in (_pair("uncased")[1], _gguf()):
        found = tok.ambiguity("Hello world, playing unaffable games")
        assert found.n_segmentations > 1 and found.encoding_probability == pytest.approx(found.best_probability)
        fitted = pickle.loads(pickle.dumps(tok)).fit_weights(lines)
        [(ids, score)] = fitted.encode_with(lines[0])
        assert ids == tok.encode(lines[0]) and score > 0
        best = fitted.encode_with("playing unaffable games", "tfidf", top_n=3)
        assert len({tuple(ids) for ids, _ in best}) == 3


def test_read_only_as_the_other_imported_families(tmp_path):

    for tok in (_pair("uncased")[1], _gguf()):
        assert not tok.can_save
        with pytest.raises(InvalidParameterError, match="read-only"):
            ubpe.save(tok, tmp_path / "model.json")


def test_load_detects_the_file(tmp_path):
    reference, tok = _pair("cased")
    path = tmp_path / "tokenizer.json"
    reference.save(str(path))
    assert detect(path) == "hf"
    loaded = ubpe.load(path)
    assert loaded.variant == "hf:wordpiece" and loaded.encode("Hello World") == tok.encode("Hello World")


# -- bad files ----------------------------------------------------------------------------------


def _document(**model) -> str:
    reference, _ = _pair("uncased")
    import json

    doc = json.loads(reference.to_str())
    doc["model"].update(model)
    return json.dumps(doc)


@pytest.mark.parametrize("model, message", [
    ({"vocab": {}}, "vocabulary is empty"),
    ({"vocab": {"a": 0, "##b": 1}}, "unk_token '\\[UNK\\]' is not in its vocabulary"),
    ({"unk_token": "<unk>"}, "unk_token '<unk>' is not in its vocabulary"),
    ({"vocab": {"a": -1}}, "must map token strings"),
    ({"max_input_chars_per_word": "many"}, "max_input_chars_per_word"),
    ({"continuing_subword_prefix": 3}, "must be strings"),
])
def test_a_bad_wordpiece_file_is_a_clear_error_naming_it(model, message, tmp_path):
    path = tmp_path / "tokenizer.json"
    path.write_text(_document(**model), encoding="utf-8")
    with pytest.raises(ModelFormatError, match=message) as caught:
        ubpe.load(path)
    assert str(path) in str(caught.value)


def test_a_gguf_bert_vocabulary_without_an_unknown_token_is_refused():
    metadata = {"tokenizer.ggml.model": "bert", "tokenizer.ggml.tokens": ["▁a", "b"]}
    with pytest.raises(ModelFormatError, match="v.gguf: the vocabulary has no unknown token"):
        gguf_io.from_metadata(metadata, where="v.gguf")


# -- llama.cpp ----------------------------------------------------------------------------------

WPM_OPTIONS = [(True, True), (False, False), (True, False), (False, True)]  # (lowercase, strip_accents)


@pytest.fixture(scope="module")
def wpm(tmp_path_factory):
    """llama.cpp's WPM tokenizer, compiled from its sources (skips without a compiler)."""
    import llama_wpm

    binary = llama_wpm.build(tmp_path_factory.mktemp("llama_wpm"))
    return lambda texts, lowercase=True, strip_accents=True: llama_wpm.tokenize(
        binary, _gguf().texts, texts, _gguf().special_ids["unk"], lowercase, strip_accents)


def _wpm_model(lowercase: bool, strip_accents: bool):
    from ubpe.models.wordpiece import WordPiece

    tok = _gguf()
    return WordPiece(tok.texts, token_types=tok.token_types, specials=tok.special_ids, lowercase=lowercase,
                     strip_accents=strip_accents, where="bert-bge")


@pytest.mark.long
def test_the_compiled_reference_is_llama_cpps(wpm):
    cases = gguf_io.read_vocab_tests(vocab_path("bert-bge"))
    assert wpm([text for text, _ in cases]) == [ids for _, ids in cases]


@pytest.mark.long
@pytest.mark.parametrize("lowercase, strip_accents", WPM_OPTIONS)
def test_ids_equal_llama_cpps_on_every_text(lowercase, strip_accents, wpm, texts):
    tok = _wpm_model(lowercase, strip_accents)
    reference = wpm(texts, lowercase, strip_accents)
    differ = [text for text, ids in zip(texts, reference) if tok.encode(text) != ids]
    assert not differ, f"{len(differ)} of {len(texts)} texts differ, first: {differ[0]!r}"


@pytest.mark.long
@pytest.mark.parametrize("lowercase, strip_accents", WPM_OPTIONS)
def test_ids_equal_llama_cpps_on_every_code_point(lowercase, strip_accents, wpm):
    """Every code point between letters and alone (``aXb X``), a thousand to a text: llama.cpp's
    tables (`ubpe.text.wpm_tables`) are read as it reads them."""
    units = [f"a{chr(cp)}b {chr(cp)}A" for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    texts = [" ".join(units[k : k + 1000]) for k in range(0, len(units), 1000)]
    tok = _wpm_model(lowercase, strip_accents)
    reference = wpm(texts, lowercase, strip_accents)
    differ = [text for text, ids in zip(texts, reference) if tok.encode(text) != ids]
    assert not differ, f"{len(differ)} of {len(texts)} texts differ, first at U+{ord(differ[0][1]):04X}"


def test_the_wpm_tables_are_the_sdists():
    """`ubpe.text.wpm_tables` is what ``tests/golden/make_wpm_tables.py`` writes from the sdist."""
    import importlib.util
    from pathlib import Path

    script = Path(__file__).resolve().parents[1] / "golden" / "make_wpm_tables.py"
    spec = importlib.util.spec_from_file_location("make_wpm_tables", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    try:
        written = module.render(module.tables())
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    from ubpe.text import wpm_tables

    committed = Path(wpm_tables.__file__)  # the module imported (the checkout's or a wheel's)
    assert written == committed.read_text(encoding="utf-8")


def test_llama_cpp_expected_ids():
    tok = _gguf()
    cases = gguf_io.read_vocab_tests(vocab_path("bert-bge"))
    assert len(cases) >= 40
    failed = [(text, ids, tok.encode(text)) for text, ids in cases if tok.encode(text) != ids]
    assert not failed, f"{len(failed)}/{len(cases)} cases differ, first: {failed[0]!r}"


def test_llama_cpp_frames_with_cls_and_sep_and_decodes_as_its_detokenizer():
    tok = _gguf()
    assert tok.variant == "gguf:bert"
    assert tok.encode("Hello world", add_special=True) == [101, *tok.encode("Hello world"), 102]
    # llama_detokenize: "▁" becomes a space (the text starts with one), clean_spaces joins "," "'s"
    assert tok.decode(tok.encode("Hello World , it 's me !")) == " hello world, it's me!"


def test_llama_cpp_and_hf_differ_only_where_llama_cpp_normalizes_otherwise(texts):
    """llama.cpp drops every mark (``\\p{M}``, HF only nonspacing ones) and keeps ASCII symbols
    apart; on English prose and code the two agree."""
    tok = _gguf()
    reference, _ = _pair("uncased")
    for text in text_lines(limit=300) + texts[-len(texts) // 4:-120]:
        if text.isascii():
            assert tok.encode(text) == reference.encode(text, add_special_tokens=False).ids, repr(text)


@pytest.mark.parametrize("encoder", ENCODERS)
def test_every_encoder_runs_on_the_gguf_model(encoder, texts):
    _check_every_encoder(_gguf(), encoder, texts[::25])


def test_the_cli_takes_both(tmp_path, capsys):
    from ubpe.cli import main

    reference, _ = _pair("uncased")
    json_path = tmp_path / "tokenizer.json"
    reference.save(str(json_path))
    doc = "Hello world, it's a test"
    for path in (str(vocab_path("bert-bge")), str(json_path)):
        tok = ubpe.load(path)
        ids = tok.encode(doc)
        inspected = cli_encode_and_compare_agree(path, doc, ids, capsys)
        assert "wordpiece" in inspected.lower() or tok.variant == "gguf:bert"
        assert main(["view", path, "--no-color", "--text", "Hello world"]) == 0
        assert capsys.readouterr().out.strip().replace("|", "") == "hello world"


# -- encode_batch on every core: the kernel (ubpe_native._wordpiece) -------------------------------

#: the characters where BERT's pipeline does something: letters of both cases, accents (whole
#: and as marks), whitespace of every kind, punctuation and symbols, CJK (and a compatibility
#: ideograph), control and format characters, code points no token has, a final sigma, the
#: dotted capital I, noncharacters (U+FFFF joins a chunk's documents for the normalizer)
_CHARS = ("aAbzZ09 éÉñüİΣσς\u0301\u0316\u0345\t\n\r\x0b\x0c\x85\u00a0\u2000\u3000"
          ",.!?$#'-_~^`|中文字\uf900\u1fef\u2260\x00\x01\x7f\u200b\u00ad\ufffd\ufeff\uffff"
          "\U0001f999\u0378\U000e0100\U00011938")
_DOCS = st.lists(st.one_of(st.text(alphabet=_CHARS, max_size=12), st.sampled_from(
    ["[SEP]", "[CLS]", "[MASK]", " ", "unaffable", "playing", "a" * 101, "ab" * 51, "\u00e9" * 100])),
    max_size=6).map("".join)


def _batches_agree(tok, docs: list[str], threads: int, want: list[list[int]] | None = None, **options) -> None:
    """``encode``, ``encode_batch`` and ``encode_batch_to_numpy`` (the kernel) give ``want``
    (default: the ids of the Python path, ``_reference_encode``, one by one)."""
    if want is None:
        want = [tok._reference_encode(doc, **options) for doc in docs]
    assert [tok.encode(doc, **options) for doc in docs] == want
    assert tok.encode_batch(docs, threads=threads, **options) == want
    ids, offsets = tok.encode_batch_to_numpy(docs, threads=threads, **options).best()
    assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_kernel_gives_hf_ids_on_every_text(variant, texts):
    reference, tok = _pair(variant)
    assert tok._kernel() is not None
    want = [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)]
    for threads in (1, 3):
        _batches_agree(tok, texts, threads, want)
    framed = [e.ids for e in reference.encode_batch(texts[::5])]
    _batches_agree(tok, texts[::5], 4, framed, add_special=True)


@settings(max_examples=80, deadline=None)
@given(docs=st.lists(_DOCS, max_size=8), threads=st.integers(1, 4), variant=st.sampled_from(list(VARIANTS)))
def test_the_kernel_gives_hf_ids_on_random_text(docs, threads, variant):
    reference, tok = _pair(variant)
    want = [e.ids for e in reference.encode_batch(docs, add_special_tokens=False)]
    assert [tok._reference_encode(doc) for doc in docs] == want
    _batches_agree(tok, docs, threads, want)


@functools.lru_cache(maxsize=None)
def _small_pair(max_chars: int):
    """A tiny WordPiece model (most words unknown; a small ``max_input_chars_per_word``) in
    BERT's pipeline, built by ``tokenizers``, and ubpe's reading of it."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    pieces = ["[UNK]", "a", "b", "ab", "abb", "##a", "##b", "##ab", "##bb", "e", "##e", "中", ",", "##z", "z"]
    reference = Tokenizer(models.WordPiece({p: i for i, p in enumerate(pieces)}, unk_token="[UNK]",
                                           max_input_chars_per_word=max_chars))
    reference.normalizer = normalizers.BertNormalizer()
    reference.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    return reference, hf_import.from_json(reference.to_str())


@settings(max_examples=80, deadline=None)
@given(docs=st.lists(st.text(alphabet="abAB\u00e9ez\u0301 ,.中x", max_size=30), max_size=6),
       threads=st.integers(1, 4), max_chars=st.sampled_from([1, 3, 5, 100]))
def test_unknown_words_and_the_length_limit_in_the_kernel(docs, threads, max_chars):
    reference, tok = _small_pair(max_chars)
    want = [e.ids for e in reference.encode_batch(docs, add_special_tokens=False)]
    _batches_agree(tok, docs, threads, want)


@pytest.mark.long
@pytest.mark.parametrize("variant", VARIANTS)
def test_the_kernel_gives_hf_ids_on_every_code_point(variant):
    """Every code point between letters and alone (``aXb X``), a thousand to a text: the
    kernel's classes after ``BertNormalizer.rewrite`` cut as HF's whole normalizer and
    pre-tokenizer do (CJK padding, whitespace, marks, punctuation)."""
    reference, tok = _pair(variant)
    units = [f"a{chr(cp)}b {chr(cp)}A" for cp in range(0x110000) if not 0xD800 <= cp < 0xE000]
    texts = [" ".join(units[k : k + 1000]) for k in range(0, len(units), 1000)]
    _batches_agree(tok, texts, 2, [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)])


def test_a_long_document_is_shared_among_threads_with_the_same_ids(texts):
    reference, tok = _pair("uncased")
    long_doc = " ".join(texts * 2)
    docs = [long_doc, "[CLS] x " + long_doc[:20000], texts[3]]
    assert len(long_doc) > 100_000
    want = [e.ids for e in reference.encode_batch(docs, add_special_tokens=False)]
    _batches_agree(tok, docs, 2, want)


def test_bad_documents_raise_what_encode_raises():
    _, tok = _pair("uncased")
    for bad in (3, None, b"bytes", "lone \ud800 surrogate"):
        with pytest.raises(Exception) as one:
            tok.encode(bad)
        for batch in (tok.encode_batch, tok.encode_batch_to_numpy):
            with pytest.raises(type(one.value)):
                batch(["fine", bad], threads=2)
    with pytest.raises(InvalidParameterError):
        tok.encode_batch(["fine"], threads=0)


def test_a_pipeline_the_kernel_does_not_run_goes_the_python_way(texts):
    """A normalizer step other than BERT's, or an added token matched in the normalized text:
    no kernel, the same ids."""
    from tokenizers import AddedToken, normalizers

    for change in ("normalizer", "added", "lowercase"):
        reference = hf_builders.bert()
        if change == "normalizer":
            reference.normalizer = normalizers.Sequence([normalizers.NFKC(), normalizers.BertNormalizer()])
        elif change == "lowercase":
            reference.normalizer = normalizers.Lowercase()
        else:
            reference.add_tokens([AddedToken("hello world", normalized=True)])
        tok = hf_import.from_json(reference.to_str())
        assert tok._kernel() is None
        docs = texts[:200] + ["Hello World, hello world"]
        _batches_agree(tok, docs, 2)
        if change != "lowercase":  # (Python's str.lower is not Rust's on every text)
            assert tok.encode_batch(docs) == [e.ids for e in reference.encode_batch(docs, add_special_tokens=False)]


@pytest.mark.parametrize("lowercase, strip_accents", WPM_OPTIONS)
def test_the_kernel_gives_the_wpm_ids_on_every_text(lowercase, strip_accents, texts):
    tok = _wpm_model(lowercase, strip_accents)
    assert tok._kernel() is not None
    _batches_agree(tok, texts, 2)
    _batches_agree(tok, texts[::9], 3, add_special=True, parse_special=True)


def test_the_kernel_gives_llama_cpps_expected_ids():
    tok = _gguf()
    cases = gguf_io.read_vocab_tests(vocab_path("bert-bge"))
    _batches_agree(tok, [text for text, _ in cases], 2, [ids for _, ids in cases])


@settings(max_examples=60, deadline=None)
@given(docs=st.lists(_DOCS, max_size=8), threads=st.integers(1, 4), options=st.sampled_from(WPM_OPTIONS),
       parse_special=st.booleans())
def test_the_kernel_gives_the_wpm_ids_on_random_text(docs, threads, options, parse_special):
    _batches_agree(_cached_wpm_model(*options), docs, threads, parse_special=parse_special)


_cached_wpm_model = functools.lru_cache(maxsize=None)(_wpm_model)
