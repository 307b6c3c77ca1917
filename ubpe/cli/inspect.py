"""``ubpe inspect``: sizes and settings, longest tokens, weights, merge trees, coverage, ambiguity."""

from __future__ import annotations

import argparse
import json
import math
import sys

from ..io import FORMATS, detect
from ..errors import UBPEError
from ..pieces import Inventory
from .inputs import CLIError, load_model, parse_ints, read_docs, unescape

TYPE_CHECKING = False  # (typing's, without importing typing: ~1.5 ms of a cold load)
if TYPE_CHECKING:
    from typing import Any

# --ambiguity: exact counts with more digits than this are shown as a power of ten
MAX_COUNT_DIGITS = 30
# marks a merge-tree node whose split is derived, not recorded (e.g. models from .tiktoken)
DERIVED_MARK = "  ~"


def run(args: argparse.Namespace) -> int:
    model = load_model(args.model)
    table = TokenTable(model.inventory())
    report: dict[str, Any] = {
        "model": args.model, "format": FORMATS[detect(args.model)].title, "variant": model.variant,
        **model.describe(),
    }
    longest = sorted(table.ids, key=lambda t: (-table.lengths[t], t))[: args.top]
    report["longest"] = [{"id": t, "length": table.lengths[t], "piece": show_piece(table.pieces[t])} for t in longest]
    if table.weights:
        heaviest = sorted(table.weights, key=lambda t: (-table.weights[t], t))[: args.top]
        report["top_weights"] = [
            {"id": t, "weight": table.weights[t], "piece": show_piece(table.pieces[t])} for t in heaviest
        ]
    report["trees"] = {spec: table.tree(resolve_token(model, table, spec)) for spec in args.tree or []}
    if args.coverage:
        report["coverage"] = coverage(model, args)
    if args.ambiguity:
        report["ambiguity"] = ambiguity_report(model, args)
    if args.format == "json":
        sys.stdout.write(json.dumps(report, ensure_ascii=False, indent=1) + "\n")
    else:
        sys.stdout.write(format_report(report))
    return 0


def show_piece(piece: Any) -> str:
    """A token's piece for listings: quoted text (escapes visible), or ``[3 17 4]``.

    >>> show_piece(" the"), show_piece(b"\\xe4"), show_piece([3, 17])
    ("' the'", "b'\\\\xe4'", '[3 17]')
    """
    if isinstance(piece, str):
        return repr(piece)
    if isinstance(piece, bytes):
        try:
            return repr(piece.decode("utf-8"))
        except UnicodeDecodeError:
            return repr(piece)
    return "[" + " ".join(str(s) for s in piece) + "]"


class TokenTable(Inventory):
    """A tokenizer's inventory with merge trees (recorded merges, else derived splits)."""

    def __init__(self, inventory: Inventory):
        super().__init__(**vars(inventory))
        self.by_piece: dict[Any, int] = {}
        for t in self.ids:
            self.by_piece.setdefault(_key(self.pieces[t]), t)

    def children(self, token: int) -> tuple[tuple[int, int] | None, bool]:
        """The pair ``token`` merges and whether it is recorded (else derived from pieces:
        the split into two tokens whose larger id is smallest)."""
        if token in self.base:
            return None, True
        if token in self.merges:
            return self.merges[token], True
        piece = self.pieces[token]
        best = None
        for cut in range(1, len(piece)):
            left, right = self.by_piece.get(_key(piece[:cut])), self.by_piece.get(_key(piece[cut:]))
            if left is not None and right is not None and left != token and right != token:
                if best is None or max(left, right) < max(best):
                    best = (left, right)
        return best, False

    def tree(self, token: int) -> list[str]:
        """The merge tree of ``token``, one node per line, drawn with box characters."""
        lines = [self._node(token)]
        self._grow(token, "", lines, depth=0)
        if any(line.endswith(DERIVED_MARK) for line in lines):
            lines.append(f"({DERIVED_MARK.strip()}: no merge recorded, split derived from the pieces)")
        return lines

    def _node(self, token: int) -> str:
        pair, recorded = self.children(token)
        mark = DERIVED_MARK if pair and not recorded else ""
        return f"{token} {show_piece(self.pieces[token])}{mark}"

    def _grow(self, token: int, prefix: str, lines: list[str], depth: int) -> None:
        pair, recorded = self.children(token)
        if pair is None and token not in self.base:
            # trimming dropped the tokens it was built from, and no two tokens spell it
            lines.append(prefix + "└── (its parts are not in the vocabulary)")
        if pair is None or depth > len(self.ids):
            return
        for index, child in enumerate(pair):
            last = index == 1
            lines.append(prefix + ("└── " if last else "├── ") + self._node(child))
            self._grow(child, prefix + ("    " if last else "│   "), lines, depth + 1)


def _key(piece: Any) -> Any:
    return piece if isinstance(piece, (str, bytes)) else tuple(piece)


def resolve_token(model: Any, table: TokenTable, spec: str) -> int:
    """A token by id (an integer) or by its piece (text; with a model of ints, ``[3 17]``)."""
    stripped = spec.strip()
    if stripped.lstrip("-").isdigit():
        token = int(stripped)
        if token not in table.pieces:
            raise CLIError(f"token {token} is not in the vocabulary")
        return token
    piece: Any = tuple(parse_ints(stripped.replace(" ", ","), "--tree")) if stripped.startswith("[") else unescape(spec)
    try:
        return model.piece_to_id(piece)
    except UBPEError:
        raise CLIError(f"no token stands for {spec!r}") from None


def coverage(model: Any, args: argparse.Namespace) -> dict[str, Any]:
    """How a held-out file encodes: tokens per symbol, share of the vocabulary used, and how
    many documents hold symbols outside the alphabet (those are skipped)."""
    docs = read_docs(args.coverage, ints=model.symbol_type is int, docs_per=args.docs_per, glob=args.glob)
    known = [d for d in docs if model.covers(d)]
    results = model.encode_batch_with(known, args.encoder)
    tokens = [encodings[0][0] for encodings in results]
    n_symbols = sum(model.n_symbols(d) for d in known)
    n_tokens = sum(len(t) for t in tokens)
    used = {t for seq in tokens for t in seq}
    return {
        "files": ", ".join(args.coverage),
        "documents": len(docs),
        "documents skipped (symbols outside the alphabet)": len(docs) - len(known),
        "symbols": n_symbols,
        "tokens": n_tokens,
        "tokens per symbol": round(n_tokens / n_symbols, 4) if n_symbols else None,
        "distinct tokens used": len(used),
        "share of the vocabulary used": round(len(used) / model.n_vocab, 4),
    }


def ambiguity_report(model: Any, args: argparse.Namespace) -> dict[str, Any]:
    """How ambiguous the documents of some files are (``ubpe.encoders.ambiguity``): the
    segmentations and their entropy per symbol, how likely the model's own encoding is. Needs
    the model's ``ambiguity`` (ubpe and imported models)."""
    if not model.has_ambiguity:
        raise CLIError(f"--ambiguity needs segmentation lattices, which {model.variant} models do not have")
    docs = read_docs(args.ambiguity, ints=model.symbol_type is int, docs_per=args.docs_per, glob=args.glob)
    rows = []
    for doc in docs:
        if not model.covers(doc):
            continue
        a = model.ambiguity(doc, temperature=args.temperature)
        if a.n_symbols == 0:
            continue
        count = a.n_segmentations
        shown = str(count) if len(str(count)) <= MAX_COUNT_DIGITS else f"~1e{a.log_n / math.log(10):.1f}"
        rows.append({"symbols": a.n_symbols, "segmentations": shown, "log_n": round(a.log_n, 4),
                     "entropy": round(a.entropy, 4), "p(best)": a.best_probability,
                     "p(own encoding)": a.encoding_probability})
    n_symbols = sum(r["symbols"] for r in rows)
    return {
        "files": ", ".join(args.ambiguity),
        "documents": len(rows),
        "documents skipped (symbols outside the alphabet)": len(docs) - len(rows),
        "temperature": args.temperature,
        "ln(segmentations) per symbol": round(sum(r["log_n"] for r in rows) / n_symbols, 4) if n_symbols else None,
        "entropy per symbol (nats)": round(sum(r["entropy"] for r in rows) / n_symbols, 4) if n_symbols else None,
        "documents shown": rows[: args.top],
    }


def _format_ambiguity(ambiguity: dict[str, Any]) -> list[str]:
    lines = ["", "ambiguity (p ∝ exp(sum of token weights / temperature); weights: idf, unigram: log p)"]
    lines.extend(f"  {key:<50} {value}" for key, value in ambiguity.items() if key != "documents shown")
    lines.append(f"  {'symbols':>8}  {'segmentations':>16}  {'entropy':>8}  {'p(best)':>9}  {'p(own)':>9}")
    for r in ambiguity["documents shown"]:
        own = "-" if r["p(own encoding)"] is None else f"{r['p(own encoding)']:.3g}"
        lines.append(f"  {r['symbols']:>8}  {r['segmentations']:>16}  {r['entropy']:>8.4f}  "
                     f"{r['p(best)']:>9.3g}  {own:>9}")
    return lines


def format_report(report: dict[str, Any]) -> str:
    """The plain-text listing of :func:`run`'s report."""
    lines = []
    for key in ("model", "format", "variant", "alphabet", "known words", "vocabulary", "pattern",
                "special tokens", "break tokens", "stop tokens", "regex"):
        if key in report:
            lines.append(f"{key:<14} {report[key]}")
    lines.append("")
    lines.append("longest tokens")
    lines.extend(f"  {r['id']:>7}  {r['length']:>4}  {r['piece']}" for r in report["longest"])
    if "top_weights" in report:
        lines.append("")
        lines.append("highest weights (idf)")
        lines.extend(f"  {r['id']:>7}  {r['weight']:8.4f}  {r['piece']}" for r in report["top_weights"])
    for spec, tree in report["trees"].items():
        lines.append("")
        lines.append(f"merge tree of {spec}")
        lines.extend("  " + line for line in tree)
    if "coverage" in report:
        lines.append("")
        lines.append("coverage")
        lines.extend(f"  {key:<50} {value}" for key, value in report["coverage"].items())
    if "ambiguity" in report:
        lines.extend(_format_ambiguity(report["ambiguity"]))
    return "\n".join(lines) + "\n"
