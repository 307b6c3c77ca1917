"""Where the tests of imported vocabularies find their files: llama.cpp's vocabulary tests
(extracted by ``experiments/install_data.sh`` from the llama-cpp-python sdist) and real text
from the experiment datasets. Tests skip, naming the installer, when the data is missing."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.datasets._base import DataNotInstalledError
from experiments.datasets.sources import extracted_dir

LLAMA_CPP_PACKAGE = "llama-cpp-python"
MODELS_GLOB = "*/vendor/llama.cpp/models"

#: llama.cpp's test vocabularies of the types ubpe imports, with llama.cpp's tests
GPT2_VOCABS = ("gpt-2", "llama-bpe", "falcon", "qwen2", "qwen35", "starcoder", "deepseek-llm",
               "deepseek-coder", "mpt", "refact", "command-r")
LLAMA_VOCABS = ("llama-spm", "phi-3")


def llama_cpp_models() -> Path:
    """The folder of llama.cpp's ``ggml-vocab-*`` files; skips the test if not installed."""
    try:
        root = extracted_dir(LLAMA_CPP_PACKAGE)
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    found = sorted(root.glob(MODELS_GLOB))
    if not found:
        pytest.skip(f"no llama.cpp models folder in {root}: run experiments/install_data.sh")
    return found[0]


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
