"""The fair MIDI comparison (experiments/midi.py, issue 34 point 6) on a tiny corpus written here:
ubpe at one merge per round (standard BPE) learns MidiTok's BPE merges with the same counts,
up to the two documented differences - MidiTok's ``▁`` bar marker and the order of ties - and
the clustered bootstrap and the per-piece token counts are what they claim."""

import random

import numpy as np
import pytest

pytest.importorskip("miditok", reason="the midi extra (miditok)")
symusic = pytest.importorskip("symusic")

from experiments import midi  # noqa: E402

SCALE = (60, 62, 64, 65, 67, 69, 71, 72)
K = 40


def _write_pieces(folder, n=6, bars=12, seed=0):
    """`n` short one-track pieces: random walks on a scale, in quarter and eighth notes,
    with repeated motifs (so that BPE has frequent pairs)."""
    rng = random.Random(seed)
    paths = []
    for p in range(n):
        score = symusic.Score(480)
        track = symusic.Track("piano", 0, False)
        motif = [(rng.choice(SCALE), rng.choice((240, 480))) for _ in range(4)]
        time = 0
        for bar in range(bars):
            notes = motif if bar % 2 == 0 else [(rng.choice(SCALE), rng.choice((240, 480))) for _ in range(4)]
            for pitch, duration in notes:
                track.notes.append(symusic.Note(time, duration, pitch, 80))
                time += duration
        score.tracks.append(track)
        path = folder / f"piece{p}.mid"
        score.dump_midi(str(path))
        paths.append(path)
    return paths


def _tokenizer(split):
    import miditok

    return miditok.REMI(miditok.TokenizerConfig(use_programs=True, encode_ids_split=split))


def _miditok(paths, split, merges):
    tok = _tokenizer(split)
    base = len(tok)
    extra = 1 if split == "bar" else 0  # the ▁ id of the Metaspace pre-tokenizer
    tok.train(vocab_size=base + extra + merges, model="BPE", files_paths=list(paths))
    return tok, base


def test_standard_bpe_learns_miditoks_merges_with_the_same_counts(tmp_path):
    paths = _write_pieces(tmp_path)
    tok, base = _miditok(paths, "no", K)
    sequences = [bars[0] for bars in midi.piece_bars(_tokenizer("no"), paths)]  # one word per file
    theirs = midi.miditok_merges(tok)
    ours = midi.ubpe_merges(midi.fit_standard(sequences, base, K), base)
    assert len(theirs) == len(ours) == K and midi.METASPACE not in {t for m in theirs for t in m}
    counts_theirs = midi.replay_counts(sequences, theirs)
    counts_ours = midi.replay_counts(sequences, ours)
    assert counts_theirs == counts_ours  # the same count at every step
    assert all(c >= 2 for c in counts_ours)
    # the orders agree until the first tie broken differently: there both merges were
    # possible and equally frequent
    first = next((i for i, (a, b) in enumerate(zip(theirs, ours)) if a != b), K)
    assert theirs[:first] == ours[:first]
    if first < K:
        assert _count_before(sequences, ours[:first], theirs[first]) == \
            _count_before(sequences, ours[:first], ours[first]) == counts_ours[first]


def _count_before(sequences, applied, merge):
    """How often `merge` could be made (its best pair's count) after `applied` merges."""
    from collections import Counter

    seqs = [[(t,) for t in s] for s in sequences]
    for m in applied:
        pairs = Counter(p for s in seqs for p in zip(s, s[1:]) if p[0] + p[1] == m)
        midi._merge_pair(seqs, pairs.most_common(1)[0][0])
    pairs = Counter(p for s in seqs for p in zip(s, s[1:]) if p[0] + p[1] == merge)
    return max(pairs.values(), default=0)


def test_with_bars_miditok_spends_an_id_and_merges_on_its_bar_marker(tmp_path):
    paths = _write_pieces(tmp_path)
    tok, base = _miditok(paths, "bar", K)
    assert len(tok) == base + 1 + K  # ▁ takes one id
    bars = [bar for piece in midi.piece_bars(_tokenizer("bar"), paths) for bar in piece]
    assert all(bar[0] == bars[0][0] for bar in bars)  # every bar starts with its Bar token
    theirs = midi.miditok_merges(tok)
    ours = midi.ubpe_merges(midi.fit_standard(bars, base, K), base)
    agreement = midi.merge_agreement(theirs, ours)
    assert agreement["miditok_merges"] == agreement["ubpe_merges"] == K
    assert agreement["miditok_metaspace_merges"] >= 1  # at least ▁ + Bar
    first_marker = next(i for i, m in enumerate(theirs) if midi.METASPACE in m)
    assert theirs[:first_marker] == ours[:first_marker]  # identical until ▁ enters


def test_tokens_per_piece_sum_the_bars(tmp_path):
    paths = _write_pieces(tmp_path, n=3)
    tokenizer = _tokenizer("bar")
    bars = midi.piece_bars(tokenizer, paths)
    flat = [bar for piece in bars for bar in piece]
    tok = midi.fit_standard(flat, len(tokenizer), 10)
    counts = midi.ubpe_tokens(tok, bars, "ranked")
    remi = [sum(len(b) for b in piece) for piece in bars]
    assert all(0 < c < r for c, r in zip(counts, remi))
    for piece, count in zip(bars, counts):
        assert count == sum(len(tok.encode(bar, encoder="ranked")[0][0]) for bar in piece)


def test_cluster_bootstrap():
    rng = np.random.default_rng(1)
    b = rng.integers(50, 100, 40).astype(float)
    a = b * 0.8
    clusters = [f"c{i % 5}" for i in range(40)]
    ratio, low, high = midi.cluster_bootstrap(a, b, clusters, n=200)
    assert ratio == pytest.approx(0.8) and low == pytest.approx(0.8) and high == pytest.approx(0.8)
    a = b * rng.uniform(0.7, 1.1, 40)
    ratio, low, high = midi.cluster_bootstrap(a, b, clusters, n=200)
    assert low < ratio < high and ratio == pytest.approx(a.sum() / b.sum())
    assert midi.verdict(0.8, 0.9) == "ubpe shorter" and midi.verdict(1.01, 1.2) == "MidiTok shorter"
    assert midi.verdict(0.9, 1.1) == "not separable"


def test_the_experiment_on_a_tiny_corpus(tmp_path):
    paths = _write_pieces(tmp_path, n=14)
    rows = [{"name": f"piece{i}", "collection": f"set{i % 3}", "path": path}
            for i, path in enumerate(paths)]
    result = midi.run(rows, merges=(12,), progress=False)
    held = result["heldout"].doc_ids
    assert held and len(result["table"]) == len(held)
    assert not set(held) & set(result["train"].doc_ids)
    for row in result["table"]:
        assert 0 < row["standard"] < row["remi"] and 0 < row["miditok"] < row["remi"]
        # the fewest tokens the universal vocabulary allows bound its other encoders
        assert 0 < row["default_fewest"] <= min(row["default"], row["default_ranked"]) <= row["remi"]
        # the n-gram proxy prices every tokenisation of the piece: positive, finite bits
        assert all(0 < row[f"{c}_bits"] < float("inf") for c in midi.TOKENISATIONS)
    (agreement,) = result["agreement"]
    assert agreement["ubpe_merges"] == agreement["miditok_merges"] == 12
    assert agreement["miditok_vocab"] == agreement["standard_vocab"] + 1 == agreement["miditok_size_vocab"] + 1
    assert agreement["default_vocab"] <= agreement["standard_vocab"]
    table = midi.summary(result["table"])
    assert {row["at"] for row in table} == {"equal merges", "equal vocabulary size"}
    assert {row["ubpe"] for row in table} == {"standard", "default", "default_ranked", "default_fewest"}
    assert all(row["ubpe bits/symbol"] > 0 and row["MidiTok bits/symbol"] > 0 for row in table)
    assert "## Do standard BPE" in midi.readme(result, rows, 1.0)
