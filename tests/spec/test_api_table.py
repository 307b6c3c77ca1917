"""One API shape (issue 35, point 3): one loaded file of every family (19), the table of its methods
and their signatures printed (``pytest -s``), and a failure on any divergence: a method
missing, a batch call without ``threads=``, an old thread-count name that does not warn, the
vocabulary lookups (sentencepiece's, HF's, transformers' and tiktoken's names) disagreeing
with each other, or an ``encode`` / ``encode_batch`` without the one special-token vocabulary
(``add_special`` and ``parse_special``, keyword-only, default False: :mod:`ubpe.text.specials`)
or giving it another meaning than the peers' names it stands for."""

from __future__ import annotations

import functools
import inspect
import warnings
from pathlib import Path

import pytest

import ubpe
from ubpe.io import save
from ubpe.io.sentencepiece import CONTROL
from ubpe.text.specials import SPECIAL_KEYWORDS

from bad_models import TEXTS, fitted_models, spm_model_bytes
from vocab_corpora import MISTRAL_PACKAGE, shipped_file, vocab_path

tokenizers = pytest.importorskip("tokenizers")

#: what every family answers (``threads=`` on the batch calls)
METHODS = ("encode", "encode_batch", "encode_batch_to_numpy", "encode_with", "decode", "decode_batch",
           "id_to_piece", "piece_to_id", "token_to_id", "id_to_token", "get_vocab", "save")
PROPERTIES = ("n_vocab", "vocab_size")
BATCH_CALLS = ("encode_batch", "encode_batch_to_numpy")
#: ubpe 0.3.0's encode, kept exactly: [(ids, score)] (every other family: ids)
SCORED_ENCODE = ("universal", "classic")


def _hf(folder: Path, name: str, build) -> Path:
    path = folder / f"{name}.json"
    build().save(str(path))
    return path


@functools.lru_cache(maxsize=1)
def _families(folder: Path) -> dict[str, ubpe.Tokenizer]:
    from hf_builders import BUILDERS as HF
    from hf_composed_builders import BUILDERS as UNIGRAM
    from hf_composed_builders import WORDLEVEL_BUILDERS as WORDLEVEL

    models = fitted_models()
    folder.mkdir(parents=True, exist_ok=True)
    spm_bpe, spm_unigram = folder / "bpe.model", folder / "unigram.model"
    spm_bpe.write_bytes(spm_model_bytes("bpe"))
    spm_unigram.write_bytes(spm_model_bytes("unigram"))
    save(models.b, folder / "minbpe.model", format="minbpe")
    save(models.b, folder / "bytelevel.json", format="hf")
    paths = {
        "minbpe": folder / "minbpe.model", "hf:bytelevel": folder / "bytelevel.json",
        "spm:bpe": spm_bpe, "spm:unigram": spm_unigram,
        "gguf:gpt2": vocab_path("gpt-2"), "gguf:llama": vocab_path("llama-spm"),
        "gguf:t5": vocab_path("nomic-bert-moe"), "gguf:bert": vocab_path("bert-bge"),
        "gguf:gemma4": vocab_path("gemma-4"),
        "tekken": shipped_file(MISTRAL_PACKAGE, "*/src/mistral_common/data/tekken_240911.json"),
        "clip": shipped_file("open-clip-torch", "*/src/open_clip/bpe_simple_vocab_16e6.txt.gz"),
        "hf:bpe": _hf(folder, "metaspace", HF["trained-metaspace"]),
        "hf:bytelevel-suffix": _hf(folder, "clip", HF["clip"]),
        "hf:unigram": _hf(folder, "unigram", UNIGRAM["trained"]),
        "hf:wordlevel": _hf(folder, "wordlevel", WORDLEVEL["metaspace"]),
    }
    from hf_builders import bert

    paths["hf:wordpiece"] = _hf(folder, "bert", bert)
    loaded = {"universal": models.u, "classic": models.c, "bytelevel": models.b}
    loaded.update((name, ubpe.load(path)) for name, path in paths.items())
    return loaded


@pytest.fixture(scope="module")
def families(tmp_path_factory) -> dict[str, ubpe.Tokenizer]:
    return _families(tmp_path_factory.mktemp("families"))


def _signature(tok, name: str) -> str:
    member = getattr(type(tok), name, None)
    if member is None:
        return "—"
    if isinstance(member, property):
        return "property"
    params = [p for p in inspect.signature(member).parameters.values() if p.name != "self"]
    return "(" + ", ".join(p.name for p in params if p.kind is not p.VAR_KEYWORD) + ")"


def test_the_method_table_has_no_divergence(families, capsys):
    rows = {name: {method: _signature(tok, method) for method in METHODS + PROPERTIES}
            for name, tok in families.items()}
    assert {tok.variant for tok in families.values()} >= set(families) - {"universal", "classic"}
    width = max(map(len, rows)) + 2
    with capsys.disabled():
        print(f"\n{'family':<{width}}" + " | ".join(METHODS + PROPERTIES))
        for name, cells in rows.items():
            print(f"{name:<{width}}" + " | ".join(cells[m] for m in METHODS + PROPERTIES))
    missing = {(name, method) for name, cells in rows.items() for method, cell in cells.items() if cell == "—"}
    assert not missing, f"families without the method: {sorted(missing)}"
    no_threads = {(name, call) for name, tok in families.items() for call in BATCH_CALLS
                  if "threads" not in inspect.signature(getattr(tok, call)).parameters}
    assert not no_threads, f"batch calls without threads=: {sorted(no_threads)}"


@pytest.mark.parametrize("name", ["universal", "classic", "bytelevel", "gguf:gpt2", "spm:unigram", "hf:unigram",
                                  "tekken", "hf:wordpiece", "clip", "hf:wordlevel"])
def test_the_vocabulary_under_every_name_agrees(families, name):
    tok = families[name]
    assert tok.vocab_size == tok.n_vocab == len(range(tok.n_vocab)) > 0
    vocab = tok.get_vocab()
    assert set(vocab.values()) <= set(range(tok.n_vocab))
    for token in list(range(min(tok.n_vocab, 300))) + [tok.n_vocab - 1]:
        piece = tok.id_to_piece(token)
        assert tok.id_to_token(token) == piece
        key = tuple(piece) if isinstance(piece, list) else piece
        found = tok.token_to_id(piece)
        assert found is not None and found == vocab[key] <= token
        assert tok.id_to_piece(found) == piece
    assert tok.id_to_token(tok.n_vocab) is None
    assert tok.token_to_id("\U0010fffe no token is this \U0010fffe") is None


@pytest.mark.parametrize("name", ["universal", "bytelevel", "tekken", "hf:unigram", "gguf:llama"])
def test_threads_is_the_one_name_and_the_old_ones_warn_once(families, name):
    import ubpe.threads

    tok = families[name]
    docs = TEXTS[:3] if name in SCORED_ENCODE else ["the cat sat", "on the mat"]
    want = tok.encode_batch(docs, threads=2)
    assert tok.encode_batch(docs, threads=1) == want
    batch = tok.encode_batch_to_numpy(docs, threads=2)
    if name in SCORED_ENCODE:
        assert batch.tolist() == want
    else:
        ids, offsets = batch.best()
        assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == want
    old = {"universal": "n_threads", "bytelevel": "num_threads", "tekken": "num_threads"}.get(name)
    if old is None:
        return
    ubpe.threads._WARNED.discard(old)
    with pytest.warns(DeprecationWarning, match=f"`{old}=` is deprecated"):
        assert tok.encode_batch(docs, **{old: 2}) == want
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)  # once only
        assert tok.encode_batch(docs, **{old: 1}) == want
    with pytest.raises(ubpe.errors.InvalidParameterError, match="disagree"):
        tok.encode_batch(docs, threads=1, **{old: 2})


def test_encode_returns_ids_everywhere_but_ubpe_030s_scored_encode(families):
    for name, tok in families.items():
        doc = TEXTS[0]
        out = tok.encode(doc)
        if name in SCORED_ENCODE:
            (ids, score), *_ = out
            assert isinstance(score, float) and all(isinstance(i, int) for i in ids), name
        else:
            assert all(isinstance(i, int) for i in out) and out, name


#: the calls that take the one special-token vocabulary
SPECIAL_CALLS = ("encode", "encode_batch")


def _special_keywords(tok, call: str) -> str:
    """``call``'s special-token keywords as ``name=default`` (keyword-only ones), for the table."""
    params = inspect.signature(getattr(type(tok), call)).parameters
    return ", ".join(f"{name}={params[name].default!r}" for name in SPECIAL_KEYWORDS
                     if name in params and params[name].kind is inspect.Parameter.KEYWORD_ONLY)


def test_every_family_takes_the_one_special_token_vocabulary(families, capsys):
    want = ", ".join(f"{name}=False" for name in SPECIAL_KEYWORDS)
    rows = {name: {call: _special_keywords(tok, call) for call in SPECIAL_CALLS} for name, tok in families.items()}
    width = max(map(len, rows)) + 2
    with capsys.disabled():
        print(f"\n{'family':<{width}}" + " | ".join(SPECIAL_CALLS))
        for name, cells in rows.items():
            print(f"{name:<{width}}" + " | ".join(cells[call] for call in SPECIAL_CALLS))
    diverging = {(name, call, cell) for name, cells in rows.items() for call, cell in cells.items() if cell != want}
    assert not diverging, f"calls whose special-token keywords are not {want!r}: {sorted(diverging)}"


def _specials(tok) -> dict[str, int]:
    """The family's special tokens, text -> id: tiktoken's table, else the named ones and the
    control tokens of an imported model (sentencepiece's token type 3, which HF's special added
    tokens become)."""
    table = getattr(tok, "special_tokens", None)
    if isinstance(table, dict):
        return dict(table)
    ids = set(getattr(tok, "special_ids", {}).values())
    if getattr(tok, "token_types", None) is not None:
        ids.update(i for i, kind in enumerate(tok.token_types.tolist()) if kind == CONTROL)
    return {tok.id_to_piece(token): token for token in ids}


@pytest.mark.parametrize("name", ["universal", "classic", "bytelevel", "minbpe", "hf:bytelevel", "spm:bpe",
                                  "spm:unigram", "gguf:gpt2", "gguf:llama", "gguf:t5", "gguf:bert", "gguf:gemma4",
                                  "tekken", "clip", "hf:bpe", "hf:bytelevel-suffix", "hf:unigram", "hf:wordlevel",
                                  "hf:wordpiece"])
def test_the_special_token_keywords_mean_the_same_on_every_family(families, name):
    tok = families[name]
    docs = TEXTS[:3] if name in SCORED_ENCODE else ["the cat sat", "on the mat", ""]
    best = (lambda out: out[0][0]) if name in SCORED_ENCODE else (lambda out: out)
    for add in (False, True):
        for parse in (False, True):
            options = {"add_special": add, "parse_special": parse}
            one_by_one = [tok.encode(doc, **options) for doc in docs]
            assert tok.encode_batch(docs, **options) == one_by_one, (name, options)
            ids, offsets = tok.encode_batch_to_numpy(docs, **options).best()
            assert [ids[a:b].tolist() for a, b in zip(offsets[:-1], offsets[1:])] == [best(o) for o in one_by_one]
            plain = tok.encode(docs[0], parse_special=parse)
            assert tok.encode(docs[0], add_special=False, parse_special=parse) == plain  # False is the default
            if add:  # add_special only frames: the text's ids whole, the model's special ids around them
                framed = best(tok.encode(docs[0], **options))
                start = next(i for i in range(len(framed) - len(best(plain)) + 1)
                             if framed[i:i + len(best(plain))] == best(plain))
                assert set(framed[:start] + framed[start + len(best(plain)):]) <= set(_specials(tok).values())
    specials = {text: token for text, token in _specials(tok).items() if text.strip()}
    if not specials:
        assert name in SCORED_ENCODE  # ubpe's own vocabularies have none: the keywords change nothing
        return
    text, token = max(specials.items())
    assert token in tok.encode(f"the {text} cat", parse_special=True), (name, text)


@pytest.mark.parametrize("name", ["bytelevel", "tekken"])
def test_the_peers_names_are_aliases_of_the_one_vocabulary(families, name):
    tok = families[name]
    if not tok.special_tokens:  # a fitted byte-level model has none: give it tiktoken's
        tok = type(tok).from_mergeable_ranks(tok.mergeable_ranks(), pattern=tok.pattern,
                                             special_tokens={"<|endoftext|>": tok.n_vocab})
    text = f"the {max(tok.special_tokens)} cat"
    assert tok.encode(text, parse_special=True) == tok.encode(text, allowed_special="all")
    assert tok.encode_batch([text], parse_special=True) == tok.encode_batch([text], allowed_special="all")
    with pytest.raises(ubpe.errors.InvalidParameterError, match="not both"):
        tok.encode(text, parse_special=True, allowed_special={max(tok.special_tokens)})
    if name == "tekken":  # mistral-common's bos: add_special's BOS
        assert tok.encode(text, add_special=True) == tok.encode(text, bos=True) == tok.encode(text, True)
        assert tok.encode_batch([text], add_special=True, eos=True) == tok.encode_batch([text], bos=True, eos=True)
    else:  # tiktoken frames nothing, and refuses a special token's text unless told
        assert tok.encode(text, add_special=True, disallowed_special=()) == tok.encode_ordinary(text)
        with pytest.raises(ubpe.errors.DisallowedSpecialTokenError):
            tok.encode(text, add_special=True)
