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
    int32_t word_class = -1;             // the class of \w, for \b and \B
    int32_t start_guard = -1;            // code points a match can start with (-1: any)
    bool total = false;                  // every position starts a match: pieces tile the text
};

// What to do when popping a backtrack frame.
enum FrameKind : int32_t { RESUME = 0, GIVE_BACK = 1, TAKE_MORE = 2 };

struct Frame {
    int32_t kind, pc;
    std::ptrdiff_t pos, aux;  // GIVE_BACK: the floor of the run; TAKE_MORE: code points taken
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

inline uint8_t equivalence(const Program& p, uint32_t cp) {
    return p.block_classes[(static_cast<std::size_t>(p.blocks[cp >> BLOCK_SHIFT]) << BLOCK_SHIFT) | (cp & 0xFF)];
}

inline bool in_class(const Program& p, int32_t k, uint32_t cp) {
    return (p.members[equivalence(p, cp)] >> k) & 1u;
}

inline bool in_guard(const Program& p, int32_t g, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t pos) {
    if (pos >= n) return false;
    std::ptrdiff_t w;
    uint8_t eq = equivalence(p, decode(s, pos, &w));
    return (p.guards[static_cast<std::size_t>(g) * GUARD_WORDS + (eq >> 6)] >> (eq & 63)) & 1u;
}

inline bool is_word_at(const Program& p, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t pos) {
    std::ptrdiff_t w;
    return pos < n && in_class(p, p.word_class, decode(s, pos, &w));
}

inline bool holds(const Program& p, int32_t assertion, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t pos) {
    switch (assertion) {
        case AT_START: return pos == 0;
        case AT_END_OR_FINAL_NEWLINE: return pos == n || (pos == n - 1 && s[pos] == NEWLINE);
        case AT_END: return pos == n;
        default: {
            bool before = pos > 0 && is_word_at(p, s, n, previous_start(s, pos));
            bool boundary = before != is_word_at(p, s, n, pos);
            return assertion == WORD_BOUNDARY ? boundary : !boundary;
        }
    }
}

// End of the match of the program from instruction `pc` at byte `pos`, or -1. Frames above
// `stack.size()` on entry are this call's; they are gone on return. May throw std::bad_alloc
// (the backtrack stack grows with the text a match covers).
inline std::ptrdiff_t run(const Program& p, const uint8_t* s, std::ptrdiff_t n, int32_t pc, std::ptrdiff_t pos,
                          std::vector<Frame>& stack) {
    const std::size_t base = stack.size();
    std::ptrdiff_t w;
    for (;;) {
        const Inst& in = p.code[pc];
        bool ok = true;
        switch (in.op) {
            case OP_MATCH:
                stack.resize(base);
                return pos;
            case OP_CLASS:
                if (pos < n && in_class(p, in.x, decode(s, pos, &w))) { pos += w; ++pc; } else { ok = false; }
                break;
            case OP_SPAN_GREEDY:
            case OP_SPAN_POSSESSIVE:
            case OP_SPAN_LAZY: {
                std::ptrdiff_t count = 0, floor = pos;
                const std::ptrdiff_t at_most = in.op == OP_SPAN_LAZY ? in.y : (in.z < 0 ? PTRDIFF_MAX : in.z);
                while (count < at_most && pos < n && in_class(p, in.x, decode(s, pos, &w))) {
                    pos += w;
                    if (++count == in.y) floor = pos;
                }
                if (count < in.y) { ok = false; break; }
                if (in.op == OP_SPAN_GREEDY && pos > floor) stack.push_back(Frame{GIVE_BACK, pc + 1, pos, floor});
                if (in.op == OP_SPAN_LAZY && (in.z < 0 || count < in.z)) stack.push_back(Frame{TAKE_MORE, pc, pos, count});
                ++pc;
                break;
            }
            case OP_SPLIT:
                if (in.z >= 0 && !in_guard(p, in.z, s, n, pos)) { pc = in.y; break; }
                stack.push_back(Frame{RESUME, in.y, pos, 0});
                pc = in.x;
                break;
            case OP_JUMP:
                pc = in.x;
                break;
            case OP_LOOKAHEAD:
                if ((run(p, s, n, pc + 1, pos, stack) >= 0) == (in.y != 0)) ok = false; else pc = in.x;
                break;
            case OP_ATOMIC: {
                std::ptrdiff_t end = run(p, s, n, pc + 1, pos, stack);
                if (end < 0) ok = false; else { pos = end; pc = in.x; }
                break;
            }
            default:  // OP_ASSERT
                if (holds(p, in.x, s, n, pos)) ++pc; else ok = false;
        }
        while (!ok) {  // backtrack: the most recent choice left
            if (stack.size() == base) return -1;
            Frame f = stack.back();
            stack.pop_back();
            if (f.kind == RESUME) {
                pc = f.pc; pos = f.pos; ok = true;
            } else if (f.kind == GIVE_BACK) {  // a greedy run gives back one code point
                pos = previous_start(s, f.pos);
                if (pos > f.aux) stack.push_back(Frame{GIVE_BACK, f.pc, pos, f.aux});
                pc = f.pc; ok = true;
            } else {  // TAKE_MORE: a lazy run takes one more code point
                const Inst& span = p.code[f.pc];
                if (f.pos < n && in_class(p, span.x, decode(s, f.pos, &w))) {
                    if (span.z < 0 || f.aux + 1 < span.z) stack.push_back(Frame{TAKE_MORE, f.pc, f.pos + w, f.aux + 1});
                    pc = f.pc + 1; pos = f.pos + w; ok = true;
                }
            }
        }
    }
}

inline std::vector<Frame>& scratch_stack() {
    thread_local std::vector<Frame> stack;
    return stack;
}

// End of the match that starts at byte `i` (< n) of a total program: a total program matches a
// non-empty piece at every position (ubpe/text/regex_program.py proves it before registering).
inline std::ptrdiff_t piece_end(const Program& p, const uint8_t* s, std::ptrdiff_t n, std::ptrdiff_t i) {
    std::vector<Frame>& stack = scratch_stack();
    stack.clear();
    std::ptrdiff_t end = run(p, s, n, 0, i, stack);
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
    std::vector<Frame>& stack = scratch_stack();
    std::ptrdiff_t w;
    while (i < n) {
        if (p.start_guard < 0 || in_guard(p, p.start_guard, s, n, i)) {
            stack.clear();
            std::ptrdiff_t found = run(p, s, n, 0, i, stack);
            if (found > i) { *start = i; *end = found; return true; }
        }
        decode(s, i, &w);
        i += w;
    }
    return false;
}

}  // namespace ubpe_regex
