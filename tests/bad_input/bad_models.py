"""Small models of every family and their files in every format ubpe reads, shared by the
bad-input table (``test_bad_*.py``) and the fuzz lane (``test_fuzz.py``).

Everything is built in a few seconds from tiny corpora: no data set, no network."""

from __future__ import annotations

import io
from pathlib import Path
from types import SimpleNamespace

import ubpe
from ubpe.models.bytelevel import ByteLevelBPE
from ubpe.io import save

TEXTS = ["the cat sat on the mat", "the dog sat on the log", "a cat and a dog met on the mat"] * 4
INTS = [[i % 7, (i * 3) % 7, 1, 2, 1, 2] for i in range(30)]


def fitted_models() -> SimpleNamespace:
    """One fitted model per family ubpe fits: universal (text and ints), classic, byte-level."""
    universal = ubpe.UBPE(alphabet=sorted(set("".join(TEXTS))), n_tokens=24, break_tokens=" ")
    universal.fit(TEXTS, quiet=True)
    ints = ubpe.UBPE(alphabet=7, n_tokens=20)
    ints.fit(INTS, quiet=True)
    classic = ubpe.UBPEClassic(alphabet=sorted(set("".join(TEXTS))), n_tokens=24)
    classic.fit(TEXTS, quiet=True)
    bytelevel = ByteLevelBPE().fit(TEXTS, n_tokens=280, pattern="gpt2", quiet=True,
                                   special_tokens=["<|end|>"])
    return SimpleNamespace(u=universal, i=ints, c=classic, b=bytelevel)


def spm_model_bytes(model_type: str = "bpe") -> bytes:
    """A tiny sentencepiece ``.model`` (identity normalization: no 200 kB charsmap)."""
    import sentencepiece as spm

    out = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(TEXTS * 5), model_writer=out, vocab_size=40 if model_type == "bpe" else 20,
        model_type=model_type,
        normalization_rule_name="identity", minloglevel=2, num_threads=1)
    return out.getvalue()


def write_gguf(path: Path, bytelevel: ByteLevelBPE) -> None:
    """A tiny llama.cpp GGUF vocabulary of type gpt2 made from a ByteLevelBPE (HF's byte
    alphabet and merges, as llama.cpp stores them)."""
    import json

    import gguf

    hf_path = path.with_suffix(".hf.json")
    save(bytelevel, hf_path, format="hf")
    model = json.loads(hf_path.read_text(encoding="utf-8"))["model"]
    tokens = [piece for piece, _ in sorted(model["vocab"].items(), key=lambda item: item[1])]
    merges = [m if isinstance(m, str) else " ".join(m) for m in model["merges"]]
    writer = gguf.GGUFWriter(str(path), arch="llama")
    writer.add_tokenizer_model("gpt2")
    writer.add_tokenizer_pre("gpt-2")
    writer.add_token_list(tokens)
    writer.add_token_types([1] * len(tokens))
    writer.add_token_merges(merges)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    hf_path.unlink()


def model_files(folder: Path, models: SimpleNamespace) -> dict[str, Path]:
    """A file per format ubpe reads, all from ``models``: name -> path."""
    folder.mkdir(parents=True, exist_ok=True)
    files = {
        "ubpe": folder / "universal.json",
        "ubpe-bytelevel": folder / "bytelevel.json",
        "ubpe030": folder / "reference.json",
        "tiktoken": folder / "vocab.tiktoken",
        "minbpe": folder / "m.model",
        "hf": folder / "tokenizer.json",
        "gguf": folder / "vocab.gguf",
        "sentencepiece": folder / "spm.model",
    }
    save(models.u, files["ubpe"])
    save(models.b, files["ubpe-bytelevel"])
    save(models.c, files["ubpe030"], format="ubpe030")
    save(models.b, files["tiktoken"], format="tiktoken")
    save(models.b, files["minbpe"], format="minbpe")
    save(models.b, files["hf"], format="hf")
    write_gguf(files["gguf"], models.b)
    files["sentencepiece"].write_bytes(spm_model_bytes())
    return files
