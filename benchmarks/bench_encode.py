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

Warm and cold: every row is timed twice, ``warm`` (the best of N calls on one object, whose
caches then hold every part of the text) and ``cold`` (each call on a *fresh* object - loaded
from the model file, outside the timer - so its first pass over text it has not seen, lazily
built tables included: what a user mostly runs; the best of N such first passes).

Unsplit sequences (issue 25): DNA (A/C/G/T, 1,000-bp pieces) and ECG records quantized to
2,048 levels, no pattern, so that a document is one part: a ``UBPE`` of 4,096 and of 16,384
ids fitted on 1,000 training pieces (ECG: its training split) encodes the held-out pieces
document by document (``encode``) and as a batch (``encode_batch_to_numpy``), and one
1,000,000-symbol DNA sequence (held-out and unfitted training pieces back to back), cold
and warm; the symbols/s are in the ``chars_per_s`` column.

Each library runs with its default threading and with one thread: ours ``threads=1``,
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
    ECG_LEVELS,
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

#: A user's own pre-tokenization pattern, no preset (GPT-2's shape with letters and numbers as
#: Unicode classes and runs of digits up to three): the rows "a user's regex" split with the
#: kernels' regex VM, as any pattern that is no preset (issue 25 measured GPT-2's own string)
USER_REGEX = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}+| ?\p{N}{1,3}| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"

N_TOKENS = 4096
UNSPLIT_SIZES = (4096, 16384)
UNSPLIT_FIT_DOCS = 1000
LONG_SEQUENCE = 1_000_000
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
    # a user's own pattern (no preset: the kernels' regex VM splits it), as the issue measured it
    own = UBPE(alphabet=alphabet, n_tokens=N_TOKENS, regex_str=USER_REGEX)
    own.fit(train, quiet=True)
    own_classic = UBPEClassic(alphabet=alphabet, n_tokens=N_TOKENS, regex_str=USER_REGEX)
    own_classic.fit(train, quiet=True)
    rows: list[dict] = []
    speed: dict[tuple[str, str], float] = {}
    # Every timed call is registered first, then all run in rounds, interleaved (one call of
    # each per round, best of the rounds): on a shared machine the load drifts, and rows that
    # are compared should see the same drift.
    timed: list[tuple[dict, object]] = []

    def add(system, call, threads, seconds, tokens, chars=n_chars, note="", pass_=WARM):
        speed[(call, threads, pass_)] = chars / seconds
        row = dict(system=system, call=call, threads=threads, **{"pass": pass_}, chars=chars,
                   chars_per_s=f"{chars / seconds:,.0f}", tokens_per_char=f"{tokens / chars:.4f}" if tokens else "",
                   seconds=f"{seconds:.4f}", note=note)
        rows.append(row)
        print("  ".join(str(v) for v in row.values()), flush=True)

    def measure(function, system, call, threads, tokens, chars=n_chars, note="", fresh=None):
        """Time ``function`` (warm: the same object every round), and, given ``fresh`` (a
        function building a new object), ``function.on`` (see :func:`bound`) on a new object
        per round (cold)."""
        info = dict(system=system, call=call, threads=threads, tokens=tokens, chars=chars, note=note)
        timed.append((dict(info, pass_=WARM), function))
        if fresh is not None:
            timed.append((dict(info, pass_=COLD), first_pass(function.on, fresh, args.repeats)))

    def ours(tok, call, **options):
        outputs = {}
        fresh = loader(tok)
        for threads, n_threads in (("default", None), ("1", 1)):
            outputs[threads] = tok.encode_batch(held, threads=n_threads, **options)
            measure(bound(tok, lambda t, n_threads=n_threads: t.encode_batch(held, threads=n_threads, **options)),
                    "ubpe (ours)", call, threads, sum(len(e[0][0]) for e in outputs[threads]), fresh=fresh)
        if outputs["default"] != outputs["1"]:
            raise SystemExit(f"{call}: the 1-thread and default-thread outputs differ")
        if fresh().encode_batch(held, **options) != outputs["1"]:
            raise SystemExit(f"{call}: a fresh object's first pass differs")

    def ours_arrays(tok, call, **options):
        """``encode_batch_to_numpy``: the same encodings as ``encode_batch``, in arrays."""
        lists = tok.encode_batch(held, threads=1, **options)
        for threads, n_threads in (("default", None), ("1", 1)):
            batch = tok.encode_batch_to_numpy(held, threads=n_threads, **options)
            if batch.tolist() != lists:
                raise SystemExit(f"{call}: the arrays and encode_batch's lists differ")
            measure(bound(tok, lambda t, n_threads=n_threads: t.encode_batch_to_numpy(held, threads=n_threads,
                                                                                     **options)),
                    "ubpe (ours)", call, threads, len(batch.best()[0]), note="arrays, no list per document",
                    fresh=loader(tok))

    control(measure)
    ours(universal, "tfidf top-1 encode_batch")
    ours(universal, "tfidf top-5 encode_batch", top_n=5)
    ours_arrays(universal, "tfidf top-1 encode_batch_to_numpy")
    ours_arrays(universal, "tfidf top-5 encode_batch_to_numpy", top_n=5)
    ours(classic, "classic encode_batch")
    ours(classic, "ranked encode_batch", encoder="ranked")
    ours(own, "tfidf top-1 encode_batch, a user's regex")
    ours(own_classic, "classic encode_batch, a user's regex")
    if [universal.encode(d) for d in short] != universal.encode_batch(short, threads=1):
        raise SystemExit("per-document encode and encode_batch differ")
    n_short = sum(map(len, short))
    measure(bound(universal, lambda t: [t.encode(d) for d in short]), "ubpe (ours)",
            f"tfidf top-1 encode, {SHORT_DOC_CHARS}-char docs", "1", 0, n_short, fresh=loader(universal))
    measure(bound(universal, lambda t: t.encode_batch(short, threads=1)), "ubpe (ours)",
            f"tfidf top-1 encode_batch, {SHORT_DOC_CHARS}-char docs", "1", 0, n_short, fresh=loader(universal))
    if importable("tokenizers"):
        from tokenizers import Tokenizer

        hf = hf_model(train, alphabet)
        tokens = sum(len(e.ids) for e in hf.encode_batch(held))
        hf_json = hf.to_str()
        hf_fresh = lambda: Tokenizer.from_str(hf_json)  # noqa: E731
        measure(bound(hf, lambda t: t.encode_batch(held)), "tokenizers", "BPE encode_batch", "default", tokens,
                note=f"{hf.get_vocab_size()} ids, different algorithm", fresh=hf_fresh)
        measure(bound(hf, lambda t: hf_one_thread(lambda: t.encode_batch(held))()), "tokenizers",
                "BPE encode_batch", "1", tokens, fresh=hf_fresh)
    if importable("sentencepiece"):
        import sentencepiece as spm

        sp = spm_model(train)
        tokens = sum(map(len, sp.encode(held)))
        proto = sp.serialized_model_proto()
        sp_fresh = lambda: spm.SentencePieceProcessor(model_proto=proto)  # noqa: E731
        measure(bound(sp, lambda t: t.encode(held)), "sentencepiece", "BPE encode(list)", "default", tokens,
                note=f"{sp.get_piece_size()} ids, different algorithm, own whitespace split", fresh=sp_fresh)
        measure(bound(sp, lambda t: t.encode(held, num_threads=1)), "sentencepiece", "BPE encode(list)", "1", tokens,
                fresh=sp_fresh)
    unsplit_rows(measure)
    best = interleaved([function for _, function in timed], args.repeats)
    for (info, _), seconds in zip(timed, best):
        add(info["system"], info["call"], info["threads"], seconds, info["tokens"], info["chars"], info["note"],
            info["pass_"])

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

    write_report(rows, ratios(speed) + unsplit_goals(speed), versions(reference), args, state, load_before)


WARM, COLD = "warm", "cold"


def bound(obj, function):
    """``function(obj)`` as a call of no argument (a warm row: the same object every round);
    its ``on`` is ``function`` itself, for the cold row to call on fresh objects."""
    def call():
        return function(obj)

    call.on = function
    return call


def loader(tok):
    """A function giving a fresh copy of our tokenizer ``tok``, as a user loads it: from its
    model file's text (read once), nothing built or cached yet."""
    text, cls = tok.dumps(), type(tok)
    return lambda: cls.loads(text)


def first_pass(function, fresh, repeats: int):
    """A cold row's call: ``function`` on a new object each time (``common.interleaved`` makes
    one untimed warm-up call and ``repeats`` timed ones). The objects are built now, outside
    every timer, so a timed call pays only for its first pass (and the tables its object
    builds on first use)."""
    objects = [fresh() for _ in range(repeats + 1)]
    return lambda: function(objects.pop())


def unsplit_corpora() -> dict[str, tuple]:
    """``name -> (alphabet, fitting docs, held-out docs, long sequence or None)``: DNA pieces
    (str) and ECG records quantized to ``ECG_LEVELS`` levels (int lists, as users hold them)."""
    from experiments.datasets import load

    every = float("inf")
    dna_train = [str(d) for d in load("dna", "train", max_symbols=every).docs]
    dna_held = [str(d) for d in load("dna", "heldout", max_symbols=every).docs]
    long = "".join(dna_held + dna_train[UNSPLIT_FIT_DOCS:])[:LONG_SEQUENCE]  # never fitted on
    if len(long) < LONG_SEQUENCE:
        raise SystemExit(f"only {len(long)} DNA symbols for the long sequence, {LONG_SEQUENCE} asked")
    ecg = {split: [list(map(int, d)) for d in load("ecg", split, quantizer=f"uniform:{ECG_LEVELS}",
                                                   max_symbols=every).docs] for split in ("train", "heldout")}
    return {
        "DNA": ("ACGT", dna_train[:UNSPLIT_FIT_DOCS], dna_held, long),
        "ECG": (list(range(ECG_LEVELS)), ecg["train"], ecg["heldout"], None),
    }


def unsplit_rows(measure) -> None:
    """Register the unsplit-sequence rows (see the module docstring), their outputs checked
    equal first: per-document ``encode`` cold and warm, ``encode_batch_to_numpy`` on all
    threads and one, the long sequence."""
    for name, (alphabet, fitting, held, long) in unsplit_corpora().items():
        n_symbols = sum(map(len, held))
        for size in UNSPLIT_SIZES:
            tok = UBPE(alphabet=alphabet, n_tokens=size)
            tok.fit(fitting, quiet=True)
            fresh = loader(tok)
            per_document = [tok.encode(d) for d in held]
            if fresh().encode_batch_to_numpy(held).tolist() != per_document:
                raise SystemExit(f"unsplit {name}: encode and a fresh encode_batch_to_numpy differ")
            tokens = sum(len(e[0][0]) for e in per_document)
            label = f"unsplit {name}, {size:,} ids"
            note = "symbols, not chars; one part per document"
            measure(bound(tok, lambda t, held=held: [t.encode(d) for d in held]), "ubpe (ours)",
                    f"{label}: tfidf top-1 encode per document", "1", tokens, n_symbols, note, fresh=fresh)
            measure(bound(tok, lambda t, held=held: t.encode_batch_to_numpy(held)), "ubpe (ours)",
                    f"{label}: tfidf top-1 encode_batch_to_numpy", "default", tokens, n_symbols, note, fresh=fresh)
            measure(bound(tok, lambda t, held=held: t.encode_batch_to_numpy(held, threads=1)), "ubpe (ours)",
                    f"{label}: tfidf top-1 encode_batch_to_numpy", "1", tokens, n_symbols, note)
            if long is not None:
                encoded = tok.encode(long)
                if fresh().encode(long) != encoded:
                    raise SystemExit(f"unsplit {name}: the long sequence's encodings differ")
                measure(bound(tok, lambda t, long=long: t.encode(long)), "ubpe (ours)",
                        f"{label}: one {len(long):,}-symbol sequence, encode", "1", len(encoded[0][0]), len(long),
                        note, fresh=fresh)


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


def ratios(speed: dict[tuple[str, str, str], float]) -> list[str]:
    """The issue's goals as ratios of this run's rows (speed = characters per second); a row
    is ``(call, threads)`` warm, or ``(call, threads, COLD)``."""
    lines = []

    def ratio(label, a, b, goal, higher=True):
        a, b = (a if len(a) == 3 else (*a, WARM)), (b if len(b) == 3 else (*b, WARM))
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
    for threads in ("default", "1"):
        ratio(f"tf-idf top-1, a user's regex / HF encode_batch, {threads} threads, both cold",
              ("tfidf top-1 encode_batch, a user's regex", threads, COLD), ("BPE encode_batch", threads, COLD), 1.0)
        ratio(f"classic, a user's regex / sentencepiece encode(list), {threads} threads, both cold",
              ("classic encode_batch, a user's regex", threads, COLD), ("BPE encode(list)", threads, COLD), 1.0)
        ratio(f"tf-idf top-1 / HF encode_batch, {threads} threads, both cold (first pass, fresh objects)",
              ("tfidf top-1 encode_batch", threads, COLD), ("BPE encode_batch", threads, COLD), 1.0)
    ratio("control: the machine's own 2-thread / 1-thread speed-up (sha256)",
          ("sha256 (GIL released), 2 threads vs 1", "default"), ("sha256 (GIL released), 2 threads vs 1", "1"), 1.7)
    return lines


def unsplit_goals(speed: dict[tuple[str, str, str], float]) -> list[str]:
    """Issue 25's unsplit-sequence goals from this run's rows: top-1 per document >= 2 M
    symbols/s on a first pass (cold), one 1 M-symbol sequence in <= 0.2 s (cold and warm)."""
    lines = []
    for (call, threads, pass_), per_second in speed.items():
        if not call.startswith("unsplit "):
            continue
        if call.endswith("encode per document") and pass_ == COLD:
            lines.append(f"- {call}, {pass_}: **{per_second / 1e6:.2f} M symbols/s** (goal >= 2; "
                         f"{'holds' if per_second >= 2e6 else 'does not hold'})")
        if "-symbol sequence" in call:
            seconds = LONG_SEQUENCE / per_second
            lines.append(f"- {call}, {pass_}: **{seconds:.3f} s** (goal <= 0.2; "
                         f"{'holds' if seconds <= 0.2 else 'does not hold'})")
    return ["", "Goals (issue 25, unsplit sequences), from this run:", "", *lines] if lines else []


def write_report(rows, goal_lines, library_versions, args, state, load_before) -> None:
    notes = [
        f"Models: {N_TOKENS} ids each, fitted by each library on 1 MB of KJV + Shakespeare (training split); "
        f"held-out: {HELD_OUT_CHARS:,} characters of their held-out splits (characters outside the training "
        "alphabet dropped). Ours and HF split with the `words` regex; sentencepiece splits its own way.",
        f"`pass`: warm = the best of {args.repeats} calls on one object (its caches warm after the first); cold = "
        "the best of as many first passes, each on a fresh object (ours: loaded from the model file; HF: "
        "`Tokenizer.from_str`; sentencepiece: from its model proto; built outside the timers): text it has not seen, "
        "tables it builds on first use included. `seconds` is the row's time for all its `chars`.",
        f"Every time: best of {args.repeats} interleaved rounds (a new seeded order each round) after a warm-up. `threads`: default = each library's own "
        f"(ours: one per core, `UBPE_NUM_THREADS`), 1 = ours `threads=1`, HF `TOKENIZERS_PARALLELISM=false`, "
        "sentencepiece `num_threads=1`. Different algorithms give different tokens: compare tokens_per_char too.",
        "Outputs: our `encode_batch` returns ubpe 0.3.0's lists (a list per encoding, an int per token, built "
        "holding the GIL); `encode_batch_to_numpy` the same encodings in four arrays (checked equal); HF's "
        "`encode_batch` returns `Encoding` objects, whose id lists are built when read (not timed); "
        "sentencepiece's `encode` returns lists.",
        "",
        "Unsplit sequences (issue 25): DNA (1,000-bp pieces of A/C/G/T) and ECG records quantized to "
        f"{ECG_LEVELS:,} uniform levels, no pattern (one part per document); `UBPE` of "
        f"{' and '.join(f'{n:,}' for n in UNSPLIT_SIZES)} ids fitted on {UNSPLIT_FIT_DOCS:,} DNA training pieces "
        "(ECG: its training split); held-out pieces encoded, the long sequence is held-out and unfitted training "
        "DNA back to back. Their `chars` are symbols.",
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
