"""Record llama.cpp's own ids for the GGUF vocabularies whose tokenizers llama.cpp's tests
cover thinly or not at all: ``t5`` (UGM: nomic-bert-moe), ``gemma4`` and ``bert`` (WPM:
bert-bge).

The reference is llama.cpp itself, built once from the pinned llama-cpp-python sdist (CPU only,
the library and a 60-line program, ``llama_tokenize_many.cpp`` beside this script, that loads a
vocabulary with ``vocab_only`` and runs ``llama_tokenize`` and ``llama_detokenize`` on texts)::

    tar xzf llama_cpp_python-0.3.36.tar.gz -C BUILD llama_cpp_python-0.3.36/vendor/llama.cpp
    cmake -S BUILD/llama_cpp_python-0.3.36/vendor/llama.cpp -B BUILD/build -G Ninja \\
        -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \\
        -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \\
        -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_OPENSSL=OFF
    nice ninja -C BUILD/build -j2 llama
    L=BUILD/llama_cpp_python-0.3.36/vendor/llama.cpp
    g++ -O2 -std=c++17 tests/golden/llama_tokenize_many.cpp -I$L/include -I$L/ggml/include \\
        -LBUILD/build/bin -lllama -lggml -lggml-base -Wl,-rpath,BUILD/build/bin -o BUILD/tokenize_many

then, from the repository root (the corpus needs the experiment datasets)::

    python tests/golden/make_llama_expected.py BUILD/tokenize_many

It writes ``tests/golden/llama_vocab_expected.json.gz``: the texts (`vocab_corpora.varied_texts`
plus `EXTRA_TEXTS`, which reach each tokenizer's special cases), and per vocabulary
llama.cpp's ids of every text (``add_special=False, parse_special=False``), its
``llama_detokenize(ids, remove_special=False, unparse_special=True)`` of them (null where it
gives the text back), and the same
for `SPECIAL_TEXTS` with ``add_special=True, parse_special=True``; the same for the variants of
nomic-bert-moe in `vocab_corpora.T5_VARIANTS` (written as GGUF files with the ``gguf`` package)
on a third of the texts, and for the tiny vocabularies of `vocab_corpora.SYNTHETIC` on theirs.
"""

from __future__ import annotations

import gzip
import json
import struct
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent.parent))

from vocab_corpora import SYNTHETIC, T5_VARIANTS, varied_texts, variant_metadata, vocab_path, write_gguf  # noqa: E402

OUT = HERE / "llama_vocab_expected.json.gz"
VOCABS = ("nomic-bert-moe", "gemma-4", "bert-bge")
#: variants of nomic-bert-moe (`vocab_corpora.T5_VARIANTS`) are checked on every VARIANT_STRIDE-th
#: text of the corpus and all of EXTRA_TEXTS
VARIANT_OF, VARIANT_STRIDE = "nomic-bert-moe", 3
ADD_SPECIAL, PARSE_SPECIAL = 1, 2
# texts that reach what the corpus may miss: unused pieces ([PAD…]) and control tokens as
# text, literal ▁, runs of newlines, tabs and spaces beyond any token, gemma4's user-defined
# tokens, characters no vocabulary has, unknown-run merging, NFKC and accents, BERT's
# punctuation and CJK splitting, long words
EXTRA_TEXTS = [
    "[PAD250001] [PAD250010]x", "<s> <pad> </s> <unk> <mask>", "<bos><eos><|turn>user<turn|>",
    "<|tool_call>call<tool_call|> <|\"|>q<|\"|>", "▁ ▁▁ a▁b ▁▁▁x", "\n" * 40 + "a" + "\n" * 31,
    "\t" * 33 + "x\t\t", " " * 40 + "y", "a\n\n\nb\r\n\r\nc", "\U000f0000\U000f0001 ok \U000e0100",
    "ﬁ ﬂ ① ² ｶﾞ Å Å é é", "Hello, World! (x) [y] {z} 'q' \"r\"", "中文字符和日本語のテキスト",
    "antidisestablishmentarianism" * 5, "a" * 120, "₂₃ ⅓ ㎏ ™ ℃", "e\u0301 o\u0308 n\u0303",
    "\u200b\u200c\u200d\ufeff zero width", "ⅰⅱⅲ ⓐⓑ 𝐀𝐁𝐂 𝔸𝔹", "x\u00a0y\u2003z\u3000w",
]
SPECIAL_TEXTS = ["Hello world", "", " ", "<s>hi</s>", "a <mask> b", "<bos>x<eos>", "<|turn>user\nhi<turn|>",
                 "[CLS] q [SEP] a [SEP]", "<|tool_call>f<tool_call|>"]


def run(tool: str, model: Path, texts: list[str], flags: int) -> list[tuple[list[int], str]]:
    """llama.cpp's ``(ids, detokenized text)`` for every text (see llama_tokenize_many.cpp)."""
    request = [struct.pack("<I", len(texts))]
    for text in texts:
        data = text.encode("utf-8")
        request.append(struct.pack("<BI", flags, len(data)) + data)
    done = subprocess.run([tool, str(model)], input=b"".join(request), capture_output=True, check=True)
    out, pos = [], 0
    reply = done.stdout
    for _ in texts:
        (n,) = struct.unpack_from("<I", reply, pos)
        ids = list(struct.unpack_from(f"<{n}i", reply, pos + 4))
        pos += 4 + 4 * n
        (m,) = struct.unpack_from("<I", reply, pos)
        out.append((ids, reply[pos + 4 : pos + 4 + m].decode("utf-8", "surrogateescape")))
        pos += 4 + m
    if pos != len(reply):
        raise SystemExit(f"{tool}: {len(reply) - pos} bytes left over")
    return out


def record_vocab(tool: str, model: Path, texts: list[str]) -> dict:
    plain = run(tool, model, texts, 0)
    special = run(tool, model, SPECIAL_TEXTS, ADD_SPECIAL | PARSE_SPECIAL)
    print(f"{model.name}: {len(texts)} texts, {sum(len(ids) for ids, _ in plain)} ids")
    return {"ids": [ids for ids, _ in plain],
            "decoded": [None if back == text else back for text, (_, back) in zip(texts, plain)],
            "special_ids": [ids for ids, _ in special], "special_decoded": [text for _, text in special]}


def main() -> None:
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    tool = sys.argv[1]
    texts = list(dict.fromkeys(varied_texts() + EXTRA_TEXTS))
    record = {"texts": texts, "special_texts": SPECIAL_TEXTS, "vocabs": {}}
    for name in VOCABS:
        record["vocabs"][name] = record_vocab(tool, vocab_path(name), texts)
    record["variant_texts"] = variant_texts = texts[::VARIANT_STRIDE] + EXTRA_TEXTS
    record["variants"] = {}
    with tempfile.TemporaryDirectory() as folder:
        for variant in T5_VARIANTS:
            path = Path(folder) / f"{VARIANT_OF}~{variant}.gguf"
            write_gguf(variant_metadata(VARIANT_OF, variant), path)
            record["variants"][variant] = record_vocab(tool, path, variant_texts)
        record["synthetic"] = {}
        for name, (metadata, synthetic_texts) in SYNTHETIC.items():
            path = Path(folder) / f"{name}.gguf"
            write_gguf(metadata(), path)
            record["synthetic"][name] = record_vocab(tool, path, synthetic_texts)
    with gzip.open(OUT, "wt", encoding="utf-8", compresslevel=9) as f:
        json.dump(record, f, ensure_ascii=False, separators=(",", ":"))
    print(f"wrote {OUT} ({OUT.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
