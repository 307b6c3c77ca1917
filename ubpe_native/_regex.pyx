# distutils: language = c++
"""The registry of compiled pre-tokenization patterns: programs of the backtracking VM in
``regex_vm.h``, compiled by :mod:`ubpe.text.regex_program` (whose docstring says why a VM of
our own and not PCRE2).

``register_program`` checks a program (every jump inside it, every class and guard known, the
tables the right shape: the VM reads them unchecked) and copies it into a slot that is never
freed, so a pattern id stays valid for the life of the process and any thread may run it
without the GIL. The scanner of ``_pretokenize`` runs a program where it would run a preset
(``piece_end``), for every kernel that splits text.

>>> import numpy as np
>>> code = np.array([[4, 0, 1, -1], [0, 0, 0, 0]], dtype=np.int32)   # [class 0]++ then match
>>> blocks = np.zeros(0x1100, dtype=np.uint16)
>>> block_classes = np.zeros(256, dtype=np.uint8)
>>> members = np.zeros(256, dtype=np.uint64); members[0] = 1          # everything in class 0
>>> register_program(code, blocks, block_classes, members, np.zeros(0, np.uint64), -1, -1, True) >= 64
True
"""

from libc.stdint cimport int32_t, uint8_t, uint16_t, uint64_t
from libcpp cimport bool as cbool
from libcpp.vector cimport vector

cdef extern from "regex_vm.h" namespace "ubpe_regex" nogil:
    cdef struct Inst:
        int32_t op, x, y, z
    cdef cppclass ProgramData "ubpe_regex::Program":
        vector[Inst] code
        vector[uint16_t] blocks
        vector[uint8_t] block_classes
        vector[uint64_t] members
        vector[uint64_t] guards
        int32_t word_class
        int32_t start_guard
        cbool total
    int32_t OP_MATCH, OP_CLASS, OP_SPAN_GREEDY, OP_SPAN_LAZY, OP_SPAN_POSSESSIVE, OP_SPLIT, OP_JUMP
    int32_t OP_LOOKAHEAD, OP_ATOMIC, OP_ASSERT, N_OPS, N_ASSERTIONS, AT_END, WORD_BOUNDARY
    int GUARD_WORDS, BLOCK_SIZE
    void prepare(ProgramData& p, int n_classes) except +  # std::bad_alloc -> MemoryError

cdef int MAX_PROGRAMS = 1024  # distinct patterns per process; more are left to the regex module
cdef int MAX_CLASSES = 64  # one bit of a uint64 per class
cdef int N_EQUIVALENCE_CLASSES = 256  # uint8 equivalence classes
cdef Py_ssize_t N_BLOCKS = 0x110000 // 256
cdef ProgramData* _programs[1024]
cdef int _n_programs = 0


cdef const Program* program_of(int pattern) noexcept nogil:
    cdef int slot = pattern - FIRST_PROGRAM_ID
    if slot < 0 or slot >= _n_programs:
        return NULL
    return <const Program*>_programs[slot]


def n_free_slots():
    """How many more programs :func:`register_program` takes."""
    return MAX_PROGRAMS - _n_programs


def register_program(const int32_t[:, ::1] code not None, const uint16_t[::1] blocks not None,
                     const uint8_t[::1] block_classes not None, const uint64_t[::1] members not None,
                     const uint64_t[::1] guards not None, int word_class, int start_guard, bint total):
    """Check a program and register it: its pattern id (``>= FIRST_PROGRAM_ID``).

    ``code`` holds one ``(op, x, y, z)`` row per instruction (``regex_vm.h``); ``blocks`` maps
    ``code point >> 8`` to a block of 256 entries of ``block_classes`` (equivalence classes),
    ``members[eq]`` has bit ``k`` set when the equivalence class is in class ``k``; ``guards``
    holds sets of equivalence classes, 4 words each; ``word_class`` is the class of ``\\w``
    (or -1 if no instruction asks for word boundaries); ``start_guard`` a guard that every
    match starts in (-1: none); ``total``: every position starts a non-empty match (the
    caller's proof: the scanner then takes the program's pieces as a tiling of the text).
    ValueError when anything would let the VM read outside its tables.
    """
    cdef Py_ssize_t n_code = code.shape[0], pc, n_guards, k
    cdef int32_t op, x, y, z
    if code.shape[1] != 4:
        raise ValueError("code must have 4 columns (op, x, y, z)")
    if n_code < 1:
        raise ValueError("code needs at least one instruction")
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
        if op == OP_CLASS or op == OP_SPAN_GREEDY or op == OP_SPAN_LAZY or op == OP_SPAN_POSSESSIVE:
            if not 0 <= x < MAX_CLASSES:
                raise ValueError(f"instruction {pc}: class {x} is not in 0..{MAX_CLASSES - 1}")
            if op != OP_CLASS and (y < 0 or z < -1 or (z >= 0 and z < y) or (op == OP_SPAN_LAZY and z == y)):
                raise ValueError(f"instruction {pc}: bad repeat {y}..{z}")
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
        if op in (OP_CLASS, OP_SPAN_GREEDY, OP_SPAN_LAZY, OP_SPAN_POSSESSIVE, OP_ASSERT) and pc + 1 >= n_code:
            raise ValueError(f"instruction {pc} runs off the end of the program")
    if _n_programs >= MAX_PROGRAMS:
        raise MemoryError(f"{MAX_PROGRAMS} patterns are compiled already")
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
    prepare(program[0], MAX_CLASSES)
    global _n_programs
    _programs[_n_programs] = program  # written before the id exists: readers never see it half-made
    _n_programs += 1
    return FIRST_PROGRAM_ID + _n_programs - 1
