"""Encode speed: ours beside HF tokenizers and sentencepiece (and ubpe 0.3.0), in one run.

    python benchmarks/bench_encode.py                    # about 5-7 minutes
    python benchmarks/bench_encode.py --no-reference --allow-dirty

Every library fits its own model of the same size (4,096 ids) on the same 1 MB of prose (the
King James Bible and Shakespeare's plays, training split) and encodes the same 1 MB of
held-out prose (their held-out splits): ours and HF split with the same `words` regex
(experiments/patterns.py), sentencepiece splits on whitespace its own way. The libraries run
*different algorithms* (tf-idf lattice / classic BPE / ranked BPE vs HF's BPE and
sentencepiece's BPE), so outputs cannot agree: each row gives its held-out tokens per
character beside its speed. Where outputs must agree they are checked: our 1-thread and
default-thread runs, our per-document ``encode`` and ``encode_batch``, and ours against
ubpe 0.3.0 on the same model file (the reference is slow: it runs on a 60,000-character
sample, best of 3 after a warm-up, like every other row).

Each library runs with its default threading and with one thread: ours ``n_threads=1``,
HF ``TOKENIZERS_PARALLELISM=false`` (its ``encode_batch`` then runs on the calling thread),
sentencepiece ``num_threads=1``. Ratios compare rows of the same run. Every time is the best
of ``--repeats`` rounds after one untimed warm-up call, the calls interleaved (one of each per
round, in a new seeded order each round, so that the rows compared see the same machine load
and no row always follows the same one); imports and model building are
outside the timers. A control row (sha256, which releases the GIL, on 2 threads vs 1) shows
how parallel the machine was during the run. The report records commit, dirty flag, CPU model and load average (via
``ubpe.lab.provenance``); a checkout with uncommitted changes is refused unless
``--allow-dirty``. Results: ``results/benchmarks/encode.{csv,md}``.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import tempfile
from pathlib import Path

from common import (
    RESULTS,
    WORDS,
    add_provenance_arguments,
    best_time,
    importable,
    interleaved,
    markdown_report,
    provenance,
    reference_python,
    text_corpus,
    versions,
    write_results,
)

from ubpe import UBPE, UBPEClassic

N_TOKENS = 4096
HELD_OUT_CHARS = 1_000_000
SHORT_DOC_CHARS = 200
SHORT_DOCS_TOTAL = 200_000
REFERENCE_SAMPLE_CHARS = 60_000

# Runs in the reference's venv: warm-up, best of N, and the encodings (checked against ours).
WORKER = r"""
import json, sys, time
from ubpe import UBPE, UBPEClassic
spec = json.load(open(sys.argv[1]))
docs = json.load(open(spec["docs"]))
cls = UBPE if spec["variant"] == "universal" else UBPEClassic
tok = cls.loads(open(spec["model"]).read(), token_type=str)
kwargs = {"top_n": spec["top_n"]} if spec["variant"] == "universal" else {}
run = lambda: [tok.encode(doc, **kwargs) for doc in docs]
out = run()
times = []
for _ in range(spec["repeats"]):
    started = time.perf_counter()
    run()
    times.append(time.perf_counter() - started)
print(json.dumps({"seconds": min(times), "best": [[list(map(int, e[0][0]))] for e in out]}))
"""


def hf_model(train: list[str], alphabet: list[str]):
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Split(Regex(WORDS), behavior="isolated")
    trainer = trainers.BpeTrainer(vocab_size=N_TOKENS, show_progress=False, initial_alphabet=alphabet,
                                  limit_alphabet=len(alphabet))
    tok.train_from_iterator(train, trainer=trainer)
    return tok


def spm_model(train: list[str]):
    import sentencepiece as spm

    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter(train), model_writer=model, model_type="bpe", vocab_size=N_TOKENS,
        character_coverage=1.0, max_sentence_length=1 << 24, minloglevel=2, hard_vocab_limit=False)
    return spm.SentencePieceProcessor(model_proto=model.getvalue())


def hf_one_thread(function):
    """``function`` run with HF's parallelism off (its encode_batch then stays on this thread)."""
    def run():
        before = os.environ.get("TOKENIZERS_PARALLELISM")
        os.environ["TOKENIZERS_PARALLELISM"] = "false"
        try:
            return function()
        finally:
            if before is None:
                del os.environ["TOKENIZERS_PARALLELISM"]
            else:
                os.environ["TOKENIZERS_PARALLELISM"] = before
    return run


def reference_encode(python: str, model: str, docs: list[str], variant: str, top_n: int, repeats: int,
                     workdir: Path) -> dict:
    (workdir / "docs.json").write_text(json.dumps(docs))
    (workdir / "model.json").write_text(model)
    spec = dict(docs=str(workdir / "docs.json"), model=str(workdir / "model.json"), variant=variant,
                top_n=top_n, repeats=repeats)
    (workdir / "spec.json").write_text(json.dumps(spec))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([python, "-c", WORKER, str(workdir / "spec.json")], capture_output=True, text=True,
                            env=env, cwd=workdir)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    return json.loads(result.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reference-python", default=os.environ.get("UBPE_REFERENCE_PYTHON"))
    parser.add_argument("--no-reference", action="store_true")
    # best of 15: on a shared 2-core machine, 7 rounds left the 2-thread rows 20% apart from run to run
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", type=Path, default=RESULTS)
    add_provenance_arguments(parser)
    args = parser.parse_args()
    state = provenance.require_clean(args.allow_dirty)
    load_before = provenance.load_average()
    reference = None if args.no_reference else reference_python(args.reference_python)

    train = text_corpus(1_000_000)
    held = text_corpus(HELD_OUT_CHARS, "heldout")
    alphabet = sorted(set("".join(train)))
    known = set(alphabet)
    held = ["".join(c for c in doc if c in known) for doc in held]  # HF and spm would map the rest to <unk>
    n_chars = sum(map(len, held))
    joined = "".join(held)[:SHORT_DOCS_TOTAL]
    short = [joined[i : i + SHORT_DOC_CHARS] for i in range(0, len(joined), SHORT_DOC_CHARS)]
    universal = UBPE(alphabet=alphabet, n_tokens=N_TOKENS, regex_str=WORDS)
    universal.fit(train, quiet=True)
    classic = UBPEClassic(alphabet=alphabet, n_tokens=N_TOKENS, regex_str=WORDS)
    classic.fit(train, quiet=True)
    rows: list[dict] = []
    speed: dict[tuple[str, str], float] = {}
    # Every timed call is registered first, then all run in rounds, interleaved (one call of
    # each per round, best of the rounds): on a shared machine the load drifts, and rows that
    # are compared should see the same drift.
    timed: list[tuple[dict, object]] = []

    def add(system, call, threads, seconds, tokens, chars=n_chars, note=""):
        speed[(call, threads)] = chars / seconds
        row = dict(system=system, call=call, threads=threads, chars=chars, chars_per_s=f"{chars / seconds:,.0f}",
                   tokens_per_char=f"{tokens / chars:.4f}" if tokens else "", note=note)
        rows.append(row)
        print("  ".join(str(v) for v in row.values()), flush=True)

    def measure(function, system, call, threads, tokens, chars=n_chars, note=""):
        timed.append((dict(system=system, call=call, threads=threads, tokens=tokens, chars=chars, note=note), function))

    def ours(tok, call, **options):
        outputs = {}
        for threads, n_threads in (("default", None), ("1", 1)):
            outputs[threads] = tok.encode_batch(held, n_threads=n_threads, **options)
            measure(lambda n_threads=n_threads: tok.encode_batch(held, n_threads=n_threads, **options),
                    "ubpe (ours)", call, threads, sum(len(e[0][0]) for e in outputs[threads]))
        if outputs["default"] != outputs["1"]:
            raise SystemExit(f"{call}: the 1-thread and default-thread outputs differ")

    def ours_arrays(tok, call, **options):
        """``encode_batch_to_numpy``: the same encodings as ``encode_batch``, in arrays."""
        lists = tok.encode_batch(held, n_threads=1, **options)
        for threads, n_threads in (("default", None), ("1", 1)):
            batch = tok.encode_batch_to_numpy(held, n_threads=n_threads, **options)
            if batch.tolist() != lists:
                raise SystemExit(f"{call}: the arrays and encode_batch's lists differ")
            measure(lambda n_threads=n_threads: tok.encode_batch_to_numpy(held, n_threads=n_threads, **options),
                    "ubpe (ours)", call, threads, len(batch.best()[0]), note="arrays, no list per document")

    control(measure)
    ours(universal, "tfidf top-1 encode_batch")
    ours(universal, "tfidf top-5 encode_batch", top_n=5)
    ours_arrays(universal, "tfidf top-1 encode_batch_to_numpy")
    ours_arrays(universal, "tfidf top-5 encode_batch_to_numpy", top_n=5)
    ours(classic, "classic encode_batch")
    ours(classic, "ranked encode_batch", encoder="ranked")
    if [universal.encode(d) for d in short] != universal.encode_batch(short, n_threads=1):
        raise SystemExit("per-document encode and encode_batch differ")
    n_short = sum(map(len, short))
    measure(lambda: [universal.encode(d) for d in short], "ubpe (ours)",
            f"tfidf top-1 encode, {SHORT_DOC_CHARS}-char docs", "1", 0, n_short)
    measure(lambda: universal.encode_batch(short, n_threads=1), "ubpe (ours)",
            f"tfidf top-1 encode_batch, {SHORT_DOC_CHARS}-char docs", "1", 0, n_short)
    if importable("tokenizers"):
        hf = hf_model(train, alphabet)
        tokens = sum(len(e.ids) for e in hf.encode_batch(held))
        measure(lambda: hf.encode_batch(held), "tokenizers", "BPE encode_batch", "default", tokens,
                note=f"{hf.get_vocab_size()} ids, different algorithm")
        measure(hf_one_thread(lambda: hf.encode_batch(held)), "tokenizers", "BPE encode_batch", "1", tokens)
    if importable("sentencepiece"):
        sp = spm_model(train)
        tokens = sum(map(len, sp.encode(held)))
        measure(lambda: sp.encode(held), "sentencepiece", "BPE encode(list)", "default", tokens,
                note=f"{sp.get_piece_size()} ids, different algorithm, own whitespace split")
        measure(lambda: sp.encode(held, num_threads=1), "sentencepiece", "BPE encode(list)", "1", tokens)
    best = interleaved([function for _, function in timed], args.repeats)
    for (info, _), seconds in zip(timed, best):
        add(info["system"], info["call"], info["threads"], seconds, info["tokens"], info["chars"], info["note"])

    if reference:
        sample, total = [], 0
        for doc in held:
            sample.append(doc[: REFERENCE_SAMPLE_CHARS - total])
            total += len(sample[-1])
            if total >= REFERENCE_SAMPLE_CHARS:
                break
        with tempfile.TemporaryDirectory() as tmp:
            for tok, variant, top_n, call in ((universal, "universal", 1, "tfidf top-1"),
                                              (universal, "universal", 5, "tfidf top-5"),
                                              (classic, "classic", 1, "classic")):
                options = {"top_n": top_n} if variant == "universal" else {}
                mine = [tok.encode(d, **options) for d in sample]
                theirs = reference_encode(reference, tok.dumps(), sample, variant, top_n, min(args.repeats, 3),
                                          Path(tmp))
                agree = [[e[0][0]] for e in mine] == theirs["best"]
                seconds = best_time(lambda: [tok.encode(d, **options) for d in sample], args.repeats)
                add("ubpe (ours)", f"{call} encode per doc (reference sample)", "1", seconds,
                    sum(len(e[0][0]) for e in mine), total, note="same model file")
                add("ubpe 0.3.0", f"{call} encode per doc (reference sample)", "1", theirs["seconds"],
                    sum(len(e[0]) for e in theirs["best"]), total,
                    note=f"best outputs {'agree' if agree else 'DIFFER'}; ours {theirs['seconds'] / seconds:.0f}x faster")
                if not agree:
                    raise SystemExit(f"{call}: ours and ubpe 0.3.0 disagree on the same model")

    write_report(rows, ratios(speed), versions(reference), args, state, load_before)


def control(measure) -> None:
    """How parallel the machine is right now: sha256 (which releases the GIL) of 8 MB blocks
    on one thread and on two; on a busy shared machine no library can scale past this."""
    import hashlib
    from concurrent.futures import ThreadPoolExecutor

    blocks = [bytes([k]) * 8_000_000 for k in range(8)]

    def two_threads():
        with ThreadPoolExecutor(2) as pool:
            return list(pool.map(lambda b: hashlib.sha256(b).digest(), blocks))

    for threads, run in (("default", two_threads), ("1", lambda: [hashlib.sha256(b).digest() for b in blocks])):
        measure(run, "control", "sha256 (GIL released), 2 threads vs 1", threads, 0, sum(map(len, blocks)),
                note="bytes, not chars: the machine's parallelism")


def ratios(speed: dict[tuple[str, str], float]) -> list[str]:
    """The issue's goals as ratios of this run's rows (speed = characters per second)."""
    lines = []

    def ratio(label, a, b, goal, higher=True):
        if a in speed and b in speed:
            value = speed[a] / speed[b]
            held = value >= goal if higher else value <= goal
            lines.append(f"- {label}: **{value:.2f}x** (goal {'>=' if higher else '<='} {goal}; "
                         f"{'holds' if held else 'does not hold'})")

    for threads in ("default", "1"):
        ratio(f"tf-idf top-1 / HF encode_batch, {threads} threads", ("tfidf top-1 encode_batch", threads),
              ("BPE encode_batch", threads), 1.0)
        ratio(f"tf-idf top-1 arrays (encode_batch_to_numpy) / HF encode_batch, {threads} threads",
              ("tfidf top-1 encode_batch_to_numpy", threads), ("BPE encode_batch", threads), 1.0)
        ratio(f"classic / sentencepiece encode(list), {threads} threads", ("classic encode_batch", threads),
              ("BPE encode(list)", threads), 1.0)
        ratio(f"ranked / sentencepiece encode(list), {threads} threads", ("ranked encode_batch", threads),
              ("BPE encode(list)", threads), 1.0)
        ratio(f"top-5 / top-1, {threads} threads", ("tfidf top-5 encode_batch", threads),
              ("tfidf top-1 encode_batch", threads), 0.4)
        ratio(f"top-5 / top-1, arrays (encode_batch_to_numpy), {threads} threads",
              ("tfidf top-5 encode_batch_to_numpy", threads), ("tfidf top-1 encode_batch_to_numpy", threads), 0.4)
    call = f"tfidf top-1 encode_batch, {SHORT_DOC_CHARS}-char docs"
    ratio(f"encode_batch / per-document encode per character ({SHORT_DOC_CHARS}-char docs; time ratio)",
          (call, "1"), (f"tfidf top-1 encode, {SHORT_DOC_CHARS}-char docs", "1"), 1.5, higher=False)
    for call in ("tfidf top-1 encode_batch", "tfidf top-5 encode_batch", "tfidf top-1 encode_batch_to_numpy",
                 "tfidf top-5 encode_batch_to_numpy", "classic encode_batch", "ranked encode_batch",
                 "BPE encode_batch", "BPE encode(list)"):
        ratio(f"{call} default threads / 1 thread", (call, "default"), (call, "1"), 1.7)
    ratio("control: the machine's own 2-thread / 1-thread speed-up (sha256)",
          ("sha256 (GIL released), 2 threads vs 1", "default"), ("sha256 (GIL released), 2 threads vs 1", "1"), 1.7)
    return lines


def write_report(rows, goal_lines, library_versions, args, state, load_before) -> None:
    notes = [
        f"Models: {N_TOKENS} ids each, fitted by each library on 1 MB of KJV + Shakespeare (training split); "
        f"held-out: {HELD_OUT_CHARS:,} characters of their held-out splits (characters outside the training "
        "alphabet dropped). Ours and HF split with the `words` regex; sentencepiece splits its own way.",
        f"Every time: best of {args.repeats} interleaved rounds (a new seeded order each round) after a warm-up. `threads`: default = each library's own "
        f"(ours: one per core, `UBPE_NUM_THREADS`), 1 = ours `n_threads=1`, HF `TOKENIZERS_PARALLELISM=false`, "
        "sentencepiece `num_threads=1`. Different algorithms give different tokens: compare tokens_per_char too.",
        "Outputs: our `encode_batch` returns ubpe 0.3.0's lists (a list per encoding, an int per token, built "
        "holding the GIL); `encode_batch_to_numpy` the same encodings in four arrays (checked equal); HF's "
        "`encode_batch` returns `Encoding` objects, whose id lists are built when read (not timed); "
        "sentencepiece's `encode` returns lists.",
        "",
        "Goals (issue 12), from this run:",
        "",
        *goal_lines,
    ]
    command = "python benchmarks/bench_encode.py" + (" --no-reference" if args.no_reference else "")
    write_results(args.out, "encode", rows, markdown_report(
        "Encode benchmark", command, notes, rows, library_versions, state, load_before))


if __name__ == "__main__":
    main()
