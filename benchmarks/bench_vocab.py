"""Imported vocabularies: loading time and encoding speed beside the systems they come from.

    python benchmarks/bench_vocab.py            # a few minutes on one core

One process; one thread except the "all threads" columns (``encode_batch`` on one thread per
core, tiktoken's ``encode_ordinary_batch`` likewise, sentencepiece's ``num_threads=-1``). Needs ``experiments/install_data.sh`` (llama.cpp's vocabularies from
the llama-cpp-python sdist, and the prose datasets) and the ``[vocab]`` and ``[bench]`` extras.

* loading: ``ubpe.io.gguf.read`` of GPT-2 (50k), Llama 3 (128k), Qwen2 (152k), Llama SPM (32k);
* byte-level: our native encode of the GGUF vocabulary vs ``tiktoken.Encoding`` built from the
  same vocabulary (token bytes -> id as ranks; ids are checked to be equal), on the same text;
  ours cold (word cache emptied before each run) and warm;
* sentencepiece: BPE and unigram models trained on the train split, our ``encode_batch`` vs
  ``SentencePieceProcessor.encode`` of the same held-out lines (a list), one thread on both
  sides and each at its default threading (ids checked equal);
* every family on every core: the GGUF files and sentencepiece models above, the GGUF
  files whose pre-tokenizer is a list of regexes (beside ``tokenizers`` running them) and
  ``.tiktoken`` files (whisper's, and GGUF ranks written as one, with four patterns), ``encode_batch``
  and ``encode_batch_to_numpy`` on all threads, cold (a fresh object's first pass) and warm,
  beside tiktoken's ``encode_ordinary_batch`` and HF ``tokenizers``' ``encode_batch`` (all
  threads) where they read the same vocabulary, ids checked equal;
* ubpe's other encoders on the GPT-2 vocabulary.

Every number is the best of ``--repeats`` runs; the rows compared run interleaved (one call of
each per round, a new seeded order each round: ``common.interleaved``). Results go to ``results/benchmarks/vocab.md``.
"""

from __future__ import annotations

import argparse
import io
import os
import pathlib
import platform
import sys
import time

from common import documents, EVERY_CORE_HEADER, best_time, every_core_rows, interleaved, provenance, text_corpus

ROOT = pathlib.Path(__file__).resolve().parent.parent
RESULTS = ROOT / "results" / "benchmarks"
MB = 1_000_000
PEERS = ("ubpe", "tiktoken", "sentencepiece", "tokenizers", "gguf", "numpy")
#: GGUF files whose llama.cpp pre-tokenizer is a list of regexes (ubpe_native._multipass), one per type
LIST_OF_REGEXES = ("aquila", "falcon", "starcoder", "deepseek-llm", "deepseek-coder")
sys.path.insert(0, str(ROOT / "tests"))


def _load_rows(models, repeats: int) -> list[str]:
    import ubpe
    from ubpe.io import gguf

    rows = []
    for name in ("gpt-2", "llama-bpe", "qwen2", "llama-spm"):
        path = models / f"ggml-vocab-{name}.gguf"
        ubpe.load(path)  # warm-up: imports, page cache
        seconds = best_time(lambda: ubpe.load(path), repeats)
        rows.append(f"| {name} | {len(gguf.read_metadata(path)['tokenizer.ggml.tokens']):,} | {seconds:.2f} s |")
    return rows


def _bytelevel_rows(models, text: str, repeats: int) -> list[str]:
    import tiktoken

    from ubpe.text.patterns import PATTERNS
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

        docs = documents(text)
        threads = os.cpu_count() or 1
        ours_cold, ours_warm, theirs, ours_all, theirs_all = (size / t for t in interleaved([
            cold, lambda: tok.encode(text), lambda: enc.encode_ordinary(text),
            lambda: tok.encode_batch(docs, threads=threads),
            lambda: enc.encode_ordinary_batch(docs, num_threads=threads)], repeats))
        rows.append(f"| {name} | {ours_cold:.1f} | {ours_warm:.1f} | {theirs:.1f} | "
                    f"{ours_cold / theirs:.2f}x | {ours_all:.1f} | {theirs_all:.1f} | "
                    f"{ours_all / theirs_all:.2f}x | {same} |")
    return rows


def _spm_rows(train: list[str], lines: list[str], repeats: int) -> list[str]:
    """Ours (``encode_batch``) vs ``SentencePieceProcessor.encode`` of the list, one thread
    on both sides, then each at its default (ours: one thread per core; sentencepiece's
    ``num_threads=-1``)."""
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
        want = theirs.encode(lines, num_threads=1)  # also the warm-up
        got = ours.encode_batch(lines, threads=1)
        same = sum(a == b for a, b in zip(got, want))
        if ours.encode_batch(lines) != got or [ours.encode(line) for line in lines[:2000]] != got[:2000]:
            raise SystemExit(f"{kind}: encode_batch on all threads or encode per line gives other ids")
        ours_one, theirs_one, ours_all, theirs_all, ours_lines = (size / t for t in interleaved([
            lambda: ours.encode_batch(lines, threads=1), lambda: theirs.encode(lines, num_threads=1),
            lambda: ours.encode_batch(lines), lambda: theirs.encode(lines),
            lambda: [ours.encode(line) for line in lines]], repeats))
        rows.append(f"| {kind} | {ours_one:.2f} | {theirs_one:.2f} | {ours_one / theirs_one:.2f}x | "
                    f"{ours_all:.2f} | {theirs_all:.2f} | {ours_all / theirs_all:.2f}x | {ours_lines:.2f} | "
                    f"{same}/{len(lines)} |")
    return rows


def _every_core_rows(models, docs: list[str], train: list[str], repeats: int) -> list[str]:
    """Every file this benchmark loads, on all threads, cold and warm (`common.every_core_rows`):
    the GGUF byte-level vocabularies beside tiktoken (same ranks and regex) and HF
    ``tokenizers`` (the same vocabulary and merges as a ``tokenizer.json``: `hf_builders`),
    Llama SPM beside ``tokenizers`` (Llama 2's ``tokenizer.json``), the GGUF files whose
    llama.cpp pre-tokenizer is a list of regexes beside ``tokenizers`` running those regexes
    (`hf_builders.llama_cpp_reference`), the sentencepiece models alone (sentencepiece itself:
    the table above)."""
    import tiktoken
    import tokenizers
    import sentencepiece as spm

    from hf_builders import BUILDERS, llama_cpp_reference
    from ubpe.io import gguf
    from ubpe.io import sentencepiece as spm_io
    from ubpe.models.hf import QWEN2_REGEX
    from ubpe.text.patterns import PATTERNS

    threads = os.cpu_count() or 1
    hf_peer = {name: BUILDERS[name]().to_str() for name in ("gpt2", "llama3", "qwen2", "llama2")}

    def tokenizers_peer(style: str) -> tuple:
        return (lambda: tokenizers.Tokenizer.from_str(hf_peer[style]),
                lambda hf, texts: hf.encode_batch(texts, add_special_tokens=False), lambda out: [e.ids for e in out])

    rows = []
    for name, style, pattern in (("gpt-2", "gpt2", PATTERNS["gpt2"]), ("llama-bpe", "llama3", PATTERNS["llama3"]),
                                 ("qwen2", "qwen2", QWEN2_REGEX), ("llama-spm", "llama2", None)):
        path = models / f"ggml-vocab-{name}.gguf"
        peers = {}
        if pattern is not None:
            tok = gguf.read(path)
            ranks = {raw: i for i, raw in enumerate(tok._raw) if raw is not None and tok.token_types[i] == 1}
            peers["tiktoken"] = (
                lambda ranks=ranks, pattern=pattern: tiktoken.Encoding("peer", pat_str=pattern, mergeable_ranks=ranks,
                                                                       special_tokens={}),
                lambda enc, texts: enc.encode_ordinary_batch(texts, num_threads=threads), lambda out: out)
        peers["tokenizers"] = tokenizers_peer(style)
        rows.append(every_core_rows(f"GGUF {name}", docs, lambda path=path: gguf.read(path), peers, repeats))
        print(rows[-1], flush=True)
        if name == "gpt-2":  # the same text as one document: ours cut it across threads, the peers cannot
            rows.append(every_core_rows(f"GGUF {name}, the text as one document", ["".join(docs)],
                                        lambda path=path: gguf.read(path), peers, repeats))
            print(rows[-1], flush=True)
    for name in LIST_OF_REGEXES:
        path = models / f"ggml-vocab-{name}.gguf"
        reference = llama_cpp_reference(gguf.read(path)).to_str()
        peers = {"tokenizers": (lambda reference=reference: tokenizers.Tokenizer.from_str(reference),
                                lambda hf, texts: hf.encode_batch(texts, add_special_tokens=False),
                                lambda out: [e.ids for e in out])}
        rows.append(every_core_rows(f"GGUF {name} (list of regexes)", docs, lambda path=path: gguf.read(path),
                                    peers, repeats))
        print(rows[-1], flush=True)
    for kind in ("bpe", "unigram"):
        out = io.BytesIO()
        spm.SentencePieceTrainer.train(sentence_iterator=iter(train), model_writer=out, model_type=kind,
                                       vocab_size=8000, num_threads=1, minloglevel=2)
        rows.append(every_core_rows(f"sentencepiece {kind} (8k)", docs,
                                    lambda data=out.getvalue(): spm_io.from_bytes(data), {}, repeats))
        print(rows[-1], flush=True)
    return rows


def _tiktoken_file_rows(models, docs: list[str], repeats: int) -> list[str]:
    """``.tiktoken`` files on every core, read by ``ubpe.load`` and by tiktoken's own loader
    (`common.every_core_rows`): whisper's two (the GPT-2 pattern, which p50k's is), and the GGUF
    llama-bpe and qwen2 ranks written as ``.tiktoken`` files (what Llama 3's and Qwen's are) with
    Llama 3's, cl100k's and o200k's patterns and Qwen's (a regex no preset names: the regex VM)."""
    import base64
    import tempfile

    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    import ubpe
    from ubpe.io import gguf
    from ubpe.models.hf import QWEN2_REGEX
    from ubpe.text.patterns import PATTERNS
    from vocab_corpora import WHISPER_FILES, whisper_file

    threads = os.cpu_count() or 1
    rows = []
    with tempfile.TemporaryDirectory() as work:
        files = [(f"whisper {name} (gpt2 pattern)", whisper_file(name), "gpt2", PATTERNS["gpt2"])
                 for name in WHISPER_FILES]
        for name, patterns in (("llama-bpe", ("llama3", "cl100k", "o200k")), ("qwen2", (QWEN2_REGEX,))):
            tok = gguf.read(models / f"ggml-vocab-{name}.gguf")
            path = pathlib.Path(work) / f"{name}.tiktoken"
            path.write_text("".join(f"{base64.b64encode(raw).decode()} {i}\n" for i, raw in enumerate(tok._raw)
                                    if raw is not None and tok.token_types[i] == 1), encoding="utf-8")
            files += [(f"{name} ranks, {pattern if pattern in PATTERNS else 'Qwen'} pattern", path,
                       pattern, PATTERNS.get(pattern, pattern)) for pattern in patterns]
        for label, path, pattern, regex_text in files:
            peers = {"tiktoken": (
                lambda path=path, regex_text=regex_text: tiktoken.Encoding(
                    "peer", pat_str=regex_text, mergeable_ranks=load_tiktoken_bpe(str(path)), special_tokens={}),
                lambda enc, texts: enc.encode_ordinary_batch(texts, num_threads=threads), lambda out: out)}
            rows.append(every_core_rows(f".tiktoken: {label}", docs,
                                        lambda path=path, pattern=pattern: ubpe.load(path, pattern=pattern), peers,
                                        repeats))
            print(rows[-1], flush=True)
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

    load_start = os.getloadavg()[0]
    host = provenance.machine()
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
        f"commit {provenance.git('rev-parse', '--short', 'HEAD') or 'unknown'}; {host['cpu']}, "
        f"{host['cores_available']} of {host['cores']} cores; Python {platform.python_version()}; "
        + ", ".join(f"{k} {v}" for k, v in provenance.package_versions(PEERS).items())
        + f". One thread unless told, best of the repeats after a warm-up, the compared calls interleaved; load average at the start "
        f"{load_start:.1f} (other processes share the machine: compare the ratios of one run, not "
        "absolute numbers). llama.cpp itself is not installed: its byte-level and SPM algorithms are "
        "compared through tiktoken (same ranks) and sentencepiece (same model).",
        "",
        "## Loading a GGUF vocabulary (`ubpe.load`)", "", "| vocabulary | tokens | load |", "|---|---|---|",
        *_load_rows(models, args.repeats),
        "", f"## Native byte-level encoding vs tiktoken (same vocabulary, {len(text) / MB:.1f} M characters of "
        "KJV + Shakespeare, MB/s)", "",
        "| vocabulary | ours cold | ours warm | tiktoken | cold / tiktoken | ours, all threads | "
        "tiktoken, all threads | ratio | same ids |", "|---|---|---|---|---|---|---|---|---|",
        *_bytelevel_rows(models, text, args.repeats),
        "", f"## sentencepiece models (8k pieces, {len(heldout):,} held-out Shakespeare lines, MB/s)", "",
        "| model | ours, 1 thread | sentencepiece, 1 thread | ratio | ours, all threads | "
        "sentencepiece, all threads | ratio | ours, `encode` per line | lines with equal ids |",
        "|---|---|---|---|---|---|---|---|---|",
        *_spm_rows(train, heldout, args.repeats),
        "", f"## Every family on every core: all threads, cold and warm ({len(text) / MB:.1f} M characters, "
        f"{len(documents(text)):,} documents of about 4 KB: consecutive lines, MB/s)", "",
        "Cold: a fresh object's first pass (loaded anew, untimed; its word caches empty); warm: the best of "
        f"{args.repeats} on one object after a warm-up. All threads on every side (ubpe `threads=None`, one per core; "
        "tiktoken `num_threads` = cores; tokenizers its rayon pool). `encode_batch` returns a list per document, "
        "`encode_batch_to_numpy` flat arrays, tokenizers `Encoding` objects. Targets (issue 25): arrays "
        ">= 1.3x tiktoken and >= 1.0x tokenizers. The sentencepiece models have neither peer (sentencepiece itself: "
        "the table above).", "",
        *EVERY_CORE_HEADER,
        *_every_core_rows(models, documents(text), train, args.repeats),
        *_tiktoken_file_rows(models, documents(text), args.repeats),
        "", "## ubpe's encoders on the GPT-2 vocabulary (1 MB, MB/s)", "",
        "| encoder | MB/s | tokens per character |", "|---|---|---|",
        *_encoder_rows(models, text[: MB], args.repeats),
    ]
    lines += ["", f"Load average at the end: {os.getloadavg()[0]:.1f}."]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
