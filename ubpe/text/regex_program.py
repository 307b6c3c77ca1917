r"""Any pre-tokenization pattern, natively: a compiler from the regex subset that tokenizer
patterns use to programs of the kernel's backtracking VM (``ubpe_native/regex_vm.h``).

The presets (gpt2, cl100k, o200k, llama3) have scanners written by hand in
``ubpe_native._pretokenize``; every other pattern - a tekken file's, whisper's, a ``regex_str``
- is compiled here, so that it too splits without the `regex` module and without the GIL.

Why a VM of our own and not PCRE2's JIT: tokenizer patterns are short alternations of
character-class runs with an optional lookahead, and the time goes into those runs. The VM
runs a class run (``\p{L}+``) as one instruction that pushes a single backtrack frame for the
whole run, and skips alternatives whose first code point cannot match (a guard per
alternative), which is what a JIT would buy; a repeated group of fixed width with no choice
inside (``(?:\r\n)+``, ``(?:[a-z][0-9]){2,}``) runs the same way, one frame for all its
iterations. It matches the `regex` module exactly *by
construction*: every one-code-point atom (``\p{L}``, ``[^\s\p{L}\p{N}]``, ``(?i:s)``, ``.``)
becomes a class whose members the `regex` module itself computes over all code points at
compile time, so the Unicode version, the case folding and the class syntax are the `regex`
module's, where PCRE2 brings its own Unicode tables (another version) and its own ``(?i)``.
PCRE2 would also have to be vendored (no system headers here; sources in the sdist), for a
gain the presets' numbers say we do not need.

A model read from a peer's file splits as the peer does, whose Unicode is another version
(``compile_pattern(pattern, unicode=peer)``, :data:`ubpe.text.patterns.UNICODES`). The peer's
class table (`ubpe.text.peer_classes`) holds, per code point, the properties tokenizer patterns
read: letter, number, whitespace, CR/LF, o200k's letter classes, ``\w``, the contraction
letters under ``(?i)``. Where the peer's bits and the `regex` module's differ (a letter of
Unicode 17 is unassigned in tiktoken's Unicode, ``ſ`` is no ``s`` to llama.cpp), the code point
takes, class by class, what is usual for code points of the peer's bits (the majority's, over
the code points that both tables give those bits: for no bits, unassigned ones, which most of
them are) - in each class where it is itself usual for its `regex` bits. Where it is not (a
class that names it, ``[\u0800-\u4e00]``, or reads a property the tables do not hold,
``\p{Greek}``), and where no code point has its peer bits in both tables, it keeps the
`regex` module's member (`_as_peer`). The tests compare the splits with the peers themselves
on every code point where the tables differ.

The subset: literals, ``.``, escapes ``\s \S \d \D \w \W \p{..} \P{..} \x.. \u.... \n`` ...,
sets ``[...]`` (their meaning is the `regex` module's; only their extent is parsed here),
groups ``(...)`` ``(?:...)`` ``(?P<name>...)`` (a piece is the whole match, as tiktoken takes
it), ``(?>...)``, lookahead ``(?=...)`` ``(?!...)``, flags ``i`` and ``s`` (``(?i:...)``, or
``(?i)`` at the start), quantifiers ``? * + {m} {m,} {m,n} {,n}`` greedy, lazy (``?``) or
possessive (``+``), anchors ``^ $ \A \Z \b \B``. Anything else (lookbehind, backreferences,
other flags, a pattern that can match the empty string, a repeated group that can) is left
to the `regex` module, and :attr:`CompiledPattern.reason` says why.

A match runs on a budget of backtracking steps in proportion to the program and to the text
after it (``ubpe_native/regex_vm.h``): a pattern that backtracks exponentially (``(a+)+$``,
``(a|aa)+$``) on text that makes it do so raises :class:`~ubpe.errors.RegexBudgetError`
naming the pattern, within milliseconds, instead of running for hours; patterns whose matches
are found in a few steps per character (every tokenizer pattern we know) never come near it.
We raise rather than hand the text to the `regex` module: the kernels run without the GIL on
many threads and cannot call it, and a pattern that is catastrophic here is usually slow there
too. A long scan on the main thread stops on Ctrl-C (KeyboardInterrupt).

A program is *total* when every position of any text starts a non-empty match (proved from
the pattern, see ``_always_matches``): then its pieces tile the text, and every kernel that
splits text by a preset's id splits it by the program's id. A program that is not total still
splits natively through ``find_pieces`` (``ubpe.text.scanner.pretokenize``).

>>> whisper = r"'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"
>>> compiled = compile_pattern(whisper)
>>> compiled.total, compiled.pattern_id >= 64, compiled.reason
(True, True, None)
>>> compile_pattern(r"\w+").total, compile_pattern(r"(?<=a)b").reason
(False, 'lookbehind is not supported')
"""

from __future__ import annotations

from .. import _fntools as functools  # (functools' tools without its import: ubpe._fntools)
from _thread import allocate_lock  # threading.Lock without importing threading (~0.4 ms)
from .._fntools import namedtuple  # (collections.namedtuple without exec: ubpe._fntools)

from ubpe_native._numpy import np
from ubpe_native._regex import n_free_slots, register_program

from .._lazy import regex
from ..errors import RegexBudgetError
from ..tables_cache import cached_buffers, is_cached
from .class_tables import class_table_key, code_point_classes
from .regex_parse import Node, Unsupported, _Parser

__all__ = ["CompiledPattern", "compile_pattern"]

# Instructions and assertions of regex_vm.h
OP_MATCH, OP_CLASS, OP_SPAN_GREEDY, OP_SPAN_LAZY, OP_SPAN_POSSESSIVE = 0, 1, 2, 3, 4
OP_SPLIT, OP_JUMP, OP_LOOKAHEAD, OP_ATOMIC, OP_ASSERT = 5, 6, 7, 8, 9
OP_GROUP_GREEDY, OP_GROUP_LAZY, OP_GROUP_POSSESSIVE = 10, 11, 12
SPANS = (OP_SPAN_GREEDY, OP_SPAN_POSSESSIVE, OP_SPAN_LAZY)
GROUPS = (OP_GROUP_GREEDY, OP_GROUP_POSSESSIVE, OP_GROUP_LAZY)
MAX_CLASSES = 64  # one bit of a uint64 per class
MAX_EQUIVALENCE_CLASSES = 256  # uint8 in the VM's tables
MAX_INSTRUCTIONS = 20_000  # counted repeats of groups are unrolled; past this the regex module runs
MAX_SUB_PROGRAMS = 256  # lookaheads and atomic groups the kernel takes in one program
BLOCK_SHIFT = 8
N_CODE_POINTS = 0x110000
SURROGATES = range(0xD800, 0xE000)
GUARD_WORDS = 4
#: the most code points in the body of a group that the VM repeats with one counted frame
#: (OP_GROUP_*: one instruction per code point of the body, so (?:a{5000})+ would take 5,000);
#: a wider one is compiled as a loop of splits
MAX_GROUP_WIDTH = 64


class CompiledPattern(namedtuple("CompiledPattern", "pattern pattern_id total reason")):
    """A pattern as the kernel runs it: ``pattern_id`` (None: the `regex` module splits it,
    ``reason`` says why), ``total`` (its pieces tile any text: the scanner's kernels take it
    where they take a preset). (`collections`' named tuple: `typing.NamedTuple` compiles each
    field's annotation, ~1 ms of a load.)"""

    __slots__ = ()

    pattern: str
    pattern_id: int | None
    total: bool
    reason: str | None


# -- code point classes, computed by the regex module itself ----------------------------------

@functools.lru_cache(maxsize=1)
def _every_code_point() -> tuple[np.ndarray, str]:
    """Every code point but the surrogates (which a str of text cannot hold as UTF-8), as
    uint32 and as one string."""
    points = np.concatenate([np.arange(SURROGATES.start), np.arange(SURROGATES.stop, N_CODE_POINTS)]).astype(np.uint32)
    return points, points.tobytes().decode("utf-32-le")


@functools.lru_cache(maxsize=256)
def _members(key: tuple[str, bool, bool]) -> np.ndarray:
    """The runs of code points (start, end rows of indexes into ``_every_code_point``) that
    the one-code-point atom ``key`` matches, as the `regex` module decides: ~5-50 ms per
    class, once per process (runs, not a mask: a few KB per class instead of 1.1 MB)."""
    source, ignorecase, dotall = key
    _, every = _every_code_point()
    flags = ("i" if ignorecase else "") + ("s" if dotall else "")
    try:
        compiled = regex.compile(f"(?{flags}:{source})+" if flags else f"(?:{source})+")
    except regex.error as exc:
        raise Unsupported(f"{source!r} is not a class the regex module reads alone: {exc}") from None
    if compiled.match("") is not None:
        raise Unsupported(f"{source!r} can match the empty string")
    runs = [bound for run in compiled.finditer(every) for bound in run.span()]
    return np.array(runs, dtype=np.int64).reshape(-1, 2)


def _as_peer(signature: np.ndarray, unicode: str) -> None:
    """``signature`` (each code point's classes, a bit each, indexed as ``_every_code_point``)
    changed in place to the classes of the peer ``unicode``'s Unicode, as the module docstring
    says: a code point whose peer bits differ from its `regex` bits takes, in each class where
    it is a usual code point of its `regex` bits, what is usual for its peer bits.

    The usual membership of bits ``b``: the majority's, over the code points whose `regex` bits
    and peer bits are both ``b`` (for no bits: ~815,000 unassigned of ~960,000 code points)."""
    ours, theirs = ([table[: SURROGATES.start], table[SURROGATES.stop :]] for table in
                    (code_point_classes("regex"), code_point_classes(unicode)))
    ours, theirs = np.concatenate(ours), np.concatenate(theirs)  # (indexed as _every_code_point)
    differ = np.flatnonzero(ours != theirs)
    if not len(differ):
        return
    # counted on the runs where neither the classes nor the bits change (a few thousand)
    changes = (signature[1:] != signature[:-1]) | (ours[1:] != ours[:-1]) | (theirs[1:] != theirs[:-1])
    starts = np.flatnonzero(np.concatenate([[True], changes]))
    lengths = np.diff(np.append(starts, len(ours)))
    run_classes, run_bits, run_agrees = signature[starts], ours[starts], ours[starts] == theirs[starts]
    usual = np.zeros(1 << 16, dtype=np.uint64)  # by the bits (uint16): the usual classes
    known = np.zeros(1 << 16, dtype=bool)  # whether a code point has those bits in both tables
    for bits in np.unique(np.concatenate([ours[differ], theirs[differ]])).tolist():
        kind = run_agrees & (run_bits == bits)
        total = int(lengths[kind].sum())
        known[bits] = total > 0
        usual[bits] = sum(1 << k for k in range(MAX_CLASSES)
                          if 2 * int(lengths[kind & ((run_classes >> np.uint64(k)) & np.uint64(1) == 1)].sum()) > total)
    own, peer = ours[differ], theirs[differ]
    differ = differ[known[own] & known[peer]]  # (else no code point to learn from: the regex module's)
    own, peer, found = ours[differ], theirs[differ], signature[differ]
    is_usual = ~(found ^ usual[own])  # the classes where the code point is as its kind is
    signature[differ] = (found & ~is_usual) | (usual[peer] & is_usual)


class _Classes:
    """The classes of one pattern and its equivalence classes of code points (by the Unicode of
    ``unicode``: `_as_peer`)."""

    def __init__(self, tree: Node, word: bool, unicode: str = "regex") -> None:
        self.index: dict[tuple, int] = {}
        self._sets: dict[int, int] = {}
        self._collect(tree)
        if word:
            self.word = self._add((r"\w", False, False))
        else:
            self.word = -1
        if len(self.index) > MAX_CLASSES:
            raise Unsupported(f"more than {MAX_CLASSES} distinct classes")
        points, _ = _every_code_point()
        signature = np.zeros(len(points), dtype=np.uint64)
        for key, k in self.index.items():
            bit = np.uint64(1 << k)
            for start, end in _members(key).tolist():
                signature[start:end] |= bit
        if unicode != "regex":
            _as_peer(signature, unicode)
        # the signature changes a few thousand times along the code points: work on its runs
        run_starts = np.flatnonzero(np.concatenate([[True], signature[1:] != signature[:-1]]))
        values, run_classes = np.unique(signature[run_starts], return_inverse=True)
        if len(values) > MAX_EQUIVALENCE_CLASSES:
            raise Unsupported(f"more than {MAX_EQUIVALENCE_CLASSES} kinds of code points")
        self.n_equivalence = len(values)
        self.members = np.zeros(MAX_EQUIVALENCE_CLASSES, dtype=np.uint64)
        self.members[: len(values)] = values
        run_lengths = np.diff(np.append(run_starts, len(points)))
        table = np.zeros(N_CODE_POINTS, dtype=np.uint8)  # surrogates: any class, never read
        table[points] = np.repeat(run_classes.astype(np.uint8), run_lengths)
        block_ids: dict[bytes, int] = {}
        rows = table.reshape(-1, 1 << BLOCK_SHIFT)
        self.blocks = np.array([block_ids.setdefault(row.tobytes(), len(block_ids)) for row in rows], dtype=np.uint16)
        self.block_classes = np.frombuffer(b"".join(block_ids), dtype=np.uint8).copy()

    def _add(self, key: tuple) -> int:
        return self.index.setdefault(key, len(self.index))

    def _collect(self, node: Node) -> None:
        if node[0] == "class":
            self._add(node[1])
        elif node[0] in ("seq", "alt"):
            for child in node[1]:
                self._collect(child)
        elif node[0] in ("repeat", "look", "atomic"):
            self._collect(node[1])

    def of(self, node: Node) -> int:
        return self.index[node[1]]

    def equivalences(self, k: int) -> int:
        """The equivalence classes of class ``k``, as a bit set (a Python int)."""
        if k not in self._sets:
            self._sets[k] = sum(1 << eq for eq in range(self.n_equivalence) if (int(self.members[eq]) >> k) & 1)
        return self._sets[k]

    @property
    def everything(self) -> int:
        return (1 << self.n_equivalence) - 1


# -- what the tree guarantees ------------------------------------------------------------------

def _nullable(node: Node) -> bool:
    """Whether ``node`` can match the empty string (lookahead and anchors: yes)."""
    kind = node[0]
    if kind == "class":
        return False
    if kind == "seq":
        return all(map(_nullable, node[1]))
    if kind == "alt":
        return any(map(_nullable, node[1]))
    if kind == "repeat":
        return node[2] == 0 or _nullable(node[1])
    if kind == "atomic":
        return _nullable(node[1])
    return True


def _always(node: Node) -> bool:
    """Whether ``node`` matches (maybe empty) at any position of any text."""
    kind = node[0]
    if kind == "seq":
        return all(map(_always, node[1]))
    if kind == "alt":
        return any(map(_always, node[1]))
    if kind == "repeat":
        return node[2] == 0 or _always(node[1])
    if kind == "atomic":
        return _always(node[1])
    return False


def _fixed_body(node: Node) -> list[Node] | None:
    """The one-code-point atoms that ``node`` matches one after the other when that is its
    only way to match (classes in sequence, repeated a fixed number of times: ``ab``,
    ``[a-z]{2}[0-9]``), else None (an alternative, a run of varying length, an assertion)."""
    kind = node[0]
    if kind == "class":
        return [node]
    if kind == "seq":
        found = []
        for child in node[1]:
            part = _fixed_body(child)
            if part is None:
                return None
            found += part
        return found
    if kind == "repeat" and node[2] == node[3]:
        part = _fixed_body(node[1])
        return None if part is None else part * node[2]
    if kind == "atomic":  # one way to match: nothing for the atomic group to cut
        return _fixed_body(node[1])
    return None


def _first(node: Node, classes: _Classes) -> int | None:
    """The equivalence classes a non-empty match of ``node`` can start with (None: unknown)."""
    kind = node[0]
    if kind == "class":
        return classes.equivalences(classes.of(node))
    if kind in ("repeat", "atomic"):
        return _first(node[1], classes)
    if kind == "alt":
        found = 0
        for child in node[1]:
            first = _first(child, classes)
            if first is None:
                return None
            found |= first
        return found
    if kind == "seq":
        found = 0
        for child in node[1]:
            if child[0] in ("look", "assert"):
                return None
            first = _first(child, classes)
            if first is None:
                return None
            found |= first
            if not _nullable(child):
                return found
        return None
    return None


def _always_matches(node: Node, classes: _Classes) -> int:
    """The equivalence classes ``c`` such that ``node`` matches at every position whose code
    point is in ``c``, whatever follows (a bit set; a safe under-estimate)."""
    kind = node[0]
    if kind == "class":
        return classes.equivalences(classes.of(node))
    if _always(node):
        return classes.everything
    if kind == "alt":
        found = 0
        for child in node[1]:
            found |= _always_matches(child, classes)
        return found
    if kind == "atomic":
        return _always_matches(node[1], classes)
    if kind == "repeat":
        return _always_matches(node[1], classes) if node[2] == 1 else 0
    if kind == "seq":
        return _sequence_matches(node[1], classes)
    return 0


def _sequence_matches(items: list[Node], classes: _Classes) -> int:
    if not items:
        return classes.everything
    head, rest = items[0], items[1:]
    found = 0
    if all(map(_always, rest)):
        found |= _always_matches(head, classes)
    if head[0] == "repeat" and head[2] == 0:  # the head can end up empty: the rest starts here
        after = _sequence_matches(rest, classes)
        if head[4] == "possessive":  # ... only where the head cannot take the first code point
            first = _first(head[1], classes)
            after = 0 if first is None else after & ~first
        found |= after
    return found


# -- code generation ---------------------------------------------------------------------------

class _Emitter:
    def __init__(self, classes: _Classes) -> None:
        self.classes = classes
        self.code: list[list[int]] = []
        self.guards: list[int] = []
        self.n_sub_programs = 0

    def emit(self, op: int, x: int = 0, y: int = 0, z: int = 0) -> int:
        if len(self.code) >= MAX_INSTRUCTIONS:
            raise Unsupported(f"the program would pass {MAX_INSTRUCTIONS} instructions")
        self.code.append([op, x, y, z])
        return len(self.code) - 1

    def guard(self, node: Node) -> int:
        """A guard for an alternative that must start with a code point of its first set."""
        if _nullable(node):
            return -1
        first = _first(node, self.classes)
        if first is None or first == self.classes.everything:
            return -1
        self.guards.append(first)
        return len(self.guards) - 1

    def node(self, node: Node) -> None:
        kind = node[0]
        if kind == "class":
            self.emit(OP_CLASS, self.classes.of(node))
        elif kind == "seq":
            for child in node[1]:
                self.node(child)
        elif kind == "alt":
            self._alternation(node[1])
        elif kind == "repeat":
            self._repeat(*node[1:])
        elif kind == "look":
            self._sub_program(OP_LOOKAHEAD, node[1], 1 if node[2] else 0)
        elif kind == "atomic":
            self._sub_program(OP_ATOMIC, node[1], 0)
        else:
            self.emit(OP_ASSERT, node[1])

    def _sub_program(self, op: int, inner: Node, y: int) -> None:
        self.n_sub_programs += 1
        if self.n_sub_programs > MAX_SUB_PROGRAMS:
            raise Unsupported(f"more than {MAX_SUB_PROGRAMS} lookaheads and atomic groups")
        at = self.emit(op, 0, y)
        self.node(inner)
        self.emit(OP_MATCH)
        self.code[at][1] = len(self.code)

    def _alternation(self, branches: list[Node]) -> None:
        jumps = []
        for branch in branches[:-1]:
            split = self.emit(OP_SPLIT, 0, 0, self.guard(branch))
            self.code[split][1] = split + 1
            self.node(branch)
            jumps.append(self.emit(OP_JUMP))
            self.code[split][2] = len(self.code)
        self.node(branches[-1])
        for jump in jumps:
            self.code[jump][1] = len(self.code)

    def _repeat(self, inner: Node, low: int, high: int | None, mode: str) -> None:
        if inner[0] == "class":
            k = self.classes.of(inner)
            if low == 1 and high == 1:
                self.emit(OP_CLASS, k)
            elif mode == "lazy" and high != low:
                self.emit(OP_SPAN_LAZY, k, low, -1 if high is None else high)
            else:
                op = OP_SPAN_POSSESSIVE if mode == "possessive" else OP_SPAN_GREEDY
                self.emit(op, k, low, -1 if high is None else high)
            return
        if _nullable(inner) and (high is None or high > 1):
            raise Unsupported("a repeated group that can match the empty string")
        body = _fixed_body(inner)
        if body and len(body) <= MAX_GROUP_WIDTH and high != 1:
            # (?:ab)+ : one instruction, one counted frame, not a split per iteration
            if mode == "lazy" and high != low:
                op = OP_GROUP_LAZY
            else:
                op = OP_GROUP_POSSESSIVE if mode == "possessive" else OP_GROUP_GREEDY
            self.emit(op, len(body), low, -1 if high is None else high)
            for atom in body:
                self.emit(OP_CLASS, self.classes.of(atom))
            return
        if mode == "possessive":
            self._sub_program(OP_ATOMIC, ("repeat", inner, low, high, "greedy"), 0)
            return
        for _ in range(low):
            self.node(inner)
        if high is None:
            loop = self.emit(OP_SPLIT, 0, 0, -1)
            self.node(inner)
            self.emit(OP_JUMP, loop)
            self._branch(loop, len(self.code), mode)
            return
        splits = []
        for _ in range(high - low):
            splits.append(self.emit(OP_SPLIT, 0, 0, -1))
            self.node(inner)
        for split in splits:
            self._branch(split, len(self.code), mode)

    def _branch(self, split: int, out: int, mode: str) -> None:
        """Fill a repeat's split: into the body first (greedy) or out first (lazy)."""
        body = split + 1
        self.code[split][1:3] = [body, out] if mode == "greedy" else [out, body]


def _no_give_back_before_match(code: list[list[int]]) -> None:
    """Peepholes on the finished program. A jump to a match is that match. A greedy run that
    nothing after it can fail (runs that may be empty, up to the match) is never asked to
    give back a code point - the first match found is the one kept, also in a lookahead or
    an atomic group - so it runs as possessive, which pushes no backtrack frame; so does a
    greedy group."""
    for instruction in code:
        if instruction[0] == OP_JUMP and code[instruction[1]][0] == OP_MATCH:
            instruction[:] = [OP_MATCH, 0, 0, 0]
    for pc in range(len(code) - 1, -1, -1):
        if code[pc][0] == OP_SPAN_GREEDY and _cannot_fail_from(code, pc + 1):
            code[pc][0] = OP_SPAN_POSSESSIVE
        elif code[pc][0] == OP_GROUP_GREEDY and _cannot_fail_from(code, pc + 1 + code[pc][1]):
            code[pc][0] = OP_GROUP_POSSESSIVE


def _cannot_fail_from(code: list[list[int]], pc: int) -> bool:
    """Whether the program from ``pc`` reaches its match whatever the text: only runs and
    groups that may be empty (``*``, ``?``: any number of code points, none included) and jumps
    on the way."""
    seen = set()
    while pc not in seen:
        seen.add(pc)
        op, x, y, _ = code[pc]
        if op == OP_MATCH:
            return True
        if op == OP_JUMP:
            pc = x
        elif op in SPANS and y == 0:
            pc += 1
        elif op in GROUPS and y == 0:
            pc += 1 + x
        else:
            return False
    return False


_lock = allocate_lock()
_compiled: dict[tuple[str, str], CompiledPattern] = {}


def compile_pattern(pattern: str, unicode: str = "regex") -> CompiledPattern:
    """``pattern`` compiled for the kernel and registered there (once per process; the same
    object for the same pattern afterwards, from any thread), or with the reason it is not; its
    classes by the Unicode of ``unicode`` (:data:`ubpe.text.patterns.UNICODES`: the `regex`
    module's, or a peer's for a model read from the peer's file, see the module docstring).
    The first compile of a pattern takes ~0.05-0.5 s (its classes over all code points; a
    peer's ~0.1 s more), then its program is read from the machine's cache."""
    found = _compiled.get((pattern, unicode))
    if found is not None:
        return found
    with _lock:
        found = _compiled.get((pattern, unicode))
        if found is None:
            found = _compile(pattern, unicode)
            _compiled[pattern, unicode] = found
    return found


def compiles_quickly(pattern: str, unicode: str = "regex") -> bool:
    """Whether :func:`compile_pattern` of ``pattern`` is a look-up: compiled in this process,
    or its program in the machine's cache (~10 ms to read, not 0.05-0.5 s to build)."""
    return (pattern, unicode) in _compiled or is_cached("program", _program_key(pattern, unicode))


def _program_key(pattern: str, unicode: str) -> str:
    """The machine cache's key of ``pattern``'s program: the pattern, and for a peer's Unicode
    the key of its class table (a regenerated table makes new programs)."""
    if unicode == "regex":
        return pattern
    return f"{class_table_key(unicode)}\n{pattern}"


def _compile(pattern: str, unicode: str) -> CompiledPattern:
    # (read as buffers: a model whose pattern the machine's cache holds loads without numpy)
    program = cached_buffers("program", _program_key(pattern, unicode), lambda: _program(pattern, unicode))
    if "reason" in program:
        return CompiledPattern(pattern, None, False, str(program["reason"]))
    full = "the kernel holds as many compiled patterns as it takes (8,192, or 128 MB of their tables)"
    if n_free_slots() == 0:
        return CompiledPattern(pattern, None, False, full)
    total = bool(program["total"][0])
    try:
        pattern_id = register_program(
            program["code"], program["blocks"], program["block_classes"], program["members"],
            program["guards"], int(program["word"][0]), int(program["start_guard"][0]), total,
            pattern=pattern, error=RegexBudgetError,
        )
    except MemoryError:  # the tables past the budget, or no memory for them
        return CompiledPattern(pattern, None, False, full)
    return CompiledPattern(pattern, pattern_id, total, None)


def _program(pattern: str, unicode: str = "regex") -> dict[str, np.ndarray]:
    """The arrays of ``pattern``'s program as `register_program` takes them (what the machine's
    cache keeps, see `ubpe.tables_cache`), or ``{"reason": why not}``."""
    try:
        regex.compile(pattern)
    except regex.error as exc:
        return {"reason": np.array(f"not a valid regex: {exc}")}
    try:
        parser = _Parser(pattern)
        tree = parser.parse()
        if _nullable(tree):
            raise Unsupported("the pattern can match the empty string")
        classes = _Classes(tree, parser.uses_word_boundary, unicode)
        emitter = _Emitter(classes)
        start_guard = emitter.guard(tree)
        emitter.node(tree)
        emitter.emit(OP_MATCH)
        _no_give_back_before_match(emitter.code)
        total = _always_matches(tree, classes) == classes.everything
    except Unsupported as exc:
        return {"reason": np.array(str(exc))}
    guards = np.zeros(GUARD_WORDS * len(emitter.guards), dtype=np.uint64)
    for g, bits in enumerate(emitter.guards):
        for word in range(GUARD_WORDS):
            guards[g * GUARD_WORDS + word] = (bits >> (64 * word)) & ((1 << 64) - 1)
    return {"code": np.array(emitter.code, dtype=np.int32).reshape(-1, 4), "blocks": classes.blocks,
            "block_classes": classes.block_classes, "members": classes.members, "guards": guards,
            "word": np.array(classes.word), "start_guard": np.array(start_guard), "total": np.array(total)}
