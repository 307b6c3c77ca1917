// A small backtracking regex VM over the code points of valid UTF-8: the engine that runs a
// pre-tokenization pattern compiled by ubpe/text/regex_program.py (see _regex.pyx for why a
// VM and not PCRE2). Semantics are those of a backtracking engine such as the `regex` module:
// leftmost-first alternation, greedy / lazy / possessive quantifiers, atomic lookahead.
//
// A program is a list of instructions; every code point test goes through an equivalence
// class: code points that no class of the pattern tells apart share one, found by a two-level
// table (code point >> 8 -> block, block * 256 + low byte -> class), and `members[eq]` holds
// one bit per class of the pattern.
#pragma once

#include <cstddef>
#include <cstdint>
#include <algorithm>
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
    N_OPS = 10,
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
};

// The ASCII members of every class as bit sets, from the tables: an ASCII code point's class
// test is then one load (most text is ASCII).
inline void prepare(Program& p, int n_classes) {
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

// What to do when popping a backtrack frame.
enum FrameKind : int32_t { RESUME = 0, GIVE_BACK = 1, TAKE_MORE = 2 };

struct Frame {
    int32_t kind, pc;
    std::ptrdiff_t pos, aux;  // GIVE_BACK: the floor of the run; TAKE_MORE: code points taken
};

// The backtrack stack of one match: frames in a buffer on the C stack, moved to the heap only
// when a match needs more (a loop over a group pushes one frame per iteration). A frame is
// written field by field: one built as a temporary and copied whole stalls on store
// forwarding, which cost a third of the VM's time.
struct FrameStack {
    static const std::size_t INLINE_FRAMES = 64;
    Frame inline_frames[INLINE_FRAMES];
    std::vector<Frame> heap;
    Frame* data = inline_frames;
    std::size_t size = 0, capacity = INLINE_FRAMES;

    FrameStack() {}
    FrameStack(const FrameStack&) = delete;
    FrameStack& operator=(const FrameStack&) = delete;

    void push(int32_t kind, int32_t pc, std::ptrdiff_t pos, std::ptrdiff_t aux) {
        if (size == capacity) grow();  // may throw std::bad_alloc
        Frame& f = data[size++];
        f.kind = kind;
        f.pc = pc;
        f.pos = pos;
        f.aux = aux;
    }

    void grow() {
        std::vector<Frame> bigger(capacity * 2);
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
                case OP_SPLIT:
                    if (in.z >= 0 && !in_guard(in.z, pos)) { pc = in.y; break; }
                    stack.push(RESUME, in.y, pos, 0);
                    pc = in.x;
                    break;
                case OP_JUMP:
                    pc = in.x;
                    break;
                case OP_LOOKAHEAD:
                    if ((run(pc + 1, pos, stack) >= 0) == (in.y != 0)) ok = false; else pc = in.x;
                    break;
                case OP_ATOMIC: {
                    std::ptrdiff_t end = run(pc + 1, pos, stack);
                    if (end < 0) ok = false; else { pos = end; pc = in.x; }
                    break;
                }
                default:  // OP_ASSERT
                    if (holds(in.x, pos)) ++pc; else ok = false;
            }
            while (!ok) {  // backtrack: the most recent choice left
                if (stack.size == base) return -1;
                const Frame f = stack.data[--stack.size];
                if (f.kind == RESUME) {
                    pc = f.pc; pos = f.pos; ok = true;
                } else if (f.kind == GIVE_BACK) {  // a greedy run gives back one code point
                    pos = previous_start(s, f.pos);
                    if (pos > f.aux) stack.push(GIVE_BACK, f.pc, pos, f.aux);
                    pc = f.pc; ok = true;
                } else {  // TAKE_MORE: a lazy run takes one more code point
                    const Inst span = code[f.pc];
                    if (in_class(span.x, f.pos, &w)) {
                        if (span.z < 0 || f.aux + 1 < span.z) stack.push(TAKE_MORE, f.pc, f.pos + w, f.aux + 1);
                        pc = f.pc + 1; pos = f.pos + w; ok = true;
                    }
                }
            }
        }
    }
};

// End of the match that starts at byte `i` (< n) of a total program: a total program matches a
// non-empty piece at every position (ubpe/text/regex_program.py proves it before registering).
inline std::ptrdiff_t piece_end(const Program& p, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t i) {
    FrameStack stack;
    std::ptrdiff_t end = Matcher(p, s, n).run(0, i, stack);
    if (end <= i) {  // unreachable for a total program; still a piece, so the scan advances
        std::ptrdiff_t w;
        decode(s, i, &w);
        end = i + w;
    }
    return end;
}

// The next match at or after byte `i` as `regex.finditer` finds it (the program matches no
// empty string): true with its bounds, or false.
inline bool find_next(const Program& p, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t i,
                      std::ptrdiff_t* start, std::ptrdiff_t* end) {
    FrameStack stack;
    const Matcher matcher(p, s, n);
    std::ptrdiff_t w;
    while (i < n) {
        if (p.start_guard < 0 || matcher.in_guard(p.start_guard, i)) {
            std::ptrdiff_t found = matcher.run(0, i, stack);
            if (found > i) { *start = i; *end = found; return true; }
        }
        decode(s, i, &w);
        i += w;
    }
    return false;
}

}  // namespace ubpe_regex
