"""llama.cpp's ``gemma4`` tokenizer (Gemma 4's GGUF), id for id.

What ``tokenizer.ggml.model == "gemma4"`` means in ``llama-vocab.cpp``: a BPE vocabulary
(``LLAMA_VOCAB_TYPE_BPE``) with the ``gemma4`` pre-tokenizer, which is sentencepiece-style BPE
driven by a merges list:

* every space becomes ``▁`` (``escape_whitespaces``); no dummy prefix (BPE types never add
  one);
* the text is cut into lines and runs of newlines (``[^\\n]+|[\\n]+``): merges never cross a
  line end, and a run of newlines that is itself a token is that token whole;
* within a piece the symbols are UTF-8 *characters* (``byte_encode = false``), merged by the
  merges list's ranks, the lowest first, the leftmost on ties (`ubpe_native._merges.PairMerges`,
  the loop of every llama.cpp BPE model here);
* a symbol that is no token is written as its bytes' ``<0xXX>`` tokens (byte fallback; a
  byte without one is dropped);
* user-defined tokens are cut out first, control tokens with ``parse_special``; a BOS goes
  in front with ``add_special`` even when the file says ``add_bos_token = false`` (llama.cpp's
  workaround for Gemma 4).

>>> tok = Gemma4BPE(["<0x63>", "a", "b", "▁", "ab", "▁ab", "\\n", "\\n\\n"], ["a b", "▁ ab"],
...                 token_types=np.array([6, 1, 1, 1, 1, 1, 1, 1]))
>>> tok.encode("ab ab\\n\\nc")
[4, 5, 7, 0]
>>> tok.decode([4, 5, 7, 0])
'ab ab\\n\\nc'
"""

from __future__ import annotations

import itertools
from array import array

from ubpe_native._merges import PairMerges, pack_units
from ubpe_native._numpy import np

from .._lazy import LazyPattern
from ..errors import ModelFormatError
from .ranked_bpe import ImportedBPE, one_space_lines, string_table, whole_words
from .char_model import SPACE, CharModel, _i32, blob_offsets

TYPE_CHECKING = False  # (typing's, without importing typing)
if TYPE_CHECKING:
    from typing import Any

# the gemma4 pre-tokenizer's one regex (llm_tokenizer_bpe, LLAMA_VOCAB_PRE_TYPE_GEMMA4)
_LINES = LazyPattern(r"[^\n]+|[\n]+")  # (compiled for the first text of several lines)


def _looked_up_in_c(texts: list[str], merges: list[str]) -> tuple[list, list] | None:
    """The merge lines' ``(left, right, merged)`` ids (int32 arrays) looked up in C
    (`ubpe_native._tables.StringIds`: no Python string per rule; 514,906 rules of gemma-4), and
    per column the ``(rule, text)`` of each that is no token (-1 in the array); None where a
    line is not one space between two texts or holds a NUL (the caller's Python path, which
    names a bad line). The lines are joined by NUL, not newline: gemma-4 merges newlines."""
    if not merges:
        return None
    data = "\0".join(merges).encode("utf-8", "surrogatepass")
    lines = one_space_lines(data, len(merges), 0)
    table = string_table(texts) if lines is not None else None
    if table is None:
        return None
    starts, cuts, ends = lines
    columns = table.pair_ids(data, starts, cuts, ends)

    def text(k: int, column: int) -> str:
        first, cut, end = int(starts[k]), int(cuts[k]), int(ends[k])
        piece = data[first:cut] if column == 0 else data[cut + 1:end] if column == 1 else data[first:cut] + data[cut + 1:end]
        return piece.decode("utf-8", "surrogatepass")

    missing = [[(int(k), text(int(k), column)) for k in np.flatnonzero(ids < 0)] for column, ids in enumerate(columns)]
    return list(columns), missing


class Gemma4BPE(CharModel):
    """llama.cpp's ``gemma4`` tokenizer (see the module docstring): ``tokens`` and the
    ``"left right"`` ``merges`` lines in rank order, as the GGUF file holds them."""

    variant = "gguf:gemma4"

    def __init__(self, tokens: list[str], merges: list[str], *, scores: np.ndarray | None = None,
                 token_types: np.ndarray | None = None, specials: dict[str, int | None] | None = None,
                 flags: dict[str, Any] | None = None, name: str = "", where: str = "<tokens>"):
        flags = dict(flags or {})
        # llama.cpp reads add_space_prefix (the detokenizer strips a space when it is set) but
        # its BPE tokenizer never adds one; a BOS is always added (its Gemma 4 workaround)
        flags.update(add_space_prefix=bool(flags.get("add_space_prefix") or False), add_bos=True)
        self._init_char_model(tokens, scores, token_types, specials, flags, name, None, where, None)
        self.n_merges = len(merges)
        self._merge_lines = merges
        self._kernel = self._build_kernel(merges)

    def _byte_token(self, byte: int) -> int | None:
        """llama.cpp's ``<0xXX>`` token of a byte (no second try with the byte as text)."""
        return self._text_to_id.get(f"<0x{byte:02X}>")

    def _build_kernel(self, merges: list[str]) -> PairMerges:
        """The merge rules as pairs of ids; a merge operand or result that is no token gets an
        id ``n + j`` that is written out as its bytes' ``<0xXX>`` tokens."""
        n = len(self.texts)
        text_to_id = self._text_to_id
        extra: dict[str, int] = {}
        looked_up = _looked_up_in_c(self.texts, merges)
        if looked_up is None:  # (the lines' own checks, in Python)
            lefts, rights, merged = self._merge_texts()
            if len(lefts) != len(merges):
                bad = next(k for k, line in enumerate(merges) if line.find(" ", 1) <= 0)
                raise ModelFormatError(f"{self.where}: merge {bad} ({merges[bad][:40]!r}) is not two symbols "
                                       "separated by a space")
            columns = [list(map(text_to_id.get, column)) for column in (lefts, rights, merged)]
            missing = [[(k, column_texts[k]) for k, token in enumerate(ids) if token is None]
                       for ids, column_texts in zip(columns, (lefts, rights, merged))]
        else:
            columns, missing = looked_up
        # an operand or result that is no token: a new id, in the order of the columns and the rules
        for ids, column_missing in zip(columns, missing):
            for k, text in column_missing:
                ids[k] = extra.setdefault(text, n + len(extra))
        left, right, result = columns
        one_char = {t for t in self.texts if len(t) == 1}
        one_char.update(text for column_missing in missing[:2] for _, text in column_missing if len(text) == 1)
        units = sorted(one_char)
        unit_ids = [token if token is not None else extra[text]
                    for text, token in zip(units, map(text_to_id.get, units))]
        expansions = [[t for t in map(self._byte_token, text.encode("utf-8", "surrogatepass")) if t is not None]
                      for text in extra]
        fallback = [self._byte_token(b) for b in range(256)]
        newline_runs = [(t.encode("utf-8"), i) for i, t in enumerate(self.texts) if t and not t.strip("\n")]
        encoded_units = [c.encode("utf-8", "surrogatepass") for c in units]
        return PairMerges(
            n, _i32(left), _i32(right), _i32(result), np.arange(len(left), dtype=np.int64),
            blob_offsets(expansions), _i32([t for e in expansions for t in e]),
            pack_units(encoded_units), _i32(unit_ids), _i32([-1 if t is None else t for t in fallback]),
            True, *whole_words(newline_runs))

    def _prepare(self, fragments: list[str | int]) -> list[str | int]:
        """Spaces become ``▁`` (no dummy prefix)."""
        return [f if isinstance(f, int) else f.replace(" ", SPACE) for f in fragments]

    def _native(self, text: str) -> list[int]:
        """Each run of newlines and each line between apart (a text of one line: itself, with
        no regex or arrays in between: ``encode`` of a short text pays the call)."""
        data = text.encode("utf-8", "surrogatepass")
        if "\n" not in text:
            bounds = array("q", (0, len(data)) if data else (0,))
        else:
            bounds = array("q", (0,))
            bounds.extend(itertools.accumulate(len(p.encode("utf-8", "surrogatepass")) for p in _LINES.findall(text)))
        return self._kernel.encode(data, bounds, as_list=True)

    def _parts(self, text: str) -> list[np.ndarray]:
        return [part for piece in _LINES.findall(text) for part in CharModel._parts(self, piece)]

    def _piece_order(self, model_ids: list[int]) -> np.ndarray:
        """By the first merge that makes each piece (pieces no merge makes come last)."""
        rank_of: dict[str, int] = {}
        for rank, text in enumerate(self._merge_texts()[2]):
            rank_of.setdefault(text, rank)
        ranks = [rank_of.get(self.texts[i], len(rank_of)) for i in model_ids]
        return np.argsort(np.asarray(ranks, dtype=np.int64), kind="stable")

    # the merge lines' columns and the merges they record, as ImportedBPE reads them (and its
    # merge_lines, which the writers read)
    _merge_texts = ImportedBPE._merge_texts
    _recorded_merges = ImportedBPE._recorded_merges
    merge_lines = ImportedBPE.merge_lines

    def describe(self) -> dict[str, Any]:
        info = super().describe()
        info.update(n_merges=self.n_merges, pre="gemma4")
        return info

