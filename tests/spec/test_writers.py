"""Writers, checked by the target's own system: a written file, loaded by ``tokenizers``,
``sentencepiece`` or ``tiktoken``, gives ubpe's ids on held-out text (and, for llama.cpp, see
``test_writers_llama.py``).

Which ids are "ubpe's": an imported model's own ``encode``; a fitted ByteLevelBPE's
``encode`` (tiktoken's rule); a classic vocabulary's ``ranked`` encoder with ``priority="id"``
(standard BPE: the pair forming the lowest id merges first), which is what every merge-list
system runs. ubpe's ``classic`` encoder (0.3.0's batched steps, which merge a set of pairs at
once) is no merge-list rule: `test_classic_encoder_agreement` measures how often it agrees.
"""

from __future__ import annotations

import io
import json
import os
import random
import stat
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ubpe
from ubpe import ByteLevelBPE, UBPEClassic
from ubpe.io.write import CONDITIONS, CannotWrite, FAMILIES, TARGETS, conversion_table, why_not
from ubpe.io.write.hf import as_text

from tricky_text import TRICKY
from vocab_corpora import text_lines, varied_texts, vocab_path

tokenizers = pytest.importorskip("tokenizers")
spm = pytest.importorskip("sentencepiece")


def _hf_ids(path, texts: list[str]) -> list[list[int]]:
    reference = tokenizers.Tokenizer.from_file(str(path))
    return [e.ids for e in reference.encode_batch(texts, add_special_tokens=False)]


def _differences(expected: list[list[int]], got: list[list[int]], texts: list) -> list:
    return [(text, want, have) for text, want, have in zip(texts, expected, got) if list(want) != list(have)]


def _ranked(tok, doc) -> list[int]:
    return tok.encode_with(doc, "ranked", priority="id")[0][0]


# -- classic vocabularies over DNA, MIDI REMI ids and integer series ---------------------------------


def _dataset(name: str, split: str, max_symbols: float):
    from experiments.datasets import load
    from ubpe.lab.datasets import DataNotInstalledError

    try:
        return load(name, split, max_symbols=max_symbols).docs
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))


def _chunks(docs, size: int, limit: int) -> list:
    out = [doc[k : k + size] for doc in docs for k in range(0, len(doc), size)]
    return [c for c in out if len(c)][:limit]


# computed in a child process: MidiTok imports PyTorch, ~210 MB that a pytest-xdist worker would
# keep for the rest of the README's test run (issue 39's memory bound)
_MIDI_CHILD = """
import json, sys, zipfile
from pathlib import Path
from experiments.datasets.sources import archive_path
from ubpe.errors import UBPEError
from ubpe.lab.datasets import DataNotInstalledError
from ubpe.lab.datasets.files import midi_tokenizer, midi_tokens

folder = Path(sys.argv[1])
try:
    wheel = zipfile.ZipFile(archive_path("music21"))
except DataNotInstalledError as exc:
    print(json.dumps({"skip": str(exc)}))
    raise SystemExit(0)
remi = midi_tokenizer()
out = []
with wheel:
    for member in sorted(n for n in wheel.namelist() if n.lower().endswith((".mid", ".midi"))):
        path = folder / member.replace("/", "_")
        path.write_bytes(wheel.read(member))
        try:
            out.append(midi_tokens(path, member, remi).tolist())
        except UBPEError:
            continue
print(json.dumps({"ids": out}))
"""


def _midi_ids(tmp_path) -> list[list[int]]:
    """REMI ids (MidiTok, `ubpe.lab.datasets.files.midi_tokenizer`) of the real MIDI files the
    pinned music21 wheel ships for its own tests (in a child process, see ``_MIDI_CHILD``)."""
    import importlib.util
    from pathlib import Path

    for name in ("miditok", "symusic"):  # found, not imported (importorskip would import PyTorch here)
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed (the [midi] extra)")
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _MIDI_CHILD, str(tmp_path)], capture_output=True, text=True,
                          cwd=root)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    if "skip" in result:
        pytest.skip(result["skip"])
    return result["ids"]


def _check_classic(tok, held_out: list, tmp_path) -> None:
    """tokenizer.json, .model and (read back by ubpe) GGUF of a fitted classic vocabulary:
    the target systems' ids are ubpe's ranked ids on every held-out document."""
    held_out = [doc for doc in held_out if tok.covers(doc)]
    assert held_out
    expected = [_ranked(tok, doc) for doc in held_out]
    texts = [as_text(tok, doc) for doc in held_out]
    tok.save(tmp_path / "tokenizer.json")
    differ = _differences(expected, _hf_ids(tmp_path / "tokenizer.json", texts), texts)
    assert not differ, f"tokenizers: {len(differ)}/{len(texts)} differ, first {differ[0]!r}"
    tok.save(tmp_path / "m.model")
    processor = spm.SentencePieceProcessor(model_file=str(tmp_path / "m.model"))
    differ = _differences(expected, processor.encode(texts), texts)
    assert not differ, f"sentencepiece: {len(differ)}/{len(texts)} differ, first {differ[0]!r}"
    back = ubpe.load(tmp_path / "tokenizer.json")  # the "ubpe" section: the very model
    assert back.variant == "classic" and back.tokens_mapper == tok.tokens_mapper


def test_classic_dna_in_tokenizers_and_sentencepiece(tmp_path):
    train = _chunks(_dataset("dna", "train", 200_000), 400, 500)
    tok = UBPEClassic(alphabet=sorted({c for doc in train for c in doc}), n_tokens=300)
    tok.fit(train, quiet=True)
    _check_classic(tok, _chunks(_dataset("dna", "heldout", 60_000), 300, 200), tmp_path)


def test_classic_midi_remi_ids_in_tokenizers_and_sentencepiece(tmp_path):
    songs = _midi_ids(tmp_path)
    if len(songs) < 4:
        pytest.skip("fewer than 4 readable MIDI files")
    split = max(1, len(songs) // 4)
    train, held_out = songs[split:], songs[:split]
    tok = UBPEClassic(alphabet=sorted({i for song in songs for i in song}), n_tokens=400)
    tok.fit(train, quiet=True)
    _check_classic(tok, held_out, tmp_path)


def test_classic_integer_series_in_tokenizers_and_sentencepiece(tmp_path):
    train = [list(map(int, doc)) for doc in _chunks(_dataset("timeseries", "train", 200_000), 200, 400)]
    held_out = [list(map(int, doc)) for doc in _chunks(_dataset("timeseries", "heldout", 60_000), 200, 200)]
    tok = UBPEClassic(alphabet=sorted({s for doc in train + held_out for s in doc}), n_tokens=300)
    tok.fit(train, quiet=True)
    _check_classic(tok, held_out, tmp_path)


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_classic_any_alphabet_round_trips(tmp_path_factory, data):
    kind = data.draw(st.sampled_from(["chars", "ints", "tuples"]))
    size = data.draw(st.integers(2, 6))
    # characters include a space and sentencepiece's "▁"; ints and tuples go through code points
    alphabet = {"chars": list("ab c\u2581x")[:size], "ints": list(range(100, 100 + size)),
                "tuples": [(i, -i) for i in range(size)]}[kind]
    docs = data.draw(st.lists(st.lists(st.sampled_from(alphabet), min_size=1, max_size=30), min_size=2, max_size=8))
    if kind == "chars":
        docs = ["".join(doc) for doc in docs]
    tok = UBPEClassic(alphabet=alphabet, n_tokens=len(alphabet) + data.draw(st.integers(1, 12)))
    try:
        tok.fit(docs, quiet=True)
    except ubpe.errors.UBPEError:
        return
    folder = tmp_path_factory.mktemp("classic")
    try:
        _check_classic(tok, docs, folder)
    except CannotWrite as refusal:  # one piece under two ids: refused by both formats, said why
        assert "several ids" in str(refusal)


def test_classic_encoder_agreement():
    """Not asserted equal: how often 0.3.0's batched classic encoder and the merge-list rule
    agree on held-out DNA (reported; the writers' ids are the ranked ones)."""
    train = _chunks(_dataset("dna", "train", 100_000), 400, 250)
    tok = UBPEClassic(alphabet=sorted({c for doc in train for c in doc}), n_tokens=200)
    tok.fit(train, quiet=True)
    held = [d for d in _chunks(_dataset("dna", "heldout", 30_000), 300, 100) if tok.covers(d)]
    same = sum(tok.encode(doc)[0][0] == _ranked(tok, doc) for doc in held)
    assert 0 <= same <= len(held)
    print(f"classic == ranked on {same}/{len(held)} held-out DNA chunks")


# -- imported families -------------------------------------------------------------------------------


def _texts() -> list[str]:
    rng = random.Random(5)
    lines = varied_texts(n_random=60)
    return [*TRICKY, *rng.sample(lines, min(600, len(lines)))]


def _spm_model(tmp_path, **config) -> object:
    lines = text_lines(limit=4000, split="train") + text_lines("udhr", limit=2000, split="train")
    out = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(lines), model_writer=out, character_coverage=0.995,
                                   num_threads=1, minloglevel=2, **config)
    path = tmp_path / "source.model"
    path.write_bytes(out.getvalue())
    return ubpe.load(path)


def _check_hf(tok, tmp_path, texts: list[str], *, parse_special: bool = False) -> None:
    tok.save(tmp_path / "tokenizer.json")
    expected = [tok.encode(text, parse_special=True) if parse_special else tok.encode(text) for text in texts]
    differ = _differences(expected, _hf_ids(tmp_path / "tokenizer.json", texts), texts)
    assert not differ, f"tokenizers: {len(differ)}/{len(texts)} differ, first {differ[0]!r}"


def _check_spm(tok, tmp_path, texts: list[str]) -> None:
    tok.save(tmp_path / "out.model")
    processor = spm.SentencePieceProcessor(model_file=str(tmp_path / "out.model"))
    differ = _differences([tok.encode(t) for t in texts], processor.encode(texts), texts)
    assert not differ, f"sentencepiece: {len(differ)}/{len(texts)} differ, first {differ[0]!r}"


SPM_CONFIGS = {
    "bpe": dict(model_type="bpe", vocab_size=1200),
    "bpe-bytes": dict(model_type="bpe", vocab_size=2000, byte_fallback=True),
    "unigram": dict(model_type="unigram", vocab_size=1200),
    "unigram-bytes-identity": dict(model_type="unigram", vocab_size=2000, byte_fallback=True,
                                   normalization_rule_name="identity", remove_extra_whitespaces=False),
}


def _without_control_text(tok, texts: list[str]) -> list[str]:
    """sentencepiece reads ``<s>`` in a text as characters; tokenizers matches a special
    token anywhere: texts holding a control piece's text are checked by `test_special_tokens`."""
    controls = [tok.id_to_piece(i) for i in range(tok.n_vocab) if int(tok.token_types[i]) == 3]
    return [t for t in texts if not any(c in t for c in controls)]


@pytest.mark.parametrize("config", list(SPM_CONFIGS))
def test_sentencepiece_model_to_tokenizer_json_and_back(config, tmp_path):
    tok = _spm_model(tmp_path, **SPM_CONFIGS[config])
    texts = _without_control_text(tok, _texts())
    _check_hf(tok, tmp_path, texts)
    _check_spm(tok, tmp_path, texts)


# llama-bpe (128k tokens, ~2 s) runs with the long tests; gpt-2 covers the byte-level case here
@pytest.mark.parametrize("name", ["llama-spm", "gpt-2", pytest.param("llama-bpe", marks=pytest.mark.long)])
def test_gguf_to_tokenizer_json(name, tmp_path):
    tok = ubpe.load(vocab_path(name))
    _check_hf(tok, tmp_path, _texts(), parse_special=True)


@pytest.mark.long  # the heaviest single-family conversions (3-5 s each): CI's long lane
def test_gguf_t5_to_tokenizer_json(tmp_path):
    """llama.cpp's UGM drops the spaces between two control tokens it parses; tokenizers keeps
    them: the texts holding a control token's text are left out (as for sentencepiece)."""
    tok = ubpe.load(vocab_path("nomic-bert-moe"))
    _check_hf(tok, tmp_path, _without_control_text(tok, _texts()))


@pytest.mark.long  # the heaviest single-family conversions (3-5 s each): CI's long lane
def test_gguf_t5_to_sentencepiece_model(tmp_path):
    tok = ubpe.load(vocab_path("nomic-bert-moe"))
    _check_spm(tok, tmp_path, _without_control_text(tok, _texts()))


def test_gguf_llama_to_sentencepiece_model(tmp_path):
    tok = ubpe.load(vocab_path("llama-spm"))
    texts = [t for t in _without_control_text(tok, _texts()) if not t.startswith(" ") and "  " not in t]
    _check_spm(tok, tmp_path, texts)


@pytest.mark.long  # the heaviest single-family conversions (3-5 s each): CI's long lane
def test_tekken_to_tokenizer_json_and_tiktoken(tmp_path):
    from vocab_corpora import MISTRAL_PACKAGE, shipped_files

    tok = ubpe.load(shipped_files(MISTRAL_PACKAGE, "**/tekken*.json")[0])
    # tekken reads its special tokens in a text as text; tokenizers matches them anywhere
    texts = [t for t in _texts() if not any(special in t for special in tok.special_tokens)]
    _check_hf(tok, tmp_path, texts)
    tiktoken = pytest.importorskip("tiktoken")
    tok.save(tmp_path / "t.tiktoken")
    ranks = {piece: rank for piece, rank in tok.mergeable_ranks().items()}
    encoding = tiktoken.Encoding("t", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={})
    assert [encoding.encode_ordinary(t) for t in texts] == [tok.encode(t) for t in texts]


def _hf_source(name: str):
    """An HF tokenizer.json of every family ubpe reads from one (a builder of the HF tests)."""
    import hf_builders
    import hf_composed_builders

    if name == "bert":
        return hf_builders.bert()
    if name.startswith("unigram-"):
        return hf_composed_builders.BUILDERS[name.removeprefix("unigram-")]()
    if name.startswith("wordlevel-"):
        return hf_composed_builders.WORDLEVEL_BUILDERS[name.removeprefix("wordlevel-")]()
    return hf_builders.BUILDERS[name]()


@pytest.mark.parametrize("name", ["gpt2", "roberta", "clip", "trained-metaspace", "llama2", "bert", "unigram-t5",
                                  "unigram-trained-bytes", "wordlevel-bert-like", "wordlevel-metaspace"])
def test_hf_families_to_tokenizer_json_again(name, tmp_path):
    """Every family read from a tokenizer.json (byte-level, suffix, character BPE, WordPiece,
    Unigram, WordLevel) written as one: ``tokenizers`` on the written file gives ubpe's ids,
    with and without the post-processor's tokens, and ubpe reads the file back as the same
    model."""
    source = tmp_path / "source" / "tokenizer.json"
    source.parent.mkdir()
    _hf_source(name).save(str(source))
    tok = ubpe.load(source)
    assert why_not(tok.variant, "hf") is None, tok.variant
    texts = _texts()
    tok.save(tmp_path / "tokenizer.json")
    assert _hf_ids(tmp_path / "tokenizer.json", texts) == _hf_ids(source, texts)  # the model, whole
    if name == "clip":  # a reader's gap, not the writer's: CLIP's word regex splits some letters of
        # recent Unicode versions (U+18F87...) otherwise in Oniguruma's tables than in `regex`'s
        texts = [t for t in texts if max(map(ord, t), default=0) < 0x10000]
    _check_hf(tok, tmp_path, texts)
    written = tokenizers.Tokenizer.from_file(str(tmp_path / "tokenizer.json"))
    framed = [e.ids for e in written.encode_batch(texts[:200], add_special_tokens=True)]
    assert framed == [tok.encode(t, add_special=True) for t in texts[:200]]
    back = ubpe.load(tmp_path / "tokenizer.json")
    assert back.variant == tok.variant and back.encode_batch(texts) == tok.encode_batch(texts)


@pytest.mark.long  # the heaviest single-family conversions (3-5 s each): CI's long lane
def test_gguf_gemma4_to_tokenizer_json(tmp_path):
    """llama.cpp's gemma4 (character merges within lines, byte fallback) as a tokenizer.json:
    ``tokenizers`` gives ubpe's (llama.cpp's) ids, on held-out text and on texts of newline
    runs, markup and sampled tokens of the vocabulary."""
    tok = ubpe.load(vocab_path("gemma-4"))
    rng = random.Random(1)
    alphabet = [*"ab \n\t.é\u2581<>", "\n\n", "  ", "<start_of_turn>", "<unk>", "user", "\U0001F999"]
    texts = [*_texts(), *("\n" * k for k in range(1, 45)),
             *("".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30))) for _ in range(500)),
             *(tok.id_to_piece(i) for i in rng.sample(range(tok.n_vocab), 500))]
    _check_hf(tok, tmp_path, texts, parse_special=True)


@pytest.mark.parametrize("variant", ["gguf:bert", "clip"])
def test_families_with_their_own_text_rules_are_refused_saying_why(variant, tmp_path):
    from vocab_corpora import shipped_file

    path = vocab_path("bert-bge") if variant == "gguf:bert" else shipped_file(
        "open-clip-torch", "*/src/open_clip/bpe_simple_vocab_16e6.txt.gz")
    tok = ubpe.load(path)
    for name in ("tokenizer.json", "m.model"):
        with pytest.raises(CannotWrite, match="normalizer") as refusal:
            tok.save(tmp_path / name)
        assert "\n" not in str(refusal.value) and not (tmp_path / name).exists()


@pytest.mark.parametrize("pattern", ["gpt2", "llama3"])
def test_fitted_bytelevel_everywhere(pattern, tmp_path):
    train = text_lines(limit=3000, split="train") + text_lines("udhr", limit=1000, split="train")
    tok = ByteLevelBPE().fit(train, n_tokens=600, pattern=pattern, quiet=True)
    texts = _texts()
    _check_hf(tok, tmp_path, texts)
    tok.save(tmp_path / "m.gguf")
    back = ubpe.load(tmp_path / "m.gguf")
    assert [back.encode(t) for t in texts] == [tok.encode(t) for t in texts]


@pytest.mark.parametrize("pattern", ["cl100k", "o200k"])
def test_fitted_bytelevel_with_tiktokens_newer_patterns_in_tokenizers(pattern, tmp_path):
    """cl100k's possessive interval ``\\p{N}{1,3}+`` is written as the atomic group
    ``(?>\\p{N}{1,3})``: Oniguruma reads ``{1,3}+`` as the interval repeated and took whole digit
    runs into one piece (``"1423"`` for ``"142"``, ``"3"``). `tokenizers` gives ubpe's ids on held-out
    text and on digit runs of every length; ubpe reads the file back to the same ids."""
    train = text_lines(limit=3000, split="train") + [f"{n} {n * 7919}" for n in range(2000)]
    tok = ByteLevelBPE().fit(train, n_tokens=600, pattern=pattern, quiet=True)
    rng = random.Random(3)
    texts = [*_texts(), *("".join(rng.choice("0123456789 'aZ") for _ in range(rng.randint(1, 24)))
                          for _ in range(500)), *("7" * k for k in range(1, 12))]
    _check_hf(tok, tmp_path, texts)
    back = ubpe.load(tmp_path / "tokenizer.json")
    assert [back.encode(t) for t in texts] == [tok.encode(t) for t in texts]


# -- the conversion table: every cell -------------------------------------------------------------------


def test_conversion_table_is_built_from_the_registry():
    table = conversion_table()
    lines = table.splitlines()
    assert len(lines) > 3 + len(FAMILIES) + len(set(CONDITIONS.values()))
    assert all(line.count("|") == len(TARGETS) + 2 for line in lines[: 2 + len(FAMILIES)])
    assert all(target in lines[0] for target in TARGETS)
    assert set(TARGETS) <= set(ubpe.io.supported("write"))
    print("\n" + table)


def _samples(tmp_path) -> dict:
    train = text_lines(limit=1500, split="train")
    classic = UBPEClassic(alphabet=sorted({c for line in train for c in line}), n_tokens=300)
    classic.fit(train, quiet=True)
    universal = ubpe.UBPE(alphabet=sorted({c for line in train for c in line}), n_tokens=300)
    universal.fit(train, quiet=True)
    samples = {"classic": classic, "universal": universal,
               "bytelevel": ByteLevelBPE().fit(train, n_tokens=400, pattern="gpt2", quiet=True),
               "spm:bpe": _spm_model(tmp_path, model_type="bpe", vocab_size=1600, normalization_rule_name="identity",
                                     remove_extra_whitespaces=False),
               "spm:unigram": _spm_model(tmp_path, model_type="unigram", vocab_size=1600)}
    for name, variant in (("llama-spm", "gguf:llama"), ("gpt-2", "gguf:gpt2"), ("bert-bge", "gguf:bert"),
                          ("nomic-bert-moe", "gguf:t5")):
        samples[variant] = ubpe.load(vocab_path(name))
    return samples


def _ids_in_target(path, target: str, texts: list[str], tok) -> list[list[int]]:
    """The ids of ``texts`` in the target's own system: tokenizers, sentencepiece, tiktoken;
    ubpe for its own formats, minbpe and GGUF (ubpe's GGUF reader is llama.cpp's ids:
    ``test_llama_vocabs.py``; llama.cpp itself: ``test_writers_llama.py``)."""
    if target == "hf":
        return _hf_ids(path, texts)
    if target == "sentencepiece":
        return spm.SentencePieceProcessor(model_file=str(path)).encode(texts)
    if target == "tiktoken":
        tiktoken = pytest.importorskip("tiktoken")
        ranks = {}
        import base64

        for line in path.read_text().splitlines():
            piece, rank = line.split()
            ranks[base64.b64decode(piece)] = int(rank)
        encoding = tiktoken.Encoding("written", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens={})
        return [encoding.encode_ordinary(t) for t in texts]
    back = ubpe.load(path, pattern=getattr(tok, "pattern", None)) if target == "minbpe" else ubpe.load(path)
    return [_own_ids(back, back.variant, target, t) for t in texts]


def _own_ids(tok, variant: str, target: str, text: str) -> list[int]:
    if variant == "classic" and target not in ("ubpe", "ubpe030"):
        return _ranked(tok, text)
    if variant in ("classic", "universal"):
        return tok.encode(text)[0][0]
    if variant.startswith("gguf") and target == "hf":  # tokenizers matches control tokens in text
        return tok.encode(text, parse_special=True)
    return tok.encode(text)


@pytest.mark.long  # every family x every target (~7 s); each family's own writer tests stay in the README's lane
def test_every_cell_writes_and_round_trips_or_refuses(tmp_path):
    """Every family with a sample x every target: a ✓ cell writes a file that its own system
    loads and that gives ubpe's ids; every other cell refuses with the table's reason, and
    ``ubpe convert`` prints it and exits 2."""
    from ubpe.cli import main

    names = {"hf": "tokenizer.json", "sentencepiece": "x.model", "gguf": "x.gguf", "tiktoken": "x.tiktoken",
             "ubpe": "x.json", "ubpe030": "x030.json", "minbpe": "x.minbpe"}
    texts = ["Hello world", "the LORD said unto them,  twice", "", "Æsop's fables: 12 of 40"]
    checked = 0
    for variant, tok in _samples(tmp_path).items():
        for target in TARGETS:
            out = tmp_path / variant.replace(":", "-") / target / names[target]
            out.parent.mkdir(parents=True)
            reason = why_not(variant, target)
            if reason is None:
                ubpe.io.save(tok, out, target)
                docs = [t for t in texts if tok.covers(t)]
                want = [_own_ids(tok, variant, target, t) for t in docs]
                assert _ids_in_target(out, target, docs, tok) == want, (variant, target)
                checked += 1
            else:
                with pytest.raises(CannotWrite, match="cannot hold"):
                    ubpe.io.save(tok, out, target)
                assert not out.exists()
        source = tmp_path / f"{variant.replace(':', '-')}.src"
        if variant in ("classic", "universal", "bytelevel"):
            tok.save(source, format="ubpe")
            for target in TARGETS:
                out = tmp_path / "cli" / variant.replace(":", "-") / target / names[target]
                out.parent.mkdir(parents=True)
                code = main(["convert", str(source), str(out), "--to", target, "--quiet"])
                # a conditional cell may refuse a model (our format keeps no ByteLevelBPE merges)
                expected = 0 if why_not(variant, target) is None else 2
                assert code == expected or ((variant, target) in CONDITIONS and code == 2), (variant, target, code)
    assert checked >= 15


def test_save_infers_the_format_and_keeps_the_mode(tmp_path):
    train = text_lines(limit=500, split="train")
    tok = UBPEClassic(alphabet=sorted({c for line in train for c in line}), n_tokens=200)
    tok.fit(train, quiet=True)
    path = tmp_path / "tokenizer.json"
    path.write_text("old")
    os.chmod(path, 0o640)
    tok.save(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
    document = json.loads(path.read_text(encoding="utf-8"))
    assert document["model"]["type"] == "BPE" and document["model"]["ubpe"]["format_version"] == 1
    tok.save(tmp_path / "m.model")
    assert ubpe.io.detect(tmp_path / "m.model") == "sentencepiece"
    tok.save(tmp_path / "m.gguf")
    assert ubpe.io.detect(tmp_path / "m.gguf") == "gguf"
    with pytest.raises(CannotWrite, match="byte-level"):
        tok.save(tmp_path / "m.tiktoken")
    assert not (tmp_path / "m.tiktoken").exists()


@pytest.mark.parametrize("format", ["ubpe", "ubpe030", "hf", "sentencepiece", "gguf"])
def test_saving_to_a_folder_is_our_error(format, tmp_path):
    from ubpe.cli import main

    train = text_lines(limit=300, split="train")
    tok = UBPEClassic(alphabet=sorted({c for line in train for c in line}), n_tokens=120)
    tok.fit(train, quiet=True)
    folder = tmp_path / "out"
    folder.mkdir()
    with pytest.raises(ubpe.errors.InvalidParameterError, match="is a directory"):
        tok.save(folder, format=format)
    with pytest.raises(ubpe.errors.InvalidParameterError, match="is a directory"):
        ubpe.save(tok, folder, format=None)
    assert folder.is_dir() and list(tmp_path.iterdir()) == [folder] and not list(folder.iterdir())
    tok.save(tmp_path / "m.json")  # the command line says so before any work (exit 1, as its other path checks)
    assert main(["convert", str(tmp_path / "m.json"), str(folder), "--to", format, "--quiet"]) == 1
    assert folder.is_dir() and not list(folder.iterdir())


def test_convert_refuses_in_one_line(tmp_path):
    train = text_lines(limit=300, split="train")
    tok = ubpe.UBPE(alphabet=sorted({c for line in train for c in line}), n_tokens=120)
    tok.fit(train, quiet=True)
    tok.save(tmp_path / "u.json")
    done = subprocess.run([sys.executable, "-m", "ubpe", "convert", str(tmp_path / "u.json"),
                           str(tmp_path / "tokenizer.json")], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "tf-idf top-n" in done.stderr
    assert not (tmp_path / "tokenizer.json").exists()


_WRITTEN: dict = {}


def _written(name: str, tmp_path_factory):
    """A GGUF vocabulary converted by ``ubpe convert`` to tokenizer.json: (ubpe's model, the
    ``tokenizers`` tokenizer of the written file), made once."""
    if name not in _WRITTEN:
        from ubpe.cli import main

        out = tmp_path_factory.mktemp("convert") / "tokenizer.json"
        assert main(["convert", str(vocab_path(name)), str(out), "--quiet"]) == 0
        _WRITTEN[name] = (ubpe.load(vocab_path(name)), tokenizers.Tokenizer.from_file(str(out)))
    return _WRITTEN[name]


@pytest.mark.parametrize("name", ["llama-spm", "gpt-2"])
@settings(max_examples=150, deadline=None)
@given(text=st.text(st.characters(blacklist_categories=("Cs",)), max_size=60))
def test_converted_gguf_on_random_text(name, text, tmp_path_factory):
    tok, reference = _written(name, tmp_path_factory)
    assert reference.encode(text, add_special_tokens=False).ids == tok.encode(text, parse_special=True)


def test_bad_models_are_refused_with_our_errors(tmp_path):
    from ubpe.errors import NotFittedError

    for name in ("tokenizer.json", "m.model", "m.gguf"):
        with pytest.raises(NotFittedError):
            UBPEClassic(alphabet="ab", n_tokens=5).save(tmp_path / name)
    custom = ByteLevelBPE().fit(["ab ab"] * 5, n_tokens=258, pattern=r"\w+|\s+", quiet=True)
    with pytest.raises(CannotWrite, match="no pre-tokenizer for this model's pattern"):
        custom.save(tmp_path / "m.gguf")
    assert list(tmp_path.iterdir()) == []
