"""Fitting byte-level BPE: pre-tokenized UTF-8 pieces through ubpe's fit kernel.

Each text is one document; its pattern pieces (as UTF-8 bytes) are the parts that pairs never
cross, and special tokens are cut out first. Token ids are the creation order, cut at
``n_tokens`` (the fit may overshoot within its last round); no idf rearrangement happens, so
ids are tiktoken ranks.

>>> vocabulary, specials = fit_bytelevel(["hello hello"], n_tokens=258, pattern="gpt2",
...                                      special_tokens=["<|end|>"], quiet=True)
>>> len(vocabulary), specials
(258, {'<|end|>': 258})
>>> bytes(vocabulary.piece(256).tolist())
b'lo'
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from collections import Counter
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet

from ubpe_native._numpy import ID_DTYPE, np

from .._lazy import regex
from ..errors import InvalidParameterError, ModelFormatError, SymbolTypeError
from ..text.patterns import resolve_pattern, without_surrogates
from ..text.scanner import native_bounds, whole_matches
from ..text.specials import MAX_RANK, special_regex

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:  # (the fit and the splitter are imported by the fit: loading a file needs neither)
    from ..splitting import SplitBatch
    from ..vocabulary import Vocabulary

N_BYTES = 256


def fit_bytelevel(
    texts: Iterable[str],
    *,
    n_tokens: int,
    n_candidates: int = 50,
    pattern: str,
    special_tokens: Iterable[str] | Mapping[str, int] = (),
    quiet: bool = False,
) -> tuple[Vocabulary, dict[str, int]]:
    """The vocabulary (``n_tokens`` ids, the 256 bytes included) and the special tokens'
    ids: after the mergeable tokens in the order given, unless a mapping fixes them."""
    from ..fit import corpus_parts, fit_vocabulary  # (the fit's modules when fitting: loading needs none)

    if isinstance(n_tokens, bool) or not isinstance(n_tokens, int):
        raise InvalidParameterError(f"`n_tokens` must be an int, not {type(n_tokens).__name__}")
    if not N_BYTES <= n_tokens <= MAX_RANK:
        raise InvalidParameterError(f"`n_tokens` must be in {N_BYTES}..{MAX_RANK}, got {n_tokens}")
    if isinstance(texts, str):
        raise SymbolTypeError("`texts` must be an iterable of str, not one str")
    pat_str = resolve_pattern(pattern)
    if isinstance(special_tokens, str):
        raise SymbolTypeError("`special_tokens` must be a collection of str, not one str")
    # a set has no order of its own (it would follow PYTHONHASHSEED): its names are sorted
    names = sorted(special_tokens) if isinstance(special_tokens, AbstractSet) else list(special_tokens)
    bad = [n for n in names if not isinstance(n, str) or not n]
    if bad:
        raise InvalidParameterError(f"special tokens must be non-empty str, got {bad[0]!r}")
    if len(set(names)) != len(names):
        twice = sorted(n for n, count in Counter(names).items() if count > 1)
        raise InvalidParameterError(f"special tokens given twice: {twice[:3]} (ids would leave a hole)")
    cut_specials = special_regex(frozenset(names)) if names else None
    split = functools.partial(split_texts, pattern=pat_str, cut_specials=cut_specials)
    fitted = fit_vocabulary(
        corpus_parts(texts, split, empty_message="fit needs at least one text"),
        n_base=N_BYTES,
        n_tokens=n_tokens - 1,  # the fit loop stops once the largest id reaches this
        n_candidates=n_candidates,
        quiet=quiet,
        description="fit byte-level",
        unique_pieces=True,
    )
    vocabulary = first_tokens(fitted, n_tokens - N_BYTES)
    if isinstance(special_tokens, Mapping):
        specials = dict(special_tokens)
    else:  # ids right after the mergeable tokens
        specials = {name: len(vocabulary) + i for i, name in enumerate(names)}
    return vocabulary, specials


def split_texts(
    texts: list[str], first_doc: int = 0, *, pattern: str, cut_specials: regex.Pattern | None
) -> SplitBatch:
    """:func:`split_corpus` after checking that every text is a str (``texts`` may be one
    chunk of a streamed corpus, ``first_doc`` its first document's index)."""
    for text in texts:
        if not isinstance(text, str):
            raise SymbolTypeError(f"every text must be a str, got {type(text).__name__}")
    return split_corpus(texts, pattern, cut_specials)


def split_corpus(texts: list[str], pattern: str, cut_specials: regex.Pattern | None) -> SplitBatch:
    """Every text's pre-tokenized pieces as the parts of one document, in UTF-8 bytes; special
    tokens are cut out first. Presets are split by the kernel's scanner (as in
    :mod:`~ubpe.text.scanner`), other patterns by the `regex` module (whole matches, as
    ``scanner.whole_matches`` finds them); all bytes are
    joined once at the end, which keeps many short texts cheap."""
    from ..splitting import SplitBatch

    chunks: list[bytes] = []
    piece_lengths: list[int] = []
    pieces_per_doc = np.zeros(len(texts) + 1, dtype=np.int64)
    splitter = regex.compile(pattern)
    for d, text in enumerate(texts):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = without_surrogates(text)
        count = 0
        for segment in cut_specials.split(text) if cut_specials is not None else [text]:
            data = segment.encode("utf-8")
            bounds = native_bounds(data, pattern)
            if bounds is not None:
                chunks.append(data)
                lengths = np.diff(bounds).tolist()
            else:
                encoded = [piece.encode("utf-8") for piece in whole_matches(splitter, segment)]
                chunks.extend(encoded)
                lengths = list(map(len, encoded))
            piece_lengths.extend(lengths)
            count += len(lengths)
        pieces_per_doc[d + 1] = count
    part_offsets = np.zeros(len(piece_lengths) + 1, dtype=np.int64)
    np.cumsum(piece_lengths, out=part_offsets[1:])
    return SplitBatch(
        tokens=np.frombuffer(b"".join(chunks), dtype=np.uint8).astype(ID_DTYPE),
        part_offsets=part_offsets,
        part_is_separator=np.zeros(len(piece_lengths), dtype=bool),
        doc_part_offsets=np.cumsum(pieces_per_doc),
    )


def first_tokens(vocabulary: Vocabulary, n_merged: int) -> Vocabulary:
    """The first ``n_merged`` tokens in creation order (later ones are built only from
    earlier ones, so the cut is a vocabulary of its own)."""
    n = min(n_merged, vocabulary.n_merged)
    end = int(vocabulary.piece_offsets[n])
    from ..vocabulary import Vocabulary  # (not at import: it imports dataclasses)
    return Vocabulary(
        vocabulary.n_base,
        vocabulary.merges[:n],
        vocabulary.piece_offsets[: n + 1],
        vocabulary.piece_symbols[:end],
        vocabulary.weights[:n],
        vocabulary.ranks[:n],
    )


def ranks_vocabulary(mergeable_ranks: Mapping[bytes, int]) -> tuple[Vocabulary, np.ndarray]:
    """The vocabulary of tiktoken's ``mergeable_ranks`` (byte ``b`` at id ``b``, merged
    tokens in rank order) and the rank of every vocabulary id.

    >>> ranks = {bytes([b]): 255 - b for b in range(256)} | {b"ab": 300}
    >>> vocabulary, token_ids = ranks_vocabulary(ranks)
    >>> vocabulary.pieces(), token_ids[[0, 97, 256]].tolist()
    ({256: (97, 98)}, [255, 158, 300])
    """
    for piece, rank in mergeable_ranks.items():
        if not isinstance(piece, bytes) or not piece:
            raise ModelFormatError(f"a mergeable token must be non-empty bytes, got {piece!r}")
        if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) or not 0 <= rank <= MAX_RANK:
            raise ModelFormatError(f"token {piece!r} has an invalid rank {rank!r}")
    lengths = np.fromiter(map(len, mergeable_ranks), dtype=np.int64, count=len(mergeable_ranks))
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    pieces = np.frombuffer(b"".join(mergeable_ranks), dtype=np.uint8)
    ranks = np.fromiter(mergeable_ranks.values(), dtype=np.int64, count=len(mergeable_ranks))
    return arrays_vocabulary(pieces, offsets, ranks)


def arrays_vocabulary(pieces: np.ndarray, offsets: np.ndarray, ranks: np.ndarray) -> tuple[Vocabulary, np.ndarray]:
    """:func:`ranks_vocabulary` of mergeable tokens given as arrays, with no Python object per
    token: token ``k``'s bytes are ``pieces[offsets[k]:offsets[k + 1]]`` (uint8, int64
    offsets), its rank ``ranks[k]``. Pieces must be non-empty and distinct, ranks distinct
    and in 0..MAX_RANK, and every single byte a token.

    >>> pieces = np.frombuffer(bytes(range(256)) + b"ab", np.uint8)
    >>> vocabulary, token_ids = arrays_vocabulary(pieces, np.r_[0:257, 258], np.r_[0:256, 300])
    >>> vocabulary.pieces(), token_ids[[97, 256]].tolist()
    ({256: (97, 98)}, [97, 300])
    """
    from ubpe_native._base64_lines import first_repeat

    lengths = np.diff(offsets)
    if len(lengths) and lengths.min() < 1:
        raise ModelFormatError("a mergeable token must be non-empty bytes, got b''")
    if len(ranks) != len(lengths):
        raise ModelFormatError(f"{len(ranks)} ranks for {len(lengths)} mergeable tokens")
    if len(ranks) and (ranks.min() < 0 or ranks.max() > MAX_RANK):
        bad = ranks[(ranks < 0) | (ranks > MAX_RANK)][0]
        raise ModelFormatError(f"a mergeable token has an invalid rank {bad}")
    if np.all(ranks[1:] > ranks[:-1]):  # in rank order, as files are: distinct, no sort
        by_rank = np.arange(len(ranks))
    else:
        by_rank = np.argsort(ranks, kind="stable")
        repeated = np.flatnonzero(ranks[by_rank][1:] == ranks[by_rank][:-1])
        if len(repeated):
            raise ModelFormatError(f"rank {ranks[by_rank][repeated[0]]} is given to two tokens")
    again = first_repeat(pieces, offsets)
    if again >= 0:
        raise ModelFormatError(f"token {bytes(pieces[offsets[again]:offsets[again + 1]])!r} has two ranks")
    single = lengths == 1
    byte_ranks = np.full(N_BYTES, -1, dtype=np.int64)
    byte_ranks[pieces[offsets[:-1][single]]] = ranks[single]
    missing = np.flatnonzero(byte_ranks < 0)
    if len(missing):
        raise ModelFormatError(
            f"{len(missing)} single bytes have no rank (e.g. {bytes([missing[0]])!r}); "
            "byte-level BPE needs all 256"
        )
    merged = by_rank[~single[by_rank]]  # the merged tokens in rank order
    merged_pieces, merged_offsets = gather_pieces(pieces, offsets, merged)
    from ..vocabulary import Vocabulary  # (not at import: it imports dataclasses)
    vocabulary = Vocabulary.from_arrays(
        N_BYTES, merged_offsets, merged_pieces.astype(ID_DTYPE),
        ranks=np.arange(len(merged), dtype=np.int64),  # rank order is creation order
    )
    return vocabulary, np.concatenate([byte_ranks, ranks[merged]])


def gather_pieces(pieces: np.ndarray, offsets: np.ndarray, which: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The pieces ``which`` (indices) of flat pieces, flat in that order: ``(pieces, offsets)``,
    gathered at once (one range per piece).

    >>> gathered, offsets = gather_pieces(np.frombuffer(b"abcde", np.uint8), np.array([0, 1, 3, 5]), np.array([2, 0]))
    >>> bytes(gathered), offsets.tolist()
    (b'dea', [0, 2, 3])
    """
    lengths = offsets[which + 1] - offsets[which]
    new_offsets = np.zeros(len(which) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    positions = np.repeat(offsets[which] - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
    return pieces[positions], new_offsets
