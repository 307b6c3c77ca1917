"""Short, slow, readable transcriptions of ubpe 0.3.0's algorithms, kept as test oracles.

They recount everything each round exactly as the reference does, and work on plain lists:
a corpus is a list of documents, a document a list of parts, a part a list of ids.
"""

from __future__ import annotations

import math
from collections import Counter
from heapq import nlargest
from itertools import pairwise


def count_pairs(corpus):
    """``(occurrences, documents)`` Counters of adjacent pairs (pairs never cross parts)."""
    occurrences, documents = Counter(), Counter()
    for doc in corpus:
        seen = set()
        for part in doc:
            occurrences.update(pairwise(part))
            seen.update(pairwise(part))
        documents.update(seen)
    return occurrences, documents


def replace_pairs(part, batch):
    """Left-to-right, non-overlapping replacement of every pair in ``batch`` (pair -> id)."""
    out, i = [], 0
    while i < len(part):
        if i + 1 < len(part) and (part[i], part[i + 1]) in batch:
            out.append(batch[(part[i], part[i + 1])])
            i += 2
        else:
            out.append(part[i])
            i += 1
    return out


def fit_merges(corpus, n_base, n_tokens, n_candidates):
    """The reference's fit loop. Returns ``[(left, right, documents)]`` in creation order."""
    corpus = [[list(p) for p in doc] for doc in corpus]
    merges = []
    largest = n_base - 1
    while largest < n_tokens:
        occurrences, documents = count_pairs(corpus)
        candidates = nlargest(
            n_candidates, occurrences.items(), key=lambda pc: ((pc[1], -documents[pc[0]]), pc[0])
        )
        if not candidates:
            break
        taken = [candidates[0]]
        used = set(candidates[0][0])
        for (l2, r2), n2 in candidates[1:]:
            if l2 in used or r2 in used:
                continue
            if all(
                occurrences[(r2, l1)] < n2 and occurrences[(r1, l2)] < n2 for (l1, r1), _ in taken
            ):
                taken.append(((l2, r2), n2))
                used.update((l2, r2))
        batch = {}
        for pair, _ in taken:
            largest += 1
            merges.append((pair[0], pair[1], documents[pair]))
            batch[pair] = largest
        corpus = [[replace_pairs(part, batch) for part in doc] for doc in corpus]
    return merges


def weights_of(merges, n_docs):
    return [math.log((1 + n_docs) / (1 + d)) for _, _, d in merges]


def rearrange(mapper, weights, n_base, n_tokens, classic):
    """The reference's ``_rearrange_tokens_by_weight`` on ``{token: tuple}``/``{token: w}``."""
    buf = sorted(mapper.items(), key=lambda item: weights[item[0]])
    quantity = len(weights) - n_tokens + n_base
    to_delete = []
    if classic:
        for i in range(len(buf)):
            if i in to_delete:
                continue
            if len(to_delete) >= quantity:
                break
            queue = [i]
            while queue:
                to_delete.append(queue.pop())
                token = buf[to_delete[-1]][0]
                for j in range(len(buf)):
                    if j in to_delete:
                        continue
                    if token in buf[j][1]:
                        queue.append(j)
    else:
        for i in range(len(buf)):
            if len(to_delete) >= quantity:
                break
            to_delete.append(i)
    deleted = [buf[i][0] for i in to_delete]
    buf = buf[::-1]
    transformer, offset = {}, 0
    for i in range(len(buf) - len(deleted)):
        while buf[i + offset][0] in deleted:
            offset += 1
        transformer[buf[i + offset][0]] = n_base + i
    new_weights = {new: weights[old] for old, new in transformer.items()}
    new_mapper = {
        new: tuple(transformer.get(t, t) for t in mapper[old]) for old, new in transformer.items()
    }
    return new_mapper, new_weights


def universal_mapper(merges, n_base):
    pieces = {}
    for t, (left, right, _) in enumerate(merges):
        pieces[n_base + t] = pieces.get(left, (left,)) + pieces.get(right, (right,))
    return pieces


def classic_mapper(merges, n_base):
    return {n_base + t: (left, right) for t, (left, right, _) in enumerate(merges)}


def split_reference(doc, *, known_words=None, break_tokens=None, regex=None, stop_tokens=None,
                    leave_separators=True):
    """The reference's SplitPipeline on symbols (no id mapping): a list of parts.

    Known words (a dict word -> id) become ``[id]`` parts; ``regex`` is a compiled pattern
    whose ``findall`` runs on str pieces only.
    """

    def by_tokens(part, tokens):
        if not tokens:
            return [part]
        out, start = [], 0
        for i, symbol in enumerate(part):
            if symbol in tokens:
                if i != start:
                    out.append(part[start:i])
                if leave_separators:
                    out.append(part[i : i + 1])
                start = i + 1
        if start < len(part):
            out.append(part[start:])
        return out

    def split_piece(piece):
        parts = by_tokens(piece, break_tokens)
        if regex is not None:
            parts = [m for p in parts for m in (regex.findall(p) if isinstance(p, str) else [p])]
        return [q for p in parts for q in by_tokens(p, stop_tokens)]

    if not known_words:
        return [list(p) for p in split_piece(doc)]
    parts, start, i = [], 0, 0
    while i < len(doc):
        match = max((w for w in known_words if tuple(doc[i : i + len(w)]) == tuple(w)), key=len, default=None)
        if match is None:
            i += 1
            continue
        if i != start:
            parts.extend(list(p) for p in split_piece(doc[start:i]))
        if leave_separators:
            parts.append([known_words[match]])
        start = i = i + len(match)
    if start < len(doc):
        parts.extend(list(p) for p in split_piece(doc[start:]))
    return parts
