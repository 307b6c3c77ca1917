"""ubpe inside ``transformers`` (issue 35, point 2): :class:`UBPETokenizer` over fitted and
loaded tokenizers, with several encoders, against ubpe's own ids and against ``transformers``'
own padding, truncation and collators; no model weights, nothing fetched (HF_HUB_OFFLINE=1).
"""

from __future__ import annotations

import json
import os
import random

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers reads it: a hub request would fail loudly
transformers = pytest.importorskip("transformers", reason="the [transformers] extra is not installed")

from ubpe import UBPE, ByteLevelBPE, UBPEClassic  # noqa: E402
from ubpe.errors import InvalidParameterError, UBPEError  # noqa: E402
from ubpe.integrations.transformers import UBPETokenizer, fast_tokenizer  # noqa: E402

from vocab_corpora import text_lines  # noqa: E402

N_TOKENS = 400


def fitted(model, corpus):
    model.fit(corpus, quiet=True)
    return model


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return text_lines(limit=1200)


@pytest.fixture(scope="module")
def heldout(lines) -> list[str]:
    return lines[900:1100]


@pytest.fixture(scope="module")
def universal(lines) -> UBPE:
    return fitted(UBPE(alphabet=sorted(set("".join(lines))), n_tokens=N_TOKENS, break_tokens=" "), lines[:900])


@pytest.fixture(scope="module")
def classic(lines) -> UBPEClassic:
    return fitted(UBPEClassic(alphabet=sorted(set("".join(lines))), n_tokens=N_TOKENS), lines[:900])


def test_tfidf_round_trip_and_save_pretrained(universal, heldout, tmp_path):
    tok = UBPETokenizer(model=universal, encoder="tfidf")
    ids = [tok(text)["input_ids"] for text in heldout]
    assert ids == [universal.encode(text)[0][0] for text in heldout]
    assert [tok.decode(row) for row in ids] == heldout
    tok.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text())
    assert config["encoder"] == "tfidf" and config["tokenizer_class"] == "UBPETokenizer"
    again = UBPETokenizer.from_pretrained(tmp_path)
    assert [again(text)["input_ids"] for text in heldout] == ids
    assert again.vocab_size == universal.n_vocab == len(again)


@pytest.mark.parametrize("encoder", ["fewest", "classic", "longest_prefix"])
def test_other_encoders_give_ubpes_ids(universal, heldout, encoder):
    tok = UBPETokenizer(model=universal, encoder=encoder)
    texts = heldout[:60]
    assert tok(texts)["input_ids"] == [universal.encode(t, encoder=encoder)[0][0] for t in texts]
    assert tok.batch_decode(tok(texts)["input_ids"]) == texts


def test_padding_truncation_and_masks_equal_transformers(universal, heldout):
    tok = UBPETokenizer(model=universal, pad_token="<pad>")
    assert tok.pad_token_id == universal.n_vocab  # added after the vocabulary
    texts = heldout[:16]
    single = [tok(t)["input_ids"] for t in texts]
    for side in ("right", "left"):
        tok.padding_side = side
        batch = tok(texts, padding=True)
        assert dict(batch) == dict(tok.pad({"input_ids": single}))
        width = max(map(len, single))
        for row, mask, ids in zip(batch["input_ids"], batch["attention_mask"], single):
            fill = [tok.pad_token_id] * (width - len(ids))
            assert row == (ids + fill if side == "right" else fill + ids)
            assert mask == ([1] * len(ids) + [0] * len(fill) if side == "right" else [0] * len(fill) + [1] * len(ids))
    tok.padding_side = "right"
    cut = tok(texts, truncation=True, max_length=7, padding="max_length")
    assert cut["input_ids"] == [ids[:7] + [tok.pad_token_id] * (7 - len(ids[:7])) for ids in single]
    assert cut["attention_mask"] == [[1] * min(len(ids), 7) + [0] * (7 - min(len(ids), 7)) for ids in single]
    arrays = tok(texts, padding=True, return_tensors="np")
    assert arrays["input_ids"].tolist() == tok(texts, padding=True)["input_ids"]


@pytest.mark.parametrize("encoder", ["classic", "tfidf", "fewest"])
def test_batch_equals_one_by_one(classic, heldout, encoder):
    tok = UBPETokenizer(model=classic, encoder=encoder, pad_token="<pad>")
    texts = heldout[:50] + [""]
    assert tok(texts)["input_ids"] == [tok(t)["input_ids"] for t in texts]  # the batch kernel's path
    assert tok.batch_decode(tok(texts)["input_ids"]) == texts
    texts[1] = texts[1] + "<pad>"  # an added token in one text: every text one by one
    assert tok(texts)["input_ids"] == [tok(t)["input_ids"] for t in texts]
    assert tok(texts)["input_ids"][1][-1] == tok.pad_token_id


def test_data_collator_for_language_modeling(universal, heldout):
    tok = UBPETokenizer(model=universal, pad_token="<pad>", eos_token="<eos>", add_eos=True)
    features = [tok(t) for t in heldout[:8]]
    assert all(f["input_ids"][-1] == tok.eos_token_id for f in features)
    collator = transformers.DataCollatorForLanguageModeling(tok, mlm=False, return_tensors="np")
    batch = collator(features)
    width = max(len(f["input_ids"]) for f in features)
    assert batch["input_ids"].shape == (8, width)
    for row, labels, feature in zip(batch["input_ids"], batch["labels"], features):
        n = len(feature["input_ids"])
        assert row[:n].tolist() == feature["input_ids"] and (row[n:] == tok.pad_token_id).all()
        assert labels[:n].tolist() == feature["input_ids"] and (labels[n:] == -100).all()


def test_special_tokens_added_parsed_and_skipped(universal, heldout):
    tok = UBPETokenizer(model=universal, bos_token="<bos>", eos_token="<eos>", add_bos=True, add_eos=True)
    text = heldout[0]
    ids = tok(text)["input_ids"]
    assert ids == [tok.bos_token_id, *universal.encode(text)[0][0], tok.eos_token_id]
    assert tok(text, add_special_tokens=False)["input_ids"] == universal.encode(text)[0][0]
    assert tok.decode(ids, skip_special_tokens=True) == text
    assert tok.decode(ids) == f"<bos>{text}<eos>"
    inner = tok("ab<eos>cd", add_special_tokens=False)["input_ids"]
    assert inner == [*universal.encode("ab")[0][0], tok.eos_token_id, *universal.encode("cd")[0][0]]
    with pytest.raises(InvalidParameterError, match="no bos token"):
        UBPETokenizer(model=universal, add_bos=True)


def test_unknown_symbols_become_unk_or_a_clear_error(universal):
    text = "the \u2603 cat"  # a snowman: in no training line
    with pytest.raises(UBPEError):
        UBPETokenizer(model=universal)(text)
    tok = UBPETokenizer(model=universal, unk_token="<unk>")
    ids = tok(text)["input_ids"]
    assert ids == [*universal.encode("the ")[0][0], tok.unk_token_id, *universal.encode(" cat")[0][0]]


def test_sampling_is_seeded_varied_and_lossless(universal, heldout):
    text = heldout[3]
    options = {"temperature": 2.0, "seed": 7}
    one = UBPETokenizer(model=universal, encoder="sample", encoder_options=options)
    two = UBPETokenizer(model=universal, encoder="sample", encoder_options=options)
    draws = [one(text)["input_ids"] for _ in range(12)]
    assert draws == [two(text)["input_ids"] for _ in range(12)]  # the seed repeats the run
    assert len({tuple(d) for d in draws}) > 1  # ... and the draws differ call to call
    assert all(one.decode(d) == text for d in draws)


def test_dropout_on_a_classic_vocabulary(classic, heldout):
    tok = UBPETokenizer(model=classic, encoder="dropout", encoder_options={"p": 0.3, "seed": 1})
    texts = heldout[:20]
    draws = tok(texts)["input_ids"]
    assert tok.batch_decode(draws) == texts
    plain = [classic.encode(t, encoder="ranked")[0][0] for t in texts]  # dropout with p = 0
    assert sum(map(len, draws)) > sum(map(len, plain))  # dropped merges: more tokens
    with pytest.raises(UBPEError):
        UBPETokenizer(model=classic, encoder="dropout", encoder_options={"p": 2.0})


def test_dna_vocabulary(tmp_path):
    rng = random.Random(0)
    genome = "".join(rng.choice("ACGT") for _ in range(4000))
    reads = [genome[k : k + rng.randint(30, 90)] for k in range(0, 3800, 37)]
    model = fitted(UBPE(alphabet="ACGT", n_tokens=60), reads[:80])
    tok = UBPETokenizer(model=model, encoder="fewest", pad_token="[PAD]")
    batch = tok(reads[80:], padding=True)
    assert [ids[: sum(mask)] for ids, mask in zip(batch["input_ids"], batch["attention_mask"])] == [
        model.encode(r, encoder="fewest")[0][0] for r in reads[80:]]
    assert tok.batch_decode(batch["input_ids"], skip_special_tokens=True) == reads[80:]
    tok.save_pretrained(tmp_path)
    assert UBPETokenizer.from_pretrained(tmp_path)(reads[80:], padding=True)["input_ids"] == batch["input_ids"]


def test_integer_vocabulary_through_code_points(tmp_path):
    rng = np.random.default_rng(0)
    series = [(np.cumsum(rng.integers(-2, 3, size=60)) % 40).tolist() for _ in range(120)]
    model = fitted(UBPE(alphabet=list(range(40)), n_tokens=120), series[:100])
    tok = UBPETokenizer(model=model, encoder="tfidf")
    texts = [tok.symbols_to_text(s) for s in series[100:]]
    ids = tok(texts)["input_ids"]
    assert ids == [model.encode(s)[0][0] for s in series[100:]]
    assert [tok.text_to_symbols(tok.decode(row)) for row in ids] == series[100:]
    tok.save_pretrained(tmp_path)
    assert UBPETokenizer.from_pretrained(tmp_path)(texts)["input_ids"] == ids
    with pytest.raises(UBPEError):
        tok.text_to_symbols("\u4e00")  # stands for no symbol of 40
    assert texts[0][0] == chr(0xE000 + series[100][0])  # the tokenizer.json writer's characters


def test_bad_construction_is_a_clear_error(universal, tmp_path):
    with pytest.raises(InvalidParameterError, match="one of"):
        UBPETokenizer()
    with pytest.raises(InvalidParameterError, match="fitted"):
        UBPETokenizer(model=UBPE(alphabet="ab", n_tokens=4))
    with pytest.raises(UBPEError, match="unknown encoder"):
        UBPETokenizer(model=universal, encoder="no-such")
    (tmp_path / "junk").write_text("not a model")
    with pytest.raises(UBPEError):
        UBPETokenizer(model_file=tmp_path / "junk")


# -- families read from other systems' files ---------------------------------------------------


def test_sentencepiece_file_with_its_special_tokens(lines, heldout, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    path = tmp_path / "spm.model"
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines[:900]), model_prefix=str(tmp_path / "spm"),
                                   vocab_size=300, model_type="bpe", num_threads=1, minloglevel=2)
    reference = spm.SentencePieceProcessor(model_file=str(path))
    tok = UBPETokenizer(model_file=path, pad_token="<pad>")
    assert (tok.unk_token, tok.bos_token, tok.eos_token) == ("<unk>", "<s>", "</s>")
    assert (tok.unk_token_id, tok.bos_token_id, tok.eos_token_id) == (0, 1, 2)
    texts = [t for t in heldout if "<" not in t]
    assert tok(texts, add_special_tokens=False)["input_ids"] == reference.encode(texts)
    assert [tok(t, add_special_tokens=False)["input_ids"] for t in texts[:50]] == reference.encode(texts[:50])
    saved = tmp_path / "saved"
    tok.save_pretrained(saved)  # a read-only family: the file itself is copied
    again = UBPETokenizer.from_pretrained(saved)
    assert again(texts)["input_ids"] == tok(texts)["input_ids"]
    assert again.pad_token_id == tok.pad_token_id == reference.get_piece_size()


def test_fast_tokenizer_of_a_byte_level_vocabulary(lines, heldout, tmp_path):
    model = ByteLevelBPE().fit(lines[:900], n_tokens=400, pattern="gpt2", special_tokens={"<|end|>": 400},
                               quiet=True)
    fast = fast_tokenizer(model, tmp_path / "tokenizer.json", eos_token="<|end|>")
    slow = UBPETokenizer(model=model, eos_token="<|end|>")
    texts = heldout[:200]
    expected = [model.encode(t) for t in texts]
    assert fast(texts)["input_ids"] == expected == slow(texts)["input_ids"] == [slow(t)["input_ids"] for t in texts]
    assert fast.eos_token_id == slow.eos_token_id == 400
    assert [slow.convert_ids_to_tokens(ids) for ids in expected] == [fast.convert_ids_to_tokens(ids) for ids in expected]
    assert fast.batch_decode(expected) == texts == slow.batch_decode(expected)
    offsets = fast(texts[0], return_offsets_mapping=True)["offset_mapping"]
    assert "".join(texts[0][a:b] for a, b in offsets) == texts[0]
    fast.save_pretrained(tmp_path / "fast")
    again = transformers.AutoTokenizer.from_pretrained(tmp_path / "fast")
    assert again(texts)["input_ids"] == expected


def test_fast_tokenizer_refuses_what_tokenizer_json_cannot_hold(universal, tmp_path):
    with pytest.raises(UBPEError, match="tokenizer.json"):
        fast_tokenizer(universal, tmp_path / "tokenizer.json")


# -- offsets -------------------------------------------------------------------------------------


def _check_offsets(tok, texts, **options):
    """Offsets come with the very ids of the same call without them, and each token's span
    spells its piece (special tokens and padding: (0, 0))."""
    with_offsets = tok(texts, return_offsets_mapping=True, **options)
    assert with_offsets["input_ids"] == tok(texts, **options)["input_ids"]
    special = set(tok.all_special_ids)
    for text, ids, spans in zip(texts, with_offsets["input_ids"], with_offsets["offset_mapping"]):
        assert len(spans) == len(ids)
        for token, (a, b) in zip(ids, spans):  # a special token: added (0, 0), or found in the text
            assert text[a:b] == tok.decode([token]) or token in special and (a, b) == (0, 0)


def test_offsets_of_a_fitted_vocabulary(universal, heldout):
    tok = UBPETokenizer(model=universal, pad_token="<pad>", bos_token="<s>", eos_token="</s>", add_bos=True, add_eos=True)
    texts = heldout[:40] + ["a</s>b"]
    spans = tok(texts, return_offsets_mapping=True)["offset_mapping"]
    for text, row in zip(texts, spans):
        inner = [span for span in row if span != (0, 0)]
        assert "".join(text[a:b] for a, b in inner) == text  # they tile the text, "</s>" in it too
    _check_offsets(tok, texts, padding=True)
    _check_offsets(tok, texts, padding="max_length", truncation=True, max_length=6)
    tok.truncation_side = tok.padding_side = "left"
    _check_offsets(tok, texts, padding=True, truncation=True, max_length=6)
    one = tok(texts[0], return_offsets_mapping=True, return_tensors="np")
    assert one["offset_mapping"].shape == (1, len(one["input_ids"][0]), 2)


def test_offsets_of_a_byte_level_vocabulary_equal_the_fast_tokenizers(lines, tmp_path):
    model = ByteLevelBPE().fit(lines[:900], n_tokens=400, pattern="gpt2", quiet=True)
    fast = fast_tokenizer(model, tmp_path / "tokenizer.json")
    slow = UBPETokenizer(model=model)
    texts = ["naïve café — ünïcödé 🦙🦙 text", "plain words here", "中文字符 and more"]
    assert slow(texts, return_offsets_mapping=True)["offset_mapping"] == [
        [tuple(span) for span in row] for row in fast(texts, return_offsets_mapping=True)["offset_mapping"]]


def test_offsets_refused_where_the_family_normalizes(lines, tmp_path):
    spm = pytest.importorskip("sentencepiece")
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines[:900]), model_prefix=str(tmp_path / "spm"),
                                   vocab_size=300, model_type="unigram", num_threads=1, minloglevel=2)
    tok = UBPETokenizer(model_file=tmp_path / "spm.model")
    with pytest.raises(NotImplementedError, match="do not spell the text"):
        tok("Hello there", return_offsets_mapping=True)
    with pytest.raises(NotImplementedError, match="single texts"):
        tok("a", "b", return_offsets_mapping=True)



def test_fast_tokenizer_of_classic_vocabularies(tmp_path):
    """A classic vocabulary written as tokenizer.json by ubpe.io.save: transformers' fast
    tokenizer gives the ids of ubpe's merge-list rule (the ``ranked`` encoder with
    ``priority="id"``), as the slow wrapper with that encoder does, over DNA and integers."""
    rng = random.Random(1)
    genome = "".join(rng.choice("ACGT") for _ in range(6000))
    reads = [genome[k : k + rng.randint(20, 120)] for k in range(0, 5800, 29)]
    series = [[rng.randrange(30) // 3 * 3 for _ in range(rng.randint(5, 60))] for _ in range(150)]
    for alphabet, docs in (("ACGT", reads), (list(range(30)), series)):
        model = fitted(UBPEClassic(alphabet=alphabet, n_tokens=80), docs[:100])
        fast = fast_tokenizer(model, tmp_path / f"{len(model.alphabet)}.json")
        slow = UBPETokenizer(model=model, encoder="ranked", encoder_options={"priority": "id"})
        texts = [doc if isinstance(doc, str) else slow.symbols_to_text(doc) for doc in docs[100:]]
        expected = [model.encode_with(doc, "ranked", priority="id")[0][0] for doc in docs[100:]]
        assert fast(texts)["input_ids"] == expected == slow(texts)["input_ids"]
        assert fast.batch_decode(expected) == texts == slow.batch_decode(expected)
