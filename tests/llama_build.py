"""llama.cpp's tokenizer, compiled from the pinned llama-cpp-python sdist, for tests that check
a file against llama.cpp itself (the ``long`` lane).

`tokenize_many` returns the program of ``tests/fixtures/llama_tokenize_many.cpp`` linked to
llama.cpp built as ``tests/fixtures/make_llama_expected.py`` describes (CPU only, the library
alone), built once into ``$XDG_CACHE_HOME/ubpe/llama-cpp-build`` (``~/.cache`` by default: the data
cache is only read) or the program named by ``UBPE_LLAMA_TOKENIZE``; the test is skipped when the sdist, cmake, ninja or a C++ compiler is
missing. `llama_ids` runs it: llama.cpp's ids of texts, without BOS/EOS and with control
tokens read as text.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROGRAM = HERE / "fixtures" / "llama_tokenize_many.cpp"
SDIST_PACKAGE = "llama-cpp-python"
BUILD_FOLDER = "llama-cpp-build"
CMAKE_OPTIONS = ("-DCMAKE_BUILD_TYPE=Release", "-DLLAMA_CURL=OFF", "-DGGML_NATIVE=OFF", "-DGGML_OPENMP=OFF",
                 "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_TOOLS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
                 "-DLLAMA_BUILD_SERVER=OFF", "-DLLAMA_BUILD_APP=OFF", "-DLLAMA_BUILD_COMMON=OFF",
                 "-DLLAMA_OPENSSL=OFF")


def tokenize_many() -> Path:
    """The compiled ``llama_tokenize_many`` program (built on first use; see the module docstring)."""
    given = os.environ.get("UBPE_LLAMA_TOKENIZE")
    if given:
        return Path(given)
    from experiments.datasets.sources import archive_path
    from ubpe.lab.datasets import DataNotInstalledError

    folder = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ubpe" / BUILD_FOLDER
    program = folder / "tokenize_many"
    if program.exists():
        return program
    missing = [tool for tool in ("cmake", "ninja", "g++") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"building llama.cpp needs {', '.join(missing)}")
    try:
        sdist = archive_path(SDIST_PACKAGE)
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    source = folder / "src"
    with tarfile.open(sdist) as archive:
        members = [m for m in archive.getmembers() if "/vendor/llama.cpp/" in m.name]
        archive.extractall(source, members=members, filter="data")
    llama = next(source.glob("*/vendor/llama.cpp"))
    build = folder / "build"
    subprocess.run(["cmake", "-S", str(llama), "-B", str(build), "-G", "Ninja", *CMAKE_OPTIONS],
                   check=True, capture_output=True)
    subprocess.run(["ninja", "-C", str(build), "llama"], check=True, capture_output=True)
    subprocess.run(["g++", "-O2", "-std=c++17", str(PROGRAM), f"-I{llama / 'include'}", f"-I{llama / 'ggml' / 'include'}",
                    f"-L{build / 'bin'}", "-lllama", "-lggml", "-lggml-base", f"-Wl,-rpath,{build / 'bin'}",
                    "-o", str(program)], check=True, capture_output=True)
    return program


def llama_ids(model: Path, texts: list[str]) -> list[list[int]]:
    """llama.cpp's ids of every text (``add_special=False, parse_special=False``)."""
    from fixtures.make_llama_expected import run

    return [ids for ids, _ in run(str(tokenize_many()), model, texts, 0)]
