"""llama.cpp's own WPM (BERT) tokenizer, compiled for the tests from the pinned llama-cpp-python
sdist: ``src/unicode.cpp`` and ``src/unicode-data.cpp`` as they are, and the
``llm_tokenizer_wpm_session`` struct cut out of ``src/llama-vocab.cpp`` verbatim, behind a
small stand-in for ``llama_vocab`` that answers the four calls it makes (``text_to_token``,
``max_token_len``, ``token_unk``, ``get_normalizer_opts``). The rest of ``llama_tokenize``
around it (cutting user-defined tokens out of the text, ``[CLS]``/``[SEP]``) does nothing for a
vocabulary without user-defined tokens and ``add_special=false``, which is what is compared.

Needs a C++17 compiler (``c++``); tests skip without one (CI has it: it builds the kernels).
"""

from __future__ import annotations

import shutil
import struct
import subprocess
import tarfile
from pathlib import Path

import pytest

from ubpe.lab.datasets import DataNotInstalledError
from experiments.datasets.sources import archive_path

from vocab_corpora import LLAMA_CPP_PACKAGE

SOURCES = ("unicode.cpp", "unicode.h", "unicode-data.cpp", "unicode-data.h", "llama-vocab.cpp")
SESSION_START = "struct llm_tokenizer_wpm_session {"

HARNESS = r"""
#include <algorithm>
#include <cassert>
#include <cstdint>
#include <cstdio>
#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

#include "unicode.h"

typedef int32_t llama_token;
#define LLAMA_TOKEN_NULL -1

struct llama_vocab {
    struct normalizer_options {
        bool lowercase = true;
        bool strip_accents = true;
    };
    normalizer_options opts;
    std::unordered_map<std::string, llama_token> token_to_id;
    int max_len = 0;
    llama_token unk = LLAMA_TOKEN_NULL;
    const normalizer_options & get_normalizer_opts() const { return opts; }
    int max_token_len() const { return max_len; }
    llama_token token_unk() const { return unk; }
    llama_token text_to_token(const std::string & text) const {
        auto found = token_to_id.find(text);
        return found == token_to_id.end() ? LLAMA_TOKEN_NULL : found->second;
    }
};

@SESSION@

static bool read_string(std::string & out) {
    uint32_t n;
    if (fread(&n, 4, 1, stdin) != 1) return false;
    out.resize(n);
    return n == 0 || fread(&out[0], 1, n, stdin) == n;
}

// stdin: lowercase, strip_accents, unk (int32 each), n tokens (uint32), the tokens, then texts,
// every string as a uint32 length and its bytes; stdout: one line of ids per text
int main() {
    llama_vocab vocab;
    int32_t header[3];
    uint32_t n;
    if (fread(header, 4, 3, stdin) != 3 || fread(&n, 4, 1, stdin) != 1) return 1;
    vocab.opts.lowercase = header[0];
    vocab.opts.strip_accents = header[1];
    vocab.unk = header[2];
    std::string text;
    for (uint32_t i = 0; i < n; ++i) {
        if (!read_string(text)) return 1;
        vocab.token_to_id[text] = i;
        vocab.max_len = std::max(vocab.max_len, (int) text.size());
    }
    llm_tokenizer_wpm_session session(vocab);
    while (read_string(text)) {
        std::vector<llama_token> ids;
        session.tokenize(text, ids);
        for (size_t i = 0; i < ids.size(); ++i) printf(i ? " %d" : "%d", ids[i]);
        printf("\n");
    }
    return 0;
}
"""


def _session_source(vocab_cpp: str) -> str:
    """The ``llm_tokenizer_wpm_session`` struct of ``llama-vocab.cpp``, verbatim."""
    start = vocab_cpp.index(SESSION_START)
    end = vocab_cpp.index("\n};\n", start) + len("\n};\n")
    return vocab_cpp[start:end]


def build(folder: Path) -> Path:
    """Compile the reference into ``folder``; skips the test without the sdist or a compiler."""
    compiler = shutil.which("c++") or shutil.which("g++")
    if compiler is None:
        pytest.skip("no C++ compiler to build llama.cpp's WPM tokenizer")
    try:
        archive = archive_path(LLAMA_CPP_PACKAGE)
    except DataNotInstalledError as exc:
        pytest.skip(str(exc))
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            parts = Path(member.name).parts
            if parts[-3:-1] == ("llama.cpp", "src") and parts[-1] in SOURCES:
                (folder / parts[-1]).write_bytes(tar.extractfile(member).read())
    missing = [name for name in SOURCES if not (folder / name).is_file()]
    assert not missing, f"{archive} lacks {missing}"
    session = _session_source((folder / "llama-vocab.cpp").read_text(encoding="utf-8"))
    (folder / "harness.cpp").write_text(HARNESS.replace("@SESSION@", session), encoding="utf-8")
    binary = folder / "wpm"
    subprocess.run([compiler, "-std=c++17", "-O1", "-o", str(binary), "harness.cpp", "unicode.cpp",
                    "unicode-data.cpp"], cwd=folder, check=True, capture_output=True, timeout=900)
    return binary


def tokenize(binary: Path, tokens: list[str], texts: list[str], unk: int, lowercase: bool = True,
             strip_accents: bool = True) -> list[list[int]]:
    """llama.cpp's WPM ids of every text (no special tokens)."""
    def packed(text: str) -> bytes:
        raw = text.encode("utf-8", "surrogateescape")
        return struct.pack("<I", len(raw)) + raw

    data = struct.pack("<iiiI", lowercase, strip_accents, unk, len(tokens))
    data += b"".join(map(packed, tokens)) + b"".join(map(packed, texts))
    done = subprocess.run([str(binary)], input=data, capture_output=True, check=True, timeout=600)
    lines = done.stdout.decode("ascii").split("\n")[:-1]
    assert len(lines) == len(texts)
    return [[int(t) for t in line.split()] for line in lines]
