"""Imported vocabularies: loading time and encoding speed beside the systems they come from.

    python benchmarks/bench_vocab.py            # a few minutes on one core

One process; one thread except the "all threads" columns (``encode_batch`` on one thread per
core, tiktoken's ``encode_ordinary_batch`` likewise). Needs ``experiments/install_data.sh`` (llama.cpp's vocabularies from
the llama-cpp-python sdist, and the prose datasets) and the ``[vocab]`` and ``[bench]`` extras.

* loading: ``ubpe.io.gguf.read`` of GPT-2 (50k), Llama 3 (128k), Qwen2 (152k), Llama SPM (32k);
* byte-level: our native encode of the GGUF vocabulary vs ``tiktoken.Encoding`` built from the
  same vocabulary (token bytes -> id as ranks; ids are checked to be equal), on the same text;
  ours cold (word cache emptied before each run) and warm;
* sentencepiece: BPE and unigram models trained on the train split, ours vs
  ``SentencePieceProcessor.encode`` on the same held-out lines (ids checked equal);
* ubpe's other encoders on the GPT-2 vocabulary.

Every number is the best of ``--repeats`` runs. Results go to ``results/benchmarks/vocab.md``.
"""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import platform
import sys
import time

from common import best_time, text_corpus

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / "benchmarks"
MB = 1_000_000
sys.path.insert(0, str(ROOT / "tests"))


def _load_rows(models, repeats: int) -> list[str]:
    from ubpe.io import gguf

    rows = []
    for name in ("gpt-2", "llama-bpe", "qwen2", "llama-spm"):
        path = models / f"ggml-vocab-{name}.gguf"
        seconds = best_time(lambda: gguf.read(path), repeats)
        rows.append(f"| {name} | {len(gguf.read_metadata(path)['tokenizer.ggml.tokens']):,} | {seconds:.2f} s |")
    return rows


def _bytelevel_rows(models, text: str, repeats: int) -> list[str]:
    import tiktoken

    from ubpe.bytelevel.patterns import PATTERNS
    from ubpe.io import gguf

    size = len(text.encode("utf-8")) / MB
    rows = []
    for name, pattern in (("gpt-2", "gpt2"), ("llama-bpe", "llama3")):
        tok = gguf.read(models / f"ggml-vocab-{name}.gguf")
        ranks = {raw: i for i, raw in enumerate(tok._raw) if raw is not None and tok.token_types[i] == 1}
        enc = tiktoken.Encoding(name, pat_str=PATTERNS[pattern], mergeable_ranks=ranks, special_tokens={})
        same = tok.encode(text) == enc.encode_ordinary(text)

        def cold():
            tok._kernel.clear_cache()
            tok.encode(text)

        ours_cold = size / best_time(cold, repeats)
        ours_warm = size / best_time(lambda: tok.encode(text), repeats)
        theirs = size / best_time(lambda: enc.encode_ordinary(text), repeats)
        docs = text.split("\n\n")
        threads = os.cpu_count() or 1
        ours_all = size / best_time(lambda: tok.encode_batch(docs, threads=threads), repeats)
        theirs_all = size / best_time(lambda: enc.encode_ordinary_batch(docs, num_threads=threads), repeats)
        rows.append(f"| {name} | {ours_cold:.1f} | {ours_warm:.1f} | {theirs:.1f} | "
                    f"{ours_cold / theirs:.2f}x | {ours_all:.1f} | {theirs_all:.1f} | {same} |")
    return rows


def _spm_rows(train: list[str], lines: list[str], repeats: int) -> list[str]:
    import sentencepiece as spm

    from ubpe.io import sentencepiece as spm_io

    size = sum(len(line.encode("utf-8")) for line in lines) / MB
    rows = []
    for kind in ("bpe", "unigram"):
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=out, model_type=kind,
                                       vocab_size=8000, num_threads=1, minloglevel=2)
        ours = spm_io.from_bytes(out.getvalue())
        theirs = spm.SentencePieceProcessor(model_proto=out.getvalue())
        same = sum(ours.encode(line) == theirs.encode(line) for line in lines)
        ours_speed = size / best_time(lambda: [ours.encode(line) for line in lines], repeats)
        theirs_speed = size / best_time(lambda: theirs.encode(lines, num_threads=1), repeats)
        rows.append(f"| {kind} | {ours_speed:.2f} | {theirs_speed:.2f} | {ours_speed / theirs_speed:.2f}x | "
                    f"{same}/{len(lines)} |")
    return rows


def _encoder_rows(models, text: str, repeats: int) -> list[str]:
    from ubpe.io import gguf

    tok = gguf.read(models / "ggml-vocab-gpt-2.gguf")
    size = len(text.encode("utf-8")) / MB
    rows = []
    for encoder in ("native", "ranked", "fewest", "longest_prefix", "tfidf", "dropout"):
        seconds = best_time(lambda: tok.encode_with(text, encoder), repeats)
        (ids, _), = tok.encode_with(text, encoder)
        rows.append(f"| {encoder} | {size / seconds:.2f} | {len(ids) / len(text):.4f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--encode-mb", type=float, default=5.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS / "vocab.md")
    args = parser.parse_args()

    from experiments.datasets import load
    from vocab_corpora import llama_cpp_models

    models = llama_cpp_models()
    text = "\n".join(text_corpus(int(args.encode_mb * MB)))
    train = [line for doc in load("shakespeare", "train", max_symbols=2_000_000).docs
             for line in doc.split("\n") if line.strip()]
    heldout = [line for doc in load("shakespeare", "heldout", max_symbols=float("inf")).docs
               for line in doc.split("\n") if line.strip()]
    lines = [
        f"# Imported vocabularies: loading and encoding speed ({time.strftime('%Y-%m-%d')})",
        "",
        f"Command: `python benchmarks/bench_vocab.py --encode-mb {args.encode_mb} --repeats {args.repeats}`; "
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, one thread unless told, "
        f"best of the repeats; load average at the start {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores "
        "(other processes share the machine: compare ratios, not absolute numbers).",
        "",
        "## Loading a GGUF vocabulary", "", "| vocabulary | tokens | load |", "|---|---|---|",
        *_load_rows(models, args.repeats),
        "", f"## Native byte-level encoding vs tiktoken (same vocabulary, {len(text) / MB:.1f} M characters of "
        "KJV + Shakespeare, MB/s)", "",
        "| vocabulary | ours cold | ours warm | tiktoken | cold / tiktoken | ours, all threads | "
        "tiktoken, all threads | same ids |", "|---|---|---|---|---|---|---|---|",
        *_bytelevel_rows(models, text, args.repeats),
        "", f"## sentencepiece models (8k pieces, {len(heldout):,} held-out Shakespeare lines, MB/s)", "",
        "| model | ours | sentencepiece | ratio | lines with equal ids |", "|---|---|---|---|---|",
        *_spm_rows(train, heldout, args.repeats),
        "", "## ubpe's encoders on the GPT-2 vocabulary (1 MB, MB/s)", "",
        "| encoder | MB/s | tokens per character |", "|---|---|---|",
        *_encoder_rows(models, text[: MB], args.repeats),
    ]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
