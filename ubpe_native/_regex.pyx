# distutils: language = c++
"""The registry of compiled pre-tokenization patterns: programs of the backtracking VM in
``regex_vm.h``, compiled by :mod:`ubpe.text.regex_program` (whose docstring says why a VM of
our own and not PCRE2).

``register_program`` checks a program (every jump inside it, every class and guard known, the
tables the right shape: the VM reads them unchecked; its control flow: no loop that consumes
nothing, no lookahead or atomic group that reaches itself again) and copies it into a slot that
is never freed, so a pattern id stays valid for the life of the process and any thread may run
it without the GIL. The scanner of ``_pretokenize`` runs a program where it would run a preset
(``piece_end``), for every kernel that splits text.

Every match runs on a budget (``regex_vm.h``): a pattern that backtracks exponentially
(``(a+)+$`` on ``"a" * 30 + "!"``) is stopped after some million steps with the error class
given at registration, naming the pattern (``ubpe.errors.RegexBudgetError`` for patterns
compiled by ``ubpe.text.regex_program``), rather than running for hours; and on the main thread
a long scan asks for pending signals every 2^16 steps and every MB of text, so Ctrl-C stops it
with KeyboardInterrupt.

>>> import numpy as np
>>> code = np.array([[4, 0, 1, -1], [0, 0, 0, 0]], dtype=np.int32)   # [class 0]++ then match
>>> blocks = np.zeros(0x1100, dtype=np.uint16)
>>> block_classes = np.zeros(256, dtype=np.uint8)
>>> members = np.zeros(256, dtype=np.uint64); members[0] = 1          # everything in class 0
>>> register_program(code, blocks, block_classes, members, np.zeros(0, np.uint64), -1, -1, True) >= 64
True
"""

import _thread
import sys

from cpython.exc cimport PyErr_SetObject
from libc.stddef cimport ptrdiff_t
from libc.stdint cimport int32_t, uint8_t, uint16_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cdef extern from "Python.h":
    # declared here without Cython's `except -1`: the hook leaves the exception set for the VM
    int check_signals "PyErr_CheckSignals"()
    unsigned long PyThread_get_thread_ident() nogil

cdef extern from "regex_vm.h" namespace "ubpe_regex" nogil:
    cdef struct Inst:
        int32_t op, x, y, z
    cdef cppclass ProgramData "ubpe_regex::Program":
        vector[Inst] code
        vector[uint16_t] blocks
        vector[uint8_t] block_classes
        vector[uint64_t] members
        vector[uint64_t] guards
        vector[uint64_t] ascii
        vector[uint64_t] ascii_guards
        int32_t word_class
        int32_t start_guard
        cbool total
        int32_t slot
        int (*poll)() noexcept nogil
        void (*refuse)(int32_t slot, int32_t why, ptrdiff_t at, uint64_t limit) noexcept nogil
    int32_t TOO_MANY_STEPS
    int32_t OP_MATCH, OP_CLASS, OP_SPAN_GREEDY, OP_SPAN_LAZY, OP_SPAN_POSSESSIVE, OP_SPLIT, OP_JUMP
    int32_t OP_LOOKAHEAD, OP_ATOMIC, OP_ASSERT, OP_GROUP_GREEDY, OP_GROUP_LAZY, OP_GROUP_POSSESSIVE
    int32_t N_OPS, N_ASSERTIONS, AT_END, WORD_BOUNDARY
    cbool is_span(int32_t op)
    cbool is_group(int32_t op)
    int GUARD_WORDS, BLOCK_SIZE
    void prepare(ProgramData& p, int n_classes) except +  # std::bad_alloc -> MemoryError
    ptrdiff_t match_with_capacity(const ProgramData& p, const uint8_t* s, ptrdiff_t n, ptrdiff_t i,
                                  size_t* capacity) except +

# Distinct patterns per process, and the bytes of their tables (~40 KB a pattern with Unicode
# classes: 8,192 such patterns would hold 330 MB): more are left to the regex module. A slot is
# never freed, as ids are read without a lock (program_of).
cdef int MAX_PROGRAMS = 8192
cdef size_t MAX_PROGRAM_BYTES = 128 << 20
cdef size_t _program_bytes = 0
# Instructions per program (the compiler stops at 20,000), and lookaheads and atomic groups
# (each one's reach is walked at registration, and they nest as deep as there are of them)
cdef Py_ssize_t MAX_INSTRUCTIONS = 1 << 16
cdef Py_ssize_t MAX_SUB_PROGRAMS = 256
cdef int MAX_CLASSES = 64  # one bit of a uint64 per class
cdef int N_EQUIVALENCE_CLASSES = 256  # uint8 equivalence classes
cdef Py_ssize_t N_BLOCKS = 0x110000 // 256
cdef ProgramData* _programs[8192]
cdef int _n_programs = 0
cdef list _patterns = []  # per slot: the pattern, and the exception class of a refused match
cdef list _errors = []
# The thread that runs signal handlers: `threading`'s main thread when it is imported; else
# this one (a thread other than the main one is started through `threading`, save by
# `_thread` itself), so that a load does not import `threading` (~0.4 ms) to ask
_threading = sys.modules.get("threading")
cdef unsigned long _main_thread = _threading.main_thread().ident if _threading is not None else _thread.get_ident()
del _threading


cdef int _poll() noexcept nogil:
    """The VM's ``poll`` hook: -1 (the exception set) when a signal handler raised, e.g.
    KeyboardInterrupt. Only the main thread runs Python's signal handlers; others never stop."""
    if PyThread_get_thread_ident() != _main_thread:
        return 0
    with gil:
        return check_signals()


cdef void _refuse(int32_t slot, int32_t why, ptrdiff_t at, uint64_t limit) noexcept nogil:
    """The VM's ``refuse`` hook: sets the exception of a match over its budget."""
    with gil:
        _set_refusal(slot, why, at, limit)


cdef void _set_refusal(int32_t slot, int32_t why, ptrdiff_t at, uint64_t limit) noexcept:
    pattern = _patterns[slot]
    what = "the regex VM's program" if pattern is None else f"the split pattern {pattern!r}"
    if why == TOO_MANY_STEPS:
        cause = (f"more than {limit:,} backtracking steps (catastrophic backtracking: nested "
                 "repeats such as (a+)+ or (a|aa)+ try exponentially many ways to match)")
    else:
        cause = f"more than {limit:,} backtrack frames (a repeated group over a long stretch of text)"
    PyErr_SetObject(_errors[slot], f"{what} needs {cause} for its match at byte {at} of the text; "
                                   "rewrite it so that each character can be matched in fewer ways")


cdef const Program* program_of(int pattern) noexcept nogil:
    cdef int slot = pattern - FIRST_PROGRAM_ID
    if slot < 0 or slot >= _n_programs:
        return NULL
    return <const Program*>_programs[slot]


def _py_match(int pattern, const uint8_t[::1] data not None, Py_ssize_t start=0):
    """For tests: ``(end, frames)``, the end of the match of compiled pattern ``pattern`` at
    byte ``start`` of UTF-8 ``data`` (-1: none) and the backtrack frames its stack had room
    for (64 on the C stack; past that, doubled as needed)."""
    cdef const Program* program = program_of(pattern)
    if program == NULL:
        raise ValueError(f"{pattern} is not the id of a compiled pattern")
    if not 0 <= start < data.shape[0]:
        raise ValueError(f"start must be in 0..{data.shape[0] - 1}")
    try:  # the VM decodes without bounds checks
        bytes(data).decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError("data is not valid UTF-8") from None
    if (data[start] & 0xC0) == 0x80:
        raise ValueError("start must be at a character's first byte")
    cdef size_t capacity = 0
    cdef ptrdiff_t end
    with nogil:
        end = match_with_capacity((<const ProgramData*>program)[0], &data[0], data.shape[0], start, &capacity)
    return end, capacity


def n_free_slots():
    """How many more programs :func:`register_program` takes: 0 once it holds
    ``MAX_PROGRAMS`` programs or ``MAX_PROGRAM_BYTES`` of their tables."""
    if _program_bytes >= MAX_PROGRAM_BYTES:
        return 0
    return MAX_PROGRAMS - _n_programs


cdef size_t _table_bytes(const ProgramData* p) noexcept nogil:
    return (p.code.size() * sizeof(Inst) + p.blocks.size() * 2 + p.block_classes.size()
            + (p.members.size() + p.guards.size() + p.ascii.size() + p.ascii_guards.size()) * 8)


def register_program(const int32_t[:, ::1] code not None, const uint16_t[::1] blocks not None,
                     const uint8_t[::1] block_classes not None, const uint64_t[::1] members not None,
                     const uint64_t[::1] guards not None, int word_class, int start_guard, bint total,
                     str pattern=None, error=ValueError):
    """Check a program and register it: its pattern id (``>= FIRST_PROGRAM_ID``).

    ``code`` holds one ``(op, x, y, z)`` row per instruction (``regex_vm.h``); ``blocks`` maps
    ``code point >> 8`` to a block of 256 entries of ``block_classes`` (equivalence classes),
    ``members[eq]`` has bit ``k`` set when the equivalence class is in class ``k``; ``guards``
    holds sets of equivalence classes, 4 words each; ``word_class`` is the class of ``\\w``
    (or -1 if no instruction asks for word boundaries); ``start_guard`` a guard that every
    match starts in (-1: none); ``total``: every position starts a non-empty match (the
    caller's proof: the scanner then takes the program's pieces as a tiling of the text);
    ``pattern``: the source the errors name; ``error``: the exception class raised when a
    match runs over its budget. ValueError when anything would let the VM read outside its
    tables, or its control flow could loop without consuming text or recurse without end.
    """
    cdef Py_ssize_t n_code = code.shape[0], pc, n_guards, k
    cdef int32_t op, x, y, z
    if code.shape[1] != 4:
        raise ValueError("code must have 4 columns (op, x, y, z)")
    if n_code < 1:
        raise ValueError("code needs at least one instruction")
    if n_code > MAX_INSTRUCTIONS:
        raise ValueError(f"code holds {n_code:,} instructions (at most {MAX_INSTRUCTIONS:,})")
    if not (isinstance(error, type) and issubclass(error, BaseException)):
        raise TypeError(f"error must be an exception class, not {type(error).__name__}")
    if blocks.shape[0] != N_BLOCKS:
        raise ValueError(f"blocks must hold one entry per 256 code points ({N_BLOCKS})")
    if block_classes.shape[0] == 0 or block_classes.shape[0] % BLOCK_SIZE:
        raise ValueError("block_classes must hold whole blocks of 256 entries")
    if members.shape[0] != N_EQUIVALENCE_CLASSES:
        raise ValueError(f"members must hold one entry per equivalence class ({N_EQUIVALENCE_CLASSES})")
    if guards.shape[0] % GUARD_WORDS:
        raise ValueError(f"guards must hold {GUARD_WORDS} words per guard")
    n_guards = guards.shape[0] // GUARD_WORDS
    for k in range(N_BLOCKS):
        if (<Py_ssize_t>blocks[k] + 1) * BLOCK_SIZE > block_classes.shape[0]:
            raise ValueError(f"blocks[{k}] = {blocks[k]} is past block_classes")
    if not -1 <= word_class < MAX_CLASSES:
        raise ValueError(f"word_class must be in -1..{MAX_CLASSES - 1}")
    if not -1 <= start_guard < n_guards:
        raise ValueError(f"start_guard must be in -1..{n_guards - 1}")
    for pc in range(n_code):
        op, x, y, z = code[pc, 0], code[pc, 1], code[pc, 2], code[pc, 3]
        if not 0 <= op < N_OPS:
            raise ValueError(f"instruction {pc}: unknown op {op}")
        if op == OP_CLASS or is_span(op):
            if not 0 <= x < MAX_CLASSES:
                raise ValueError(f"instruction {pc}: class {x} is not in 0..{MAX_CLASSES - 1}")
        if (is_span(op) or is_group(op)) and (
                y < 0 or z < -1 or (z >= 0 and z < y) or ((op == OP_SPAN_LAZY or op == OP_GROUP_LAZY) and z == y)):
            raise ValueError(f"instruction {pc}: bad repeat {y}..{z}")
        if is_group(op):  # its body: x classes, then an instruction to go on to
            if not 1 <= x < n_code - pc - 1:
                raise ValueError(f"instruction {pc}: a group body of {x} code points runs off the program")
            for k in range(pc + 1, pc + 1 + x):
                if code[k, 0] != OP_CLASS:
                    raise ValueError(f"instruction {pc}: its group body holds instruction {k}, not a class")
        if op == OP_SPLIT and not (0 <= x < n_code and 0 <= y < n_code and -1 <= z < n_guards):
            raise ValueError(f"instruction {pc}: split outside the program or unknown guard")
        if op == OP_JUMP and not 0 <= x < n_code:
            raise ValueError(f"instruction {pc}: jump outside the program")
        if (op == OP_LOOKAHEAD or op == OP_ATOMIC) and not (pc + 1 < n_code and 0 <= x < n_code):
            raise ValueError(f"instruction {pc}: sub-program outside the program")
        if op == OP_ASSERT:
            if not 0 <= x < N_ASSERTIONS:
                raise ValueError(f"instruction {pc}: unknown assertion {x}")
            if x >= WORD_BOUNDARY and word_class < 0:
                raise ValueError(f"instruction {pc}: a word boundary needs word_class")
        # an instruction that goes on to pc + 1 must have one
        if (op == OP_CLASS or is_span(op) or op == OP_ASSERT) and pc + 1 >= n_code:
            raise ValueError(f"instruction {pc} runs off the end of the program")
    _check_control_flow(code)
    if _n_programs >= MAX_PROGRAMS:
        raise MemoryError(f"{MAX_PROGRAMS:,} patterns are compiled already")
    if _program_bytes >= MAX_PROGRAM_BYTES:
        raise MemoryError(f"the compiled patterns hold {_program_bytes:,} bytes of tables already")
    cdef ProgramData* program = new ProgramData()
    program.code.resize(n_code)
    for pc in range(n_code):
        program.code[pc].op = code[pc, 0]
        program.code[pc].x = code[pc, 1]
        program.code[pc].y = code[pc, 2]
        program.code[pc].z = code[pc, 3]
    program.blocks.assign(&blocks[0], &blocks[0] + blocks.shape[0])
    program.block_classes.assign(&block_classes[0], &block_classes[0] + block_classes.shape[0])
    program.members.assign(&members[0], &members[0] + members.shape[0])
    if guards.shape[0]:
        program.guards.assign(&guards[0], &guards[0] + guards.shape[0])
    program.word_class = word_class
    program.start_guard = start_guard
    program.total = total
    program.slot = _n_programs
    program.poll = _poll
    program.refuse = _refuse
    try:
        prepare(program[0], MAX_CLASSES)
    except MemoryError:
        del program
        raise
    global _n_programs, _program_bytes
    _program_bytes += _table_bytes(program)
    _patterns.append(pattern)
    _errors.append(error)
    _programs[_n_programs] = program  # written before the id exists: readers never see it half-made
    _n_programs += 1
    return FIRST_PROGRAM_ID + _n_programs - 1


# -- control flow ------------------------------------------------------------------------------

cdef int _successors(const int32_t[:, ::1] code, Py_ssize_t pc, const uint8_t* nullable_sub,
                     Py_ssize_t* targets, cbool* consumes) noexcept nogil:
    """Where instruction ``pc`` goes on (0-2 targets; a lookahead's or atomic group's own
    sub-program is a call, not listed), and whether it consumes a code point on the way."""
    cdef int32_t op = code[pc, 0]
    if op == OP_MATCH:
        return 0
    if op == OP_SPLIT:
        targets[0], targets[1] = code[pc, 1], code[pc, 2]
        consumes[0] = consumes[1] = False
        return 2
    if op == OP_JUMP or op == OP_LOOKAHEAD or op == OP_ATOMIC:
        targets[0] = code[pc, 1]
        consumes[0] = op == OP_ATOMIC and not nullable_sub[pc]
        return 1
    if is_group(op):  # past its body (which only this instruction reads)
        targets[0] = pc + 1 + code[pc, 1]
        consumes[0] = code[pc, 2] >= 1
        return 1
    targets[0] = pc + 1
    consumes[0] = op == OP_CLASS or (is_span(op) and code[pc, 2] >= 1)
    return 1


cdef _check_control_flow(const int32_t[:, ::1] code):
    """ValueError unless every run of the VM over this program ends: no cycle of instructions
    that consumes nothing (a self-jump, a loop over an empty body), no lookahead or atomic group
    whose sub-program reaches it again (the VM would recurse until the stack overflows), and
    at most MAX_SUB_PROGRAMS of those."""
    cdef Py_ssize_t n = code.shape[0], pc, k, count, sub, target
    cdef Py_ssize_t targets[2]
    cdef cbool consumes[2]
    cdef vector[uint8_t] seen, nullable, colour
    cdef vector[Py_ssize_t] stack, edge
    subs = [pc for pc in range(n) if code[pc, 0] == OP_LOOKAHEAD or code[pc, 0] == OP_ATOMIC]
    if len(subs) > MAX_SUB_PROGRAMS:
        raise ValueError(f"{len(subs)} lookaheads and atomic groups (at most {MAX_SUB_PROGRAMS})")
    nullable.clear()
    nullable.resize(n, 1)  # while unknown an atomic group counts as consuming nothing
    # the sub-programs each one reaches (calls), then an order in which callees come first
    calls = {}
    for sub in subs:
        seen.clear()
        seen.resize(n, 0)
        stack.clear()
        stack.push_back(sub + 1)
        seen[sub + 1] = 1
        reached = []
        while stack.size():
            pc = stack.back()
            stack.pop_back()
            if code[pc, 0] == OP_LOOKAHEAD or code[pc, 0] == OP_ATOMIC:
                reached.append(pc)
            count = _successors(code, pc, nullable.data(), targets, consumes)
            for k in range(count):
                if not seen[targets[k]]:
                    seen[targets[k]] = 1
                    stack.push_back(targets[k])
        calls[sub] = reached
    order = []
    state = dict.fromkeys(subs, 0)  # 0 new, 1 on the path, 2 done
    for root in subs:
        if state[root]:
            continue
        path_nodes = [root]
        path_next = [0]  # per node on the path: its next callee to visit
        state[root] = 1
        while path_nodes:  # (wraparound is off: no [-1])
            node = path_nodes[len(path_nodes) - 1]
            at = path_next[len(path_next) - 1]
            if at == len(calls[node]):
                path_nodes.pop()
                path_next.pop()
                state[node] = 2
                order.append(node)
                continue
            path_next[len(path_next) - 1] = at + 1
            callee = calls[node][at]
            if state[callee] == 1:
                raise ValueError(f"instruction {callee}: its sub-program reaches it again (a lookahead or "
                                 "atomic group that loops to itself)")
            if state[callee] == 0:
                state[callee] = 1
                path_nodes.append(callee)
                path_next.append(0)
    # whether each sub-program can match without consuming: its match reached by edges that
    # consume nothing (callees' answers known first)
    for sub in order:
        seen.clear()
        seen.resize(n, 0)
        stack.clear()
        stack.push_back(sub + 1)
        seen[sub + 1] = 1
        found = False
        while stack.size() and not found:
            pc = stack.back()
            stack.pop_back()
            if code[pc, 0] == OP_MATCH:
                found = True
            count = _successors(code, pc, nullable.data(), targets, consumes)
            for k in range(count):
                if not consumes[k] and not seen[targets[k]]:
                    seen[targets[k]] = 1
                    stack.push_back(targets[k])
        nullable[sub] = found
    # a cycle of edges that consume nothing: depth-first, colour 1 = on the current path
    colour.clear()
    colour.resize(n, 0)
    for root in range(n):
        if colour[root]:
            continue
        stack.clear()
        edge.clear()
        stack.push_back(root)
        edge.push_back(0)
        colour[root] = 1
        while stack.size():
            pc = stack.back()
            count = _successors(code, pc, nullable.data(), targets, consumes)
            k = edge.back()
            if k >= count:
                colour[pc] = 2
                stack.pop_back()
                edge.pop_back()
                continue
            edge[edge.size() - 1] = k + 1
            if consumes[k]:
                continue
            target = targets[k]
            if target == pc:
                raise ValueError(f"instruction {pc} jumps to itself without consuming anything")
            if colour[target] == 1:
                raise ValueError(f"instruction {target}: a loop that consumes nothing (it would never end)")
            if colour[target] == 0:
                colour[target] = 1
                stack.push_back(target)
                edge.push_back(0)
