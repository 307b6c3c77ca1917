"""``datasets.Dataset.map`` with ubpe's :func:`tokenize_function` (issue 35, point 2): the ids
ubpe gives, batched or not, in worker processes, through a :class:`UBPETokenizer`'s settings."""

from __future__ import annotations

import os
import pickle

import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
datasets = pytest.importorskip("datasets", reason="the [transformers] extra is not installed")

from ubpe import UBPE, ByteLevelBPE  # noqa: E402
from ubpe.errors import InvalidParameterError, UBPEError  # noqa: E402
from ubpe.integrations.datasets import tokenize_function  # noqa: E402

from vocab_corpora import text_lines  # noqa: E402


@pytest.fixture(scope="module")
def lines() -> list[str]:
    return text_lines(limit=1100)


@pytest.fixture(scope="module")
def model(lines) -> UBPE:
    model = UBPE(alphabet=sorted(set("".join(lines))), n_tokens=300, break_tokens=" ")
    model.fit(lines[:800], quiet=True)
    return model


@pytest.fixture(scope="module")
def dataset(lines):
    return datasets.Dataset.from_dict({"text": lines[800:1100], "n": list(range(300))})


@pytest.mark.parametrize("encoder", [None, "fewest", "classic"])
def test_map_gives_ubpes_ids(model, dataset, encoder):
    mapped = dataset.map(tokenize_function(model, encoder=encoder), batched=True, batch_size=64)
    expected = [model.encode(t, encoder=encoder)[0][0] for t in dataset["text"]]
    assert mapped["input_ids"] == expected
    assert mapped["attention_mask"] == [[1] * len(ids) for ids in expected]


def test_unbatched_and_in_two_processes(model, dataset):
    expected = [model.encode(t)[0][0] for t in dataset["text"]]
    single = dataset.map(tokenize_function(model, batched=False), batched=False)
    assert single["input_ids"] == expected
    function = tokenize_function(model, max_length=12)
    assert pickle.loads(pickle.dumps(function))({"text": dataset["text"][:5]})["input_ids"] == [
        ids[:12] for ids in expected[:5]]
    two = dataset.map(function, batched=True, batch_size=50, num_proc=2)
    assert two["input_ids"] == [ids[:12] for ids in expected]


def test_a_wrappers_settings(model, dataset):
    from ubpe.integrations.transformers import UBPETokenizer

    tok = UBPETokenizer(model=model, encoder="fewest", bos_token="<s>", eos_token="</s>", add_bos=True, add_eos=True)
    mapped = dataset.map(tokenize_function(tok), batched=True)
    assert mapped["input_ids"] == tok(list(dataset["text"]))["input_ids"]


def test_seeded_sampling_repeats_whatever_the_processes(model, dataset):
    function = tokenize_function(model, encoder="sample", encoder_options={"seed": 3, "temperature": 2.0})
    one = dataset.map(function, batched=True, batch_size=40)["input_ids"]
    assert dataset.map(function, batched=True, batch_size=17, num_proc=2)["input_ids"] == one
    assert [model.decode(ids) for ids in one] == dataset["text"]
    assert one != [model.encode(t)[0][0] for t in dataset["text"]]


def test_an_imported_family_and_integer_columns(lines):
    byte_level = ByteLevelBPE().fit(lines[:800], n_tokens=300, pattern="gpt2", quiet=True)
    texts = datasets.Dataset.from_dict({"body": lines[800:900]})
    mapped = texts.map(tokenize_function(byte_level, "body"), batched=True)
    assert mapped["input_ids"] == [byte_level.encode(t) for t in lines[800:900]]
    series = [[i % 7, (i * 3) % 7, i % 5] * 4 for i in range(60)]
    numbers = UBPE(alphabet=list(range(7)), n_tokens=30)
    numbers.fit(series, quiet=True)
    column = datasets.Dataset.from_dict({"seq": series}).map(tokenize_function(numbers, "seq"), batched=True)
    assert column["input_ids"] == [numbers.encode(s)[0][0] for s in series]


def test_bad_input_is_a_clear_error(model, dataset):
    with pytest.raises(InvalidParameterError, match="no column"):
        dataset.map(tokenize_function(model, "body"), batched=True)
    with pytest.raises(InvalidParameterError, match="max_length"):
        tokenize_function(model, max_length=0)
    with pytest.raises(UBPEError, match="unknown encoder"):
        tokenize_function(model, encoder="no-such")
    with pytest.raises(InvalidParameterError, match="fitted"):
        tokenize_function(UBPE(alphabet="ab", n_tokens=4))


def test_the_wrapper_itself_in_worker_processes(model, dataset):
    from ubpe.integrations.transformers import UBPETokenizer

    tok = UBPETokenizer(model=model, encoder="fewest", pad_token="<pad>")
    again = pickle.loads(pickle.dumps(tok))
    assert again(list(dataset["text"][:20]))["input_ids"] == tok(list(dataset["text"][:20]))["input_ids"]
    mapped = dataset.map(lambda batch: tok(batch["text"]), batched=True, num_proc=2)
    assert mapped["input_ids"] == [model.encode(t, encoder="fewest")[0][0] for t in dataset["text"]]
