// A small backtracking regex VM over the code points of valid UTF-8: the engine that runs a
// pre-tokenization pattern compiled by ubpe/text/regex_program.py (see _regex.pyx for why a
// VM and not PCRE2). Semantics are those of a backtracking engine such as the `regex` module:
// leftmost-first alternation, greedy / lazy / possessive quantifiers, atomic lookahead.
//
// A program is a list of instructions; every code point test goes through an equivalence
// class: code points that no class of the pattern tells apart share one, found by a two-level
// table (code point >> 8 -> block, block * 256 + low byte -> class), and `members[eq]` holds
// one bit per class of the pattern.
//
// A match has a budget (see FrameStack): steps (choices taken and taken back) and backtrack
// frames in proportion to the program and to the text it may cover. A pattern that backtracks
// exponentially (`(a+)+$`) runs out of it in milliseconds and the match stops; so does one
// interrupted by a signal (the program's `poll` hook, every POLL_STEPS steps and every
// POLL_BYTES of text scanned). The hooks set the Python exception with the GIL; the entries
// then throw Stopped, which Cython's `except +` turns into that exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
#include <exception>
#include <vector>

namespace ubpe_regex {

enum Op : int32_t {
    OP_MATCH = 0,            // the match ends here
    OP_CLASS = 1,            // one code point of class x
    OP_SPAN_GREEDY = 2,      // y..z (z < 0: no limit) code points of class x, most first
    OP_SPAN_LAZY = 3,        // the same, fewest first
    OP_SPAN_POSSESSIVE = 4,  // the same, most only (no backtracking into the run)
    OP_SPLIT = 5,            // try x, then y; z >= 0: x only if the next code point is in guard z
    OP_JUMP = 6,             // continue at x
    OP_LOOKAHEAD = 7,        // the sub-program at pc + 1 matches here (y != 0: does not); then x
    OP_ATOMIC = 8,           // the sub-program at pc + 1 matches once, never revisited; then x
    OP_ASSERT = 9,           // a zero-width test x (Assertion)
    // A repeated group of fixed width with no choice inside ((?:ab)+, (?:\r\n)*,
    // (?:[a-z][0-9]){2,5}): y..z (z < 0: no limit) iterations of a body of x code points, one
    // per OP_CLASS at pc + 1 .. pc + x (read only by this instruction); then pc + 1 + x. Each
    // iteration matches in one way only, so the choices are the iteration counts, as for a
    // run: one counted frame holds them all (a loop of splits pushes a frame per iteration).
    OP_GROUP_GREEDY = 10,
    OP_GROUP_LAZY = 11,
    OP_GROUP_POSSESSIVE = 12,
    N_OPS = 13,
    // Internal (written by prepare, never registered): OP_SPLIT whose branch y cannot fail
    // (nothing but jumps and runs that may be empty up to a match). Once it is taken, no choice
    // older than it can be asked for again, so it drops them: a greedy loop at the end of a
    // pattern then holds one frame, not one per iteration.
    OP_SPLIT_CUT = 13,
};

inline bool is_span(int32_t op) { return op == OP_SPAN_GREEDY || op == OP_SPAN_LAZY || op == OP_SPAN_POSSESSIVE; }
inline bool is_group(int32_t op) { return op == OP_GROUP_GREEDY || op == OP_GROUP_LAZY || op == OP_GROUP_POSSESSIVE; }

// Why a match was refused (the `refuse` hook's `why`).
enum Refusal : int32_t { TOO_MANY_STEPS = 0, TOO_MANY_FRAMES = 1 };

// The budget of one match: STEP_ALLOWANCE steps, plus STEPS_PER_STATE per (instruction, byte)
// pair it could visit (a backtracking search that is not exponential visits each a few
// times); FRAME_ALLOWANCE frames, plus FRAMES_PER_BYTE per byte of text after its start.
const uint64_t STEP_ALLOWANCE = uint64_t(1) << 20;
const uint64_t STEPS_PER_STATE = 4;
const std::size_t FRAME_ALLOWANCE = std::size_t(1) << 16;
const std::size_t FRAMES_PER_BYTE = 4;
// How often a match, and a scan, asks the `poll` hook whether to stop (Ctrl-C).
const uint64_t POLL_STEPS = uint64_t(1) << 16;
const int POLL_BYTES_SHIFT = 20;

// Thrown by the entries when a hook has stopped the match (the Python exception is set).
struct Stopped : std::exception {
    const char* what() const noexcept override { return "the regex VM stopped a match"; }
};

enum Assertion : int32_t {
    AT_START = 0,                 // ^ \A
    AT_END_OR_FINAL_NEWLINE = 1,  // $ (without MULTILINE): the end, or before a final \n
    AT_END = 2,                   // \Z
    WORD_BOUNDARY = 3,            // \b (word: the program's word class)
    NOT_WORD_BOUNDARY = 4,        // \B
    N_ASSERTIONS = 5,
};

struct Inst {
    int32_t op, x, y, z;
};

const int BLOCK_SHIFT = 8;
const int BLOCK_SIZE = 1 << BLOCK_SHIFT;
const int GUARD_WORDS = 4;  // a guard is a set of equivalence classes: 256 bits
const uint32_t NEWLINE = 0x0A;

struct Program {
    std::vector<Inst> code;
    std::vector<uint16_t> blocks;        // code point >> 8 -> block
    std::vector<uint8_t> block_classes;  // block * 256 + (code point & 255) -> equivalence class
    std::vector<uint64_t> members;       // equivalence class -> bit k: in class k
    std::vector<uint64_t> guards;        // GUARD_WORDS words per guard
    std::vector<uint64_t> ascii;         // 2 words per class: its ASCII members (built by prepare)
    std::vector<uint64_t> ascii_guards;  // 2 words per guard: its ASCII members (built by prepare)
    int32_t word_class = -1;             // the class of \w, for \b and \B
    int32_t start_guard = -1;            // code points a match can start with (-1: any)
    bool total = false;                  // every position starts a match: pieces tile the text
    int32_t slot = -1;                   // the registry's slot (passed to the hooks)
    // Hooks of the registry (_regex.pyx). poll: < 0 to stop (the exception set, e.g.
    // KeyboardInterrupt); refuse: sets the exception of a match over its budget.
    int (*poll)() = nullptr;
    void (*refuse)(int32_t slot, int32_t why, std::ptrdiff_t at, uint64_t limit) = nullptr;
};

// Whether the program from `pc` reaches a match whatever the text (only jumps and runs or
// groups that may be empty on the way), for every pc at once: ubpe/text/regex_program.py's
// _cannot_fail_from, computed here for any registered program (cycles: no).
inline std::vector<uint8_t> cannot_fail(const std::vector<Inst>& code) {
    const std::size_t n = code.size();
    enum : uint8_t { UNKNOWN = 0, VISITING = 1, NO = 2, YES = 3 };
    std::vector<uint8_t> state(n, UNKNOWN);
    std::vector<std::size_t> path;
    for (std::size_t start = 0; start < n; ++start) {
        std::size_t pc = start;
        path.clear();
        uint8_t found = NO;
        for (;;) {
            if (state[pc] == YES || state[pc] == NO) { found = state[pc]; break; }
            if (state[pc] == VISITING) { found = NO; break; }
            const Inst& in = code[pc];
            if (in.op == OP_MATCH) { found = YES; state[pc] = YES; break; }
            std::size_t next;
            if (in.op == OP_JUMP) next = static_cast<std::size_t>(in.x);
            else if (is_span(in.op) && in.y == 0) next = pc + 1;
            else if (is_group(in.op) && in.y == 0) next = pc + 1 + static_cast<std::size_t>(in.x);
            else { state[pc] = NO; found = NO; break; }
            if (next >= n) { state[pc] = NO; found = NO; break; }
            state[pc] = VISITING;
            path.push_back(pc);
            pc = next;
        }
        for (std::size_t k : path) state[k] = found;
    }
    std::vector<uint8_t> out(n);
    for (std::size_t k = 0; k < n; ++k) out[k] = state[k] == YES;
    return out;
}

// The ASCII members of every class as bit sets, from the tables: an ASCII code point's class
// test is then one load (most text is ASCII).
// Also marks the splits that may drop older choices (OP_SPLIT_CUT).
inline void prepare(Program& p, int n_classes) {
    const std::vector<uint8_t> safe = cannot_fail(p.code);
    for (Inst& in : p.code)
        if (in.op == OP_SPLIT && in.y >= 0 && static_cast<std::size_t>(in.y) < p.code.size() && safe[in.y])
            in.op = OP_SPLIT_CUT;
    p.ascii.assign(2 * static_cast<std::size_t>(n_classes), 0);
    for (int k = 0; k < n_classes; ++k)
        for (uint32_t c = 0; c < 0x80; ++c) {
            uint8_t eq = p.block_classes[(static_cast<std::size_t>(p.blocks[0]) << BLOCK_SHIFT) | c];
            if ((p.members[eq] >> k) & 1u) p.ascii[2 * k + (c >> 6)] |= uint64_t(1) << (c & 63);
        }
    const std::size_t n_guards = p.guards.size() / GUARD_WORDS;
    p.ascii_guards.assign(2 * n_guards, 0);
    for (std::size_t g = 0; g < n_guards; ++g)
        for (uint32_t c = 0; c < 0x80; ++c) {
            uint8_t eq = p.block_classes[(static_cast<std::size_t>(p.blocks[0]) << BLOCK_SHIFT) | c];
            if ((p.guards[g * GUARD_WORDS + (eq >> 6)] >> (eq & 63)) & 1u)
                p.ascii_guards[2 * g + (c >> 6)] |= uint64_t(1) << (c & 63);
        }
}

// What to do when popping a backtrack frame: RESUME at pc, pos; a greedy run or group gives
// back one code point or iteration (pc: after the run / the group's instruction; aux: the byte
// it cannot give back past); a lazy one takes one more (pc: its instruction; aux: the count).
enum FrameKind : int32_t { RESUME = 0, GIVE_BACK = 1, TAKE_MORE = 2, GIVE_BACK_GROUP = 3, TAKE_MORE_GROUP = 4 };

struct Frame {
    int32_t kind, pc;
    std::ptrdiff_t pos, aux;
};

// The backtrack stack of a scan, and the budget of its current match: frames in a buffer on
// the C stack, moved to the heap only when a match needs more (a loop over a group with a
// choice inside pushes one frame per iteration, unless OP_SPLIT_CUT drops them). A frame is
// written field by field: one built as a temporary and copied whole stalls on store
// forwarding, which cost a third of the VM's time.
struct FrameStack {
    static const std::size_t INLINE_FRAMES = 64;
    Frame inline_frames[INLINE_FRAMES];
    std::vector<Frame> heap;
    Frame* data = inline_frames;
    std::size_t size = 0, capacity = INLINE_FRAMES;
    const Program& program;
    uint64_t steps = 0, step_limit = 0, step_allowance = 0, next_check = 0;
    std::size_t frame_limit = FRAME_ALLOWANCE;
    std::ptrdiff_t start = 0;

    explicit FrameStack(const Program& p) : program(p) {}
    FrameStack(const FrameStack&) = delete;
    FrameStack& operator=(const FrameStack&) = delete;

    // A new match from byte `at` of a text of `n` bytes: its budget.
    void begin_match(std::ptrdiff_t at, std::ptrdiff_t n) {
        const uint64_t states = static_cast<uint64_t>(program.code.size()) * static_cast<uint64_t>(n - at + 1);
        start = at;
        step_allowance = STEP_ALLOWANCE + STEPS_PER_STATE * states;
        step_limit = steps + step_allowance;
        frame_limit = FRAME_ALLOWANCE + FRAMES_PER_BYTE * static_cast<std::size_t>(n - at);
        next_check = std::min(step_limit + 1, (steps | (POLL_STEPS - 1)) + 1);
    }

    // One step (a choice taken or taken back); every POLL_STEPS asks `poll`, past the budget
    // refuses. Throws Stopped.
    void step() {
        if (++steps >= next_check) checkpoint();
    }

    void checkpoint() {
        if (steps > step_limit) refuse(TOO_MANY_STEPS, step_allowance);
        poll();
        next_check = std::min(step_limit + 1, steps + POLL_STEPS);
    }

    void poll() const {
        if (program.poll != nullptr && program.poll() < 0) throw Stopped();
    }

    [[noreturn]] void refuse(int32_t why, uint64_t limit) const {
        if (program.refuse != nullptr) program.refuse(program.slot, why, start, limit);
        throw Stopped();
    }

    void push(int32_t kind, int32_t pc, std::ptrdiff_t pos, std::ptrdiff_t aux) {
        if (size == capacity) grow();  // may throw std::bad_alloc, or Stopped past the budget
        Frame& f = data[size++];
        f.kind = kind;
        f.pc = pc;
        f.pos = pos;
        f.aux = aux;
    }

    void grow() {
        if (capacity >= frame_limit) refuse(TOO_MANY_FRAMES, frame_limit);
        std::vector<Frame> bigger(std::min(capacity * 2, frame_limit));
        std::copy(data, data + size, bigger.begin());
        heap.swap(bigger);
        data = heap.data();
        capacity = heap.size();
    }
};

inline uint32_t decode(const uint8_t* s, std::ptrdiff_t i, std::ptrdiff_t* width) {
    uint8_t b = s[i];
    if (b < 0x80) { *width = 1; return b; }
    if (b < 0xE0) { *width = 2; return ((b & 0x1Fu) << 6) | (s[i + 1] & 0x3Fu); }
    if (b < 0xF0) {
        *width = 3;
        return ((b & 0x0Fu) << 12) | ((s[i + 1] & 0x3Fu) << 6) | (s[i + 2] & 0x3Fu);
    }
    *width = 4;
    return ((b & 0x07u) << 18) | ((s[i + 1] & 0x3Fu) << 12) | ((s[i + 2] & 0x3Fu) << 6) | (s[i + 3] & 0x3Fu);
}

inline std::ptrdiff_t previous_start(const uint8_t* s, std::ptrdiff_t i) {
    do { --i; } while (i > 0 && (s[i] & 0xC0) == 0x80);
    return i;
}

// A program's tables as raw pointers, and the text: what one match reads (built per call, so
// the loop below keeps them in registers rather than reloading them from the vectors).
struct Matcher {
    const Inst* code;
    const uint16_t* blocks;
    const uint8_t* block_classes;
    const uint64_t* members;
    const uint64_t* guards;
    const uint64_t* ascii;
    const uint64_t* ascii_guards;
    int32_t word_class;
    const uint8_t* s;
    std::ptrdiff_t n;

    Matcher(const Program& p, const uint8_t* text, std::ptrdiff_t length)
        : code(p.code.data()), blocks(p.blocks.data()), block_classes(p.block_classes.data()),
          members(p.members.data()), guards(p.guards.data()), ascii(p.ascii.data()), ascii_guards(p.ascii_guards.data()),
          word_class(p.word_class),
          s(text), n(length) {}

    uint8_t equivalence(uint32_t cp) const {
        return block_classes[(static_cast<std::size_t>(blocks[cp >> BLOCK_SHIFT]) << BLOCK_SHIFT) | (cp & 0xFF)];
    }

    // the equivalence class of the code point at `pos` (< n) and its width
    uint8_t equivalence_at(std::ptrdiff_t pos, std::ptrdiff_t* width) const {
        if (s[pos] < 0x80) { *width = 1; return block_classes[(static_cast<std::size_t>(blocks[0]) << BLOCK_SHIFT) | s[pos]]; }
        return equivalence(decode(s, pos, width));
    }

    bool in_class(int32_t k, std::ptrdiff_t pos, std::ptrdiff_t* width) const {
        if (pos >= n) return false;
        const uint8_t c = s[pos];
        if (c < 0x80) { *width = 1; return (ascii[2 * k + (c >> 6)] >> (c & 63)) & 1u; }
        return (members[equivalence(decode(s, pos, width))] >> k) & 1u;
    }

    bool in_guard(int32_t g, std::ptrdiff_t pos) const {
        if (pos >= n) return false;
        const uint8_t c = s[pos];
        if (c < 0x80) return (ascii_guards[2 * g + (c >> 6)] >> (c & 63)) & 1u;
        std::ptrdiff_t w;
        uint8_t eq = equivalence_at(pos, &w);
        return (guards[static_cast<std::size_t>(g) * GUARD_WORDS + (eq >> 6)] >> (eq & 63)) & 1u;
    }

    // The end of one iteration of the group at `pc` from `pos` (its body: code[pc].x classes
    // from pc + 1), or -1.
    std::ptrdiff_t iteration_end(int32_t pc, std::ptrdiff_t pos) const {
        const int32_t width = code[pc].x;
        std::ptrdiff_t w;
        for (int32_t k = 1; k <= width; ++k) {
            if (!in_class(code[pc + k].x, pos, &w)) return -1;
            pos += w;
        }
        return pos;
    }

    bool is_word_at(std::ptrdiff_t pos) const {
        std::ptrdiff_t w;
        return in_class(word_class, pos, &w);
    }

    bool holds(int32_t assertion, std::ptrdiff_t pos) const {
        switch (assertion) {
            case AT_START: return pos == 0;
            case AT_END_OR_FINAL_NEWLINE: return pos == n || (pos == n - 1 && s[pos] == NEWLINE);
            case AT_END: return pos == n;
            default: {
                bool before = pos > 0 && is_word_at(previous_start(s, pos));
                bool boundary = before != is_word_at(pos);
                return assertion == WORD_BOUNDARY ? boundary : !boundary;
            }
        }
    }

    // End of the match from instruction `pc` at byte `pos`, or -1. Frames above
    // `stack.size` on entry are this call's; they are gone on return. May throw
    // std::bad_alloc (the backtrack stack grows with the text a match covers).
    std::ptrdiff_t run(int32_t pc, std::ptrdiff_t pos, FrameStack& stack) const {
        const std::size_t base = stack.size;
        std::ptrdiff_t w;
        for (;;) {
            const Inst in = code[pc];
            bool ok = true;
            switch (in.op) {
                case OP_MATCH:
                    stack.size = base;
                    return pos;
                case OP_CLASS:
                    if (in_class(in.x, pos, &w)) { pos += w; ++pc; } else { ok = false; }
                    break;
                case OP_SPAN_GREEDY:
                case OP_SPAN_POSSESSIVE:
                case OP_SPAN_LAZY: {
                    std::ptrdiff_t count = 0, floor = pos;
                    const std::ptrdiff_t at_most = in.op == OP_SPAN_LAZY ? in.y : (in.z < 0 ? PTRDIFF_MAX : in.z);
                    while (count < at_most && in_class(in.x, pos, &w)) {
                        pos += w;
                        if (++count == in.y) floor = pos;
                    }
                    if (count < in.y) { ok = false; break; }
                    if (in.op == OP_SPAN_GREEDY && pos > floor) stack.push(GIVE_BACK, pc + 1, pos, floor);
                    if (in.op == OP_SPAN_LAZY && (in.z < 0 || count < in.z)) stack.push(TAKE_MORE, pc, pos, count);
                    ++pc;
                    break;
                }
                case OP_GROUP_GREEDY:
                case OP_GROUP_POSSESSIVE:
                case OP_GROUP_LAZY: {  // as a run, an iteration at a time
                    std::ptrdiff_t count = 0, floor = pos, next;
                    const std::ptrdiff_t at_most = in.op == OP_GROUP_LAZY ? in.y : (in.z < 0 ? PTRDIFF_MAX : in.z);
                    while (count < at_most && (next = iteration_end(pc, pos)) >= 0) {
                        pos = next;
                        if (++count == in.y) floor = pos;
                    }
                    if (count < in.y) { ok = false; break; }
                    if (in.op == OP_GROUP_GREEDY && pos > floor) stack.push(GIVE_BACK_GROUP, pc, pos, floor);
                    if (in.op == OP_GROUP_LAZY && (in.z < 0 || count < in.z)) stack.push(TAKE_MORE_GROUP, pc, pos, count);
                    pc += 1 + in.x;
                    break;
                }
                case OP_SPLIT_CUT:  // branch y cannot fail: no older choice is needed again
                    stack.size = base;
                    [[fallthrough]];
                case OP_SPLIT:
                    stack.step();
                    if (in.z >= 0 && !in_guard(in.z, pos)) { pc = in.y; break; }
                    stack.push(RESUME, in.y, pos, 0);
                    pc = in.x;
                    break;
                case OP_JUMP:
                    pc = in.x;
                    break;
                case OP_LOOKAHEAD:
                    stack.step();
                    if ((run(pc + 1, pos, stack) >= 0) == (in.y != 0)) ok = false; else pc = in.x;
                    break;
                case OP_ATOMIC: {
                    stack.step();
                    std::ptrdiff_t end = run(pc + 1, pos, stack);
                    if (end < 0) ok = false; else { pos = end; pc = in.x; }
                    break;
                }
                default:  // OP_ASSERT
                    if (holds(in.x, pos)) ++pc; else ok = false;
            }
            while (!ok) {  // backtrack: the most recent choice left
                if (stack.size == base) return -1;
                stack.step();
                const Frame f = stack.data[--stack.size];
                if (f.kind == RESUME) {
                    pc = f.pc; pos = f.pos; ok = true;
                } else if (f.kind == GIVE_BACK) {  // a greedy run gives back one code point
                    pos = previous_start(s, f.pos);
                    if (pos > f.aux) stack.push(GIVE_BACK, f.pc, pos, f.aux);
                    pc = f.pc; ok = true;
                } else if (f.kind == TAKE_MORE) {  // a lazy run takes one more code point
                    const Inst span = code[f.pc];
                    if (in_class(span.x, f.pos, &w)) {
                        if (span.z < 0 || f.aux + 1 < span.z) stack.push(TAKE_MORE, f.pc, f.pos + w, f.aux + 1);
                        pc = f.pc + 1; pos = f.pos + w; ok = true;
                    }
                } else if (f.kind == GIVE_BACK_GROUP) {  // a greedy group gives back one iteration
                    const int32_t width = code[f.pc].x;
                    pos = f.pos;
                    for (int32_t k = 0; k < width; ++k) pos = previous_start(s, pos);
                    if (pos > f.aux) stack.push(GIVE_BACK_GROUP, f.pc, pos, f.aux);
                    pc = f.pc + 1 + width; ok = true;
                } else {  // TAKE_MORE_GROUP: a lazy group takes one more iteration
                    const Inst group = code[f.pc];
                    const std::ptrdiff_t next = iteration_end(f.pc, f.pos);
                    if (next >= 0) {
                        if (group.z < 0 || f.aux + 1 < group.z) stack.push(TAKE_MORE_GROUP, f.pc, next, f.aux + 1);
                        pc = f.pc + 1 + group.x; pos = next; ok = true;
                    }
                }
            }
        }
    }
};

// Whether a scan that went from byte `from` to byte `to` passed a multiple of 2^POLL_BYTES_SHIFT.
inline bool crossed_poll_mark(std::ptrdiff_t from, std::ptrdiff_t to) {
    return (from >> POLL_BYTES_SHIFT) != (to >> POLL_BYTES_SHIFT);
}

// End of the match that starts at byte `i` (< n) of a total program: a total program matches a
// non-empty piece at every position (ubpe/text/regex_program.py proves it before registering).
// Throws Stopped (over the budget, or interrupted) and std::bad_alloc.
inline std::ptrdiff_t piece_end(const Program& p, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t i) {
    FrameStack stack(p);
    stack.begin_match(i, n);
    std::ptrdiff_t end = Matcher(p, s, n).run(0, i, stack);
    if (end <= i) {  // unreachable for a total program; still a piece, so the scan advances
        std::ptrdiff_t w;
        decode(s, i, &w);
        end = i + w;
    }
    if (crossed_poll_mark(i, end)) stack.poll();  // a long split, piece by piece
    return end;
}

// The next match at or after byte `i` as `regex.finditer` finds it (the program matches no
// empty string): true with its bounds, or false. Throws Stopped and std::bad_alloc.
inline bool find_next(const Program& p, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t i,
                      std::ptrdiff_t* start, std::ptrdiff_t* end) {
    FrameStack stack(p);
    const Matcher matcher(p, s, n);
    const std::ptrdiff_t from = i;
    std::ptrdiff_t w;
    while (i < n) {
        if (p.start_guard < 0 || matcher.in_guard(p.start_guard, i)) {
            stack.begin_match(i, n);
            stack.step();  // one per start: a long scan that finds nothing still polls
            std::ptrdiff_t found = matcher.run(0, i, stack);
            if (found > i) {
                *start = i;
                *end = found;
                if (crossed_poll_mark(from, found)) stack.poll();
                return true;
            }
        } else if ((i & ((std::ptrdiff_t(1) << POLL_BYTES_SHIFT) - 1)) == 0 && i > from) {
            stack.poll();  // skipping by the start guard
        }
        decode(s, i, &w);
        i += w;
    }
    return false;
}

// For tests (_regex._py_match): the end of the match from byte `i` (-1: none) and the frames
// the backtrack stack had room for when it ended (what the match held at most, rounded up).
inline std::ptrdiff_t match_with_capacity(const Program& p, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t i,
                                          std::size_t* capacity) {
    FrameStack stack(p);
    stack.begin_match(i, n);
    std::ptrdiff_t end = Matcher(p, s, n).run(0, i, stack);
    *capacity = stack.capacity;
    return end;
}

}  // namespace ubpe_regex
