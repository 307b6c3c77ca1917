"""MIDI, fairly: ubpe's BPE against MidiTok's on real music, at equal merges and equal
vocabulary size: ``python -m experiments midi`` -> ``results/midi/``.

The music is music21's corpus written as MIDI by music21 itself
(`experiments.datasets.midi_corpus`: Bach chorales, Monteverdi madrigals, Palestrina mass
movements); one piece is one file and the unit, its collection (the chorales, a madrigal book,
a mass) the cluster. Pieces go to the held-out split by hash of their name (the lab's rule).

Every tokenisation starts from the same ids: MidiTok's REMI (``ubpe.lab``'s `midi_tokenizer`,
all tracks in one stream) cut into bars exactly as MidiTok's own BPE training cuts them
(`piece_bars`, through MidiTok's ``TokTrainingIterator``; its default ``encode_ids_split="bar"``:
no merge crosses a bar line). Per number of merges ``k`` in `MERGES`:

- ``miditok``: MidiTok's ``train(model="BPE")`` (Hugging Face ``tokenizers``) with ``k`` merges
  (vocabulary ``base + 1 + k``: its Metaspace pre-tokenizer puts a ``▁`` before every bar, and
  ``▁`` takes an id), and ``miditok_size`` with the vocabulary size of ubpe's (``k - 1`` merges);
- ``standard``: ubpe's classic tokenizer at one merge per round (``n_candidates=1``: standard
  BPE) with ``k`` merges, encoding by merge rank (``ranked``: standard BPE inference);
- ``default``: ubpe's universal tokenizer at its defaults (50 merges per round, tokens
  rearranged, tf-idf encoder) with the same final vocabulary size; the same vocabulary encoded
  by merge rank (``default_ranked``) and with the fewest tokens it allows (``default_fewest``)
  tell the vocabulary's share of its result from the encoder's.

Standard BPE and MidiTok's learn the same merges with the same counts but for two things that
`merge_agreement` measures and the tests pin on a tiny corpus (tests/experiments/test_midi_fair.py):
MidiTok's ``▁`` (merges of ``▁`` with a bar's first tokens use merges and change the counts of
pairs at the start of bars; without the bar split, ``encode_ids_split="no"``, there is no ``▁``),
and ties between equally frequent pairs, which the two break in different orders.

Metrics: held-out tokens per piece; per setting, the ratio of total tokens (ubpe / MidiTok) with a
95 % bootstrap interval over pieces resampled within resampled collections (`cluster_bootstrap`),
and per-piece wins. Beside it, the lab's n-gram proxy (`ubpe.lab.ngram`: an interpolated
Kneser-Ney trigram, discount 0.75, trained on each tokenisation of the training pieces, a
piece one document): held-out bits per REMI symbol, the same ratio and interval on bits.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
import warnings
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from experiments import RESULTS_DIR

RESULTS = RESULTS_DIR / "midi"
DATASET = "midi"
#: Merges MidiTok's BPE learns at each setting ("equal merges").
MERGES = (256, 512, 1024, 2048, 4096)
#: ubpe's default: up to this many compatible merges per round.
DEFAULT_N_CANDIDATES = 50
BOOTSTRAP = 2000
#: The n-gram proxy's order and discount (the default experiment's [downstream] values).
NGRAM_ORDER = 3
NGRAM_DISCOUNT = 0.75
SEED = 0
#: MidiTok's Metaspace marker (``▁``, U+2581) in a flattened merge: -1.
METASPACE = -1
TOKENISATIONS = ("miditok", "miditok_size", "standard", "default", "default_ranked", "default_fewest")
#: ubpe's tokenisations: (column, tokenizer, encoder).
UBPE_ROWS = (("standard", "standard", "ranked"), ("default", "default", "tfidf"),
             ("default_ranked", "default", "ranked"), ("default_fewest", "default", "fewest"))


# -- the data --------------------------------------------------------------------------------

def _tokenizer():
    from ubpe.lab.datasets._sequences import midi_tokenizer

    return midi_tokenizer()


def piece_bars(tokenizer, paths: Sequence[Path]) -> list[list[list[int]]]:
    """Per MIDI file, its REMI ids cut into bars: what MidiTok's BPE training reads (its
    ``TokTrainingIterator``: the file preprocessed, tokenised, split per bar, ids as chars)."""
    from miditok import TokTrainingIterator
    from miditok.constants import CHR_ID_START

    iterator = TokTrainingIterator(tokenizer, list(paths))
    return [[[ord(c) - CHR_ID_START for c in bar] for bar in iterator.load_file(Path(path))]
            for path in paths]


def _spec():
    from experiments.datasets.registry import DatasetSpec
    from experiments.datasets.sources import ARCHIVES

    return DatasetSpec(DATASET, "music", build=lambda: None,
                       source=f"music21 {ARCHIVES['music21'].version}'s corpus written as MIDI by music21",
                       licence=ARCHIVES["music21"].licence,
                       description="Bach chorales, Monteverdi madrigals, Palestrina mass movements "
                                   "as MidiTok REMI ids (all tracks in one stream)",
                       symbol_type="int", unit="piece")


def pieces(jobs: int | None = None) -> list[dict]:
    """The MIDI corpus' pieces music21 could write: ``name``, ``collection``, ``path``."""
    from experiments.datasets.midi_corpus import midi_corpus

    folder, rows = midi_corpus(jobs=jobs, progress=True)
    return [{**row, "path": folder / row["file"]} for row in rows if row["error"] is None]


def raw_corpus(rows: list[dict], bars: list[list[list[int]]]):
    from ubpe.lab.datasets._corpus import RawCorpus

    keep = [i for i, b in enumerate(bars) if b]
    return RawCorpus(ids=[rows[i]["name"] for i in keep],
                     docs=[np.asarray([t for bar in bars[i] for t in bar], dtype=np.int64) for i in keep],
                     version="music21 10.5.1", units=[rows[i]["name"] for i in keep],
                     settings={"tokenizer": "miditok REMI, use_programs, bars as MidiTok trains"})


def load(name: str, split: str, **kwargs):
    """A split of the MIDI corpus (whole-piece REMI ids), as ``results/midi/run.json`` records it
    (what ``experiments.freshness.check`` reloads)."""
    from ubpe.lab.datasets.split import split_corpus

    rows = pieces()
    raw = raw_corpus(rows, piece_bars(_tokenizer(), [r["path"] for r in rows]))
    return split_corpus(_spec(), raw, split, max_symbols=kwargs.get("max_symbols", math.inf))


# -- the tokenisations -----------------------------------------------------------------------

def miditok_bpe(paths: Sequence[Path], vocab_size: int):
    """MidiTok's REMI with its own BPE trained on `paths` up to `vocab_size` ids."""
    tokenizer = _tokenizer()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tokenizer.train(vocab_size=vocab_size, model="BPE", files_paths=list(paths))
    return tokenizer


def miditok_merges(tokenizer) -> list[tuple[int, ...]]:
    """MidiTok's learned merges in order, each as the run of base ids it stands for
    (`METASPACE` for ``▁``)."""
    from miditok.constants import CHR_ID_START

    model = json.loads(tokenizer._model.to_str())["model"]

    def ids(piece: str) -> tuple[int, ...]:
        return tuple(METASPACE if c == "\u2581" else ord(c) - CHR_ID_START for c in piece)

    pairs = (m if isinstance(m, list) else m.split(" ") for m in model["merges"])
    return [ids(a) + ids(b) for a, b in pairs]


def miditok_ids(tokenizer, path: Path) -> np.ndarray:
    """A file's ids under MidiTok's trained BPE (all tracks in one stream)."""
    sequence = tokenizer.encode(path)
    sequence = sequence[0] if isinstance(sequence, list) else sequence
    return np.asarray(sequence.ids, dtype=np.int64)


def fit_standard(bars: list[list[int]], base: int, merges: int):
    """ubpe's classic tokenizer, one merge per round (standard BPE), exactly `merges` merges.

    (``n_tokens`` is the last id, as in the reference ubpe 0.3.0: ``base + merges - 1``.)
    """
    from ubpe import UBPEClassic

    tok = UBPEClassic(alphabet=list(range(base)), n_tokens=base + merges - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok.fit(bars, n_candidates=1, rearrange_tokens=False, quiet=True)
    return tok


def fit_default(bars: list[list[int]], base: int, vocab_size: int):
    """ubpe's universal tokenizer at its defaults, ending with at most `vocab_size` ids."""
    from ubpe import UBPE

    tok = UBPE(alphabet=list(range(base)), n_tokens=vocab_size)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tok.fit(bars, n_candidates=DEFAULT_N_CANDIDATES, quiet=True)
    if len(tok.vocabulary) > vocab_size:
        tok.rearrange_tokens(n_tokens=vocab_size - 1, quiet=True)
    return tok


def ubpe_merges(tok, base: int) -> list[tuple[int, ...]]:
    """A classic ubpe tokenizer's merges in creation order, as runs of base ids."""
    backward = tok.tokens_mapper["backward"]
    memo: dict[int, tuple[int, ...]] = {}

    def flat(token: int) -> tuple[int, ...]:
        if token < base:
            return (token,)
        if token not in memo:
            left, right = backward[token]
            memo[token] = flat(left) + flat(right)
        return memo[token]

    return [flat(t) for t in sorted(backward)]


def ubpe_ids(tok, bars_of_pieces: list[list[list[int]]], encoder: str) -> list[np.ndarray]:
    """Per piece, its bars encoded one by one and joined: the piece's token ids."""
    flat = [bar for bars in bars_of_pieces for bar in bars]
    encoded = [e[0][0] for e in tok.encode_batch(flat, encoder=encoder)]
    out, at = [], 0
    for bars in bars_of_pieces:
        out.append(np.asarray([t for e in encoded[at:at + len(bars)] for t in e], dtype=np.int64))
        at += len(bars)
    return out


def ubpe_tokens(tok, bars_of_pieces: list[list[list[int]]], encoder: str) -> list[int]:
    """Tokens per piece: the sum over its bars of the encoding's length."""
    return [len(ids) for ids in ubpe_ids(tok, bars_of_pieces, encoder)]


def ngram_bits(train: list[np.ndarray], heldout: list[np.ndarray], vocab_size: int) -> np.ndarray:
    """Held-out bits per piece under the lab's Kneser-Ney n-gram trained on `train`."""
    from ubpe.lab.ngram import KneserNeyLM

    model = KneserNeyLM(order=NGRAM_ORDER, discount=NGRAM_DISCOUNT).fit(train, vocab_size=vocab_size)
    return model.document_bits(heldout)


def replay_counts(sequences: list[list[int]], merges: list[tuple[int, ...]]) -> list[int]:
    """The count of each merge when standard BPE applies `merges` in order to `sequences`
    (pairs counted in every sequence, merged left to right without overlap): the "merge
    counts" two BPE learners agree on when they learn the same merges."""
    seqs = [[(t,) for t in s] for s in sequences]
    counts = []
    for merge in merges:
        pair_counts: Counter = Counter()
        for s in seqs:
            pair_counts.update(zip(s, s[1:]))
        pair = next((p for p in pair_counts if p[0] + p[1] == merge
                     and pair_counts[p] == max(pair_counts[q] for q in pair_counts
                                               if q[0] + q[1] == merge)), None)
        if pair is None:
            counts.append(0)
            continue
        counts.append(_merge_pair(seqs, pair))
    return counts


def _merge_pair(seqs: list[list[tuple[int, ...]]], pair) -> int:
    merged = 0
    for k, s in enumerate(seqs):
        out, i = [], 0
        while i < len(s):
            if i + 1 < len(s) and s[i] == pair[0] and s[i + 1] == pair[1]:
                out.append(pair[0] + pair[1])
                merged += 1
                i += 2
            else:
                out.append(s[i])
                i += 1
        seqs[k] = out
    return merged


def merge_agreement(miditok: list[tuple[int, ...]], ubpe: list[tuple[int, ...]]) -> dict:
    """How MidiTok's merges and ubpe's standard-BPE merges compare: those with ``▁``, the
    shared ones, and the first position where the orders differ."""
    plain = [m for m in miditok if METASPACE not in m]
    first = next((i for i, (a, b) in enumerate(zip(plain, ubpe)) if a != b), min(len(plain), len(ubpe)))
    return {"miditok_merges": len(miditok), "ubpe_merges": len(ubpe),
            "miditok_metaspace_merges": len(miditok) - len(plain),
            "shared_merges": len(set(plain) & set(ubpe)), "same_order_until": first}


# -- statistics ------------------------------------------------------------------------------

def cluster_bootstrap(a: np.ndarray, b: np.ndarray, clusters: Sequence[str], *,
                      n: int = BOOTSTRAP, seed: int = SEED) -> tuple[float, float, float]:
    """``(ratio, low, high)``: ``sum(a) / sum(b)`` and its 95 % percentile interval, resampling
    clusters with replacement and then pieces within each drawn cluster."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    groups = {}
    for i, c in enumerate(clusters):
        groups.setdefault(c, []).append(i)
    members = [np.asarray(v) for v in groups.values()]
    rng = np.random.default_rng(seed)
    ratios = np.empty(n)
    for r in range(n):
        idx = np.concatenate([rng.choice(m, size=len(m)) for m in
                              (members[k] for k in rng.integers(0, len(members), len(members)))])
        ratios[r] = a[idx].sum() / b[idx].sum()
    low, high = np.percentile(ratios, [2.5, 97.5])
    return float(a.sum() / b.sum()), float(low), float(high)


def verdict(low: float, high: float) -> str:
    if high < 1:
        return "ubpe shorter"
    if low > 1:
        return "MidiTok shorter"
    return "not separable"


# -- the experiment --------------------------------------------------------------------------

def run(rows: list[dict], merges: Sequence[int] = MERGES, progress: bool = True) -> dict:
    """Every tokenisation of the held-out pieces at every setting, and the merge agreement."""
    tokenizer = _tokenizer()
    base = len(tokenizer)
    bars = piece_bars(tokenizer, [r["path"] for r in rows])
    raw = raw_corpus(rows, bars)
    from ubpe.lab.datasets.split import split_corpus

    train = split_corpus(_spec(), raw, "train", max_symbols=math.inf)
    heldout = split_corpus(_spec(), raw, "heldout", max_symbols=math.inf)
    index = {r["name"]: i for i, r in enumerate(rows)}
    train_paths = [rows[index[n]]["path"] for n in train.doc_ids]
    train_piece_bars = [bars[index[n]] for n in train.doc_ids]
    train_bars = [bar for piece in train_piece_bars for bar in piece]
    held = [rows[index[n]] for n in heldout.doc_ids]
    held_bars = [bars[index[n]] for n in heldout.doc_ids]
    table, agreement = [], []
    for k in merges:
        started = time.perf_counter()
        mt = miditok_bpe(train_paths, base + 1 + k)
        mt_size = miditok_bpe(train_paths, base + k)
        standard = fit_standard(train_bars, base, k)
        default = fit_default(train_bars, base, len(standard.vocabulary))
        agreement.append({"merges": k, **merge_agreement(miditok_merges(mt), ubpe_merges(standard, base)),
                          "miditok_vocab": len(mt), "miditok_size_vocab": len(mt_size),
                          "standard_vocab": len(standard.vocabulary), "default_vocab": len(default.vocabulary)})
        fitted = {"standard": standard, "default": default}
        ids, bits = {}, {}
        for column, name, encoder in UBPE_ROWS:
            tok = fitted[name]
            ids[column] = ubpe_ids(tok, held_bars, encoder)
            bits[column] = ngram_bits(ubpe_ids(tok, train_piece_bars, encoder), ids[column], len(tok.vocabulary))
        for column, tok in (("miditok", mt), ("miditok_size", mt_size)):
            ids[column] = [miditok_ids(tok, row["path"]) for row in held]
            bits[column] = ngram_bits([miditok_ids(tok, p) for p in train_paths], ids[column], len(tok))
        for j, row in enumerate(held):
            table.append({"merges": k, "piece": row["name"], "collection": row["collection"],
                          "remi": sum(len(bar) for bar in held_bars[j]),
                          **{column: len(ids[column][j]) for column in ids},
                          **{f"{column}_bits": float(bits[column][j]) for column in bits}})
        if progress:
            print(f"  {k} merges: {time.perf_counter() - started:.0f} s", flush=True)
    return {"base_vocab": base, "table": table, "agreement": agreement, "train": train, "heldout": heldout,
            "n_pieces": len(rows)}


def summary(table) -> list[dict]:
    """Per setting and comparison: tokens per piece, the ratio with its interval, the verdict."""
    import pandas as pd

    frame = pd.DataFrame(table)
    out = []
    for k, group in frame.groupby("merges"):
        clusters = group["collection"].tolist()
        for mine, theirs, label in (("standard", "miditok", "equal merges"),
                                    ("standard", "miditok_size", "equal vocabulary size"),
                                    ("default", "miditok_size", "equal vocabulary size"),
                                    ("default_ranked", "miditok_size", "equal vocabulary size"),
                                    ("default_fewest", "miditok_size", "equal vocabulary size")):
            ratio, low, high = cluster_bootstrap(group[mine].to_numpy(), group[theirs].to_numpy(), clusters)
            bits = cluster_bootstrap(group[f"{mine}_bits"].to_numpy(), group[f"{theirs}_bits"].to_numpy(),
                                     clusters)
            symbols = group["remi"].sum()
            out.append({"merges": k, "ubpe": mine, "miditok": theirs, "at": label,
                        "pieces": len(group), "collections": group["collection"].nunique(),
                        "ubpe tokens/piece": round(group[mine].mean(), 1),
                        "MidiTok tokens/piece": round(group[theirs].mean(), 1),
                        "ratio": round(ratio, 4), "95% low": round(low, 4), "95% high": round(high, 4),
                        "pieces ubpe shorter / longer": f"{int((group[mine] < group[theirs]).sum())} / "
                                                        f"{int((group[mine] > group[theirs]).sum())}",
                        "verdict": verdict(low, high),
                        "ubpe bits/symbol": round(group[f"{mine}_bits"].sum() / symbols, 4),
                        "MidiTok bits/symbol": round(group[f"{theirs}_bits"].sum() / symbols, 4),
                        "bits ratio [95%]": f"{bits[0]:.4f} [{bits[1]:.4f}, {bits[2]:.4f}]",
                        "bits verdict": verdict(bits[1], bits[2]).replace("shorter", "fewer bits")})
    return out


def readme(result: dict, rows: list[dict], seconds: float) -> str:
    import pandas as pd

    from ubpe.lab.formatting import _table

    table = pd.DataFrame(summary(result["table"]))
    agreement = pd.DataFrame(result["agreement"])
    held = result["heldout"]
    lines = ["# MIDI: ubpe's BPE against MidiTok's, at equal merges and equal vocabulary size", "",
             f"{result['n_pieces']} pieces of music21's corpus written as MIDI by music21 "
             f"({', '.join(sorted({r['collection'].split(':')[0].split(' book')[0] for r in rows}))}); "
             f"{held.n_docs} held out by hash of the piece. REMI base vocabulary: {result['base_vocab']} ids. "
             "Generated by `python -m experiments midi` (experiments/midi.py says what each "
             f"tokenisation is) in {seconds:.0f} s.", "",
             "`standard` is ubpe's classic tokenizer at one merge per round (standard BPE) encoding by "
             "merge rank; `default` ubpe's universal tokenizer at its defaults (50 merges per round, "
             "tf-idf), `default_ranked` / `default_fewest` the same vocabulary encoded by merge rank / "
             "with the fewest tokens it allows; `miditok` MidiTok's BPE with the same number of merges, `miditok_size` with the "
             "same vocabulary size as ubpe's. Ratio: total held-out tokens, ubpe / MidiTok (below 1: "
             "ubpe shorter), with a 95 % bootstrap interval over pieces resampled within resampled "
             f"collections. Bits: held-out bits per REMI symbol under a Kneser-Ney {NGRAM_ORDER}-gram "
             "(`ubpe.lab.ngram`) trained on each tokenisation of the training pieces, and the ratio of "
             "total bits with the same interval.", "", _table(table), "",
             "## Do standard BPE and MidiTok's BPE learn the same merges?", "",
             "MidiTok's merges against ubpe's at one merge per round, on the same training bars: merges "
             "of MidiTok's `▁` bar marker, merges both learned, and how far the two orders agree "
             "(ties between equally frequent pairs are broken differently; after a `▁` merge the "
             "counts at the start of bars differ).", "", _table(agreement), ""]
    wins = table.groupby("verdict").size().to_dict()
    lines += [f"Verdicts over the {len(table)} comparisons: "
              + ", ".join(f"{v}: {n}" for v, n in sorted(wins.items())) + ".", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m experiments midi", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--results", type=Path, default=RESULTS_DIR, help="folder to write midi/ into")
    parser.add_argument("--merges", type=int, nargs="+", default=list(MERGES), help="merges per setting")
    parser.add_argument("--jobs", type=int, default=None, help="processes writing the MIDI corpus (first run)")
    parser.add_argument("--allow-dirty", action="store_true",
                        help="run from a checkout with uncommitted changes (run.json then says dirty)")
    args = parser.parse_args(argv)
    from ubpe.lab.provenance import machine, package_versions, require_clean, side_record, units_checksum
    from ubpe.lab.tables import write_csv

    import pandas as pd

    state = require_clean(args.allow_dirty)
    started = time.perf_counter()
    rows = pieces(args.jobs)
    result = run(rows, args.merges)
    seconds = time.perf_counter() - started
    out = args.results / "midi"
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.iterdir():
        if stale.is_file():
            stale.unlink()
    write_csv(pd.DataFrame(result["table"]), out / "pieces.csv")
    write_csv(pd.DataFrame(summary(result["table"])), out / "summary.csv")
    write_csv(pd.DataFrame(result["agreement"]), out / "merges.csv")
    (out / "README.md").write_text(readme(result, rows, seconds))
    data = [{"dataset": DATASET, "split": ds.split, "max_symbols": -1, "checksum": ds.checksum,
             "units_checksum": units_checksum(ds), "n_docs": ds.n_docs, "options": {}}
            for ds in (result["train"], result["heldout"])]
    info = {"experiment": "midi", "merges": list(args.merges), "git": state, "machine": machine(),
            "versions": package_versions(["numpy", "pandas", "miditok", "symusic", "tokenizers", "music21"]),
            "run": {"seconds": round(seconds, 1)}, "data": data,
            "commands": {"run": "python -m experiments midi --results results"},
            **side_record({"merges": list(args.merges)})}
    (out / "run.json").write_text(json.dumps(info, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
