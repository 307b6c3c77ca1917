// A byte trie of a fixed set of keys, built in one go from the keys in sorted order and laid
// out for look-ups: nodes are numbered breadth first, so the children of a node are the
// consecutive nodes first_child[node] .. first_child[node + 1] - 1, in byte order, and a
// step down compares their bytes (`label`) 16 at a time (a node far from the root has one or
// two children, 139 of BERT's 68,573 nodes more than 16); the root's children are a direct
// table of 256.
//
// It knows nothing about what the keys stand for: `build` says at which node each key ends,
// and the caller keeps whatever it needs per node (WordPiece: the piece ending there).
//
// Why not a hash of (node, byte) -> child: it needs a table sized by the keys' bytes (BERT's
// 36,350 initial and continuation pieces: 222,517 bytes, an 8 MB table for 68,573 nodes) and
// each insertion is a random cache miss; this one is two arrays of one entry per node, and
// its build sorts 16-byte records.
//
// Example, keys "ab", "b", "abc", "a": level 1 is "a" (1), "b" (2), level 2 "ab" (3),
// level 3 "abc" (4); first_child = [1, 3, 4, 4, 5, 5], label = [-, a, b, b, c], and the keys
// end at nodes 3, 2, 4, 1.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

namespace ubpe {

struct TrieKey {
  const uint8_t* data;
  size_t size;
};

class ByteTrie {
 public:
  static constexpr int32_t kNone = -1;  // no such child
  static constexpr size_t kMaxNodes = INT32_MAX;
  static constexpr int32_t kBlock = 16;  // the labels `child` compares at once

  ByteTrie() { std::fill(root_, root_ + 256, kNone); }

  // Rebuilds the trie of `keys[0:n]` (equal keys are one key; an empty one ends at the root,
  // node 0) and writes to `node_of[k]` the node where key k ends. Throws std::bad_alloc, or
  // std::length_error if the trie would have more than kMaxNodes nodes; the trie is then
  // left empty.
  void build(const TrieKey* keys, size_t n, int32_t* node_of) {
    clear();
    if (n > UINT32_MAX) throw std::length_error("too many trie keys");
    std::vector<Sorted> order = sorted(keys, n);

    // First pass: each key's common prefix with the key before it. Key i adds the nodes of
    // its bytes past that prefix, one per level; `per_level` counts them (first as changes
    // from the level before: +1 where a key's new levels start, -1 past where they end).
    std::vector<uint32_t> shared(n);
    std::vector<int64_t> per_level(2, 0);
    per_level[0] = 1;  // the root
    per_level[1] = -1;
    size_t n_nodes = 1;
    for (size_t i = 0; i < n; ++i) {
      size_t size = order[i].size, common = 0;
      if (i > 0) {  // the heads tell, unless the keys share their first 8 bytes
        size_t most = std::min(size, static_cast<size_t>(order[i - 1].size));
        common = std::min(shared_bytes(order[i].head, order[i - 1].head), most);
        if (common == kHeadBytes) {
          const uint8_t* key = keys[order[i].index].data;
          const uint8_t* previous = keys[order[i - 1].index].data;
          while (common < most && key[common] == previous[common]) ++common;
        }
      }
      shared[i] = static_cast<uint32_t>(common);
      if (size > common) {
        if (size + 1 >= per_level.size()) per_level.resize(size + 2, 0);
        ++per_level[common + 1];
        --per_level[size + 1];
        n_nodes += size - common;
        if (n_nodes > kMaxNodes) throw std::length_error("too many trie nodes");
      }
    }

    // Second pass: the nodes numbered level by level; within a level in key order, which is
    // the order of (parent, byte), so a node's children are consecutive and sorted.
    std::vector<size_t> next(per_level.size());  // the next free number of each level
    for (size_t level = 0, at = 0; level < per_level.size(); ++level) {
      if (level > 0) per_level[level] += per_level[level - 1];
      next[level] = at;
      at += static_cast<size_t>(per_level[level]);
    }
    std::vector<int32_t> path(per_level.size(), 0);  // the nodes of the current key's prefixes
    label_.resize(n_nodes + kBlock, 0);
    first_child_.resize(n_nodes + 1, 0);  // first the number of children of each node
    for (size_t i = 0; i < n; ++i) {
      size_t size = order[i].size;
      for (size_t level = shared[i] + 1; level <= size; ++level) {
        int32_t node = static_cast<int32_t>(next[level]++);
        label_[node] = level <= kHeadBytes ? static_cast<uint8_t>(order[i].head >> shift_of(level - 1))
                                           : keys[order[i].index].data[level - 1];
        ++first_child_[path[level - 1]];
        path[level] = node;
      }
      node_of[order[i].index] = path[size];
    }
    // counts -> starts: the root's children come first, right after it
    int32_t start = 1;
    for (size_t node = 0; node <= n_nodes; ++node) {
      int32_t count = first_child_[node];
      first_child_[node] = start;
      start += count;
    }
    for (int32_t child = first_child_[0]; child < first_child_[1]; ++child) root_[label_[child]] = child;
  }

  // The child of `node` by `byte`, or kNone.
  int32_t child(int32_t node, uint8_t byte) const {
    if (node == 0) return root_[byte];
    const uint8_t* label = label_.data();
    int32_t child = first_child_[node], end = first_child_[node + 1];
#if defined(__SSE2__) && (defined(__GNUC__) || defined(__clang__))
    // 16 labels at a time, one compare (label_ has kBlock bytes of room past its last node)
    const __m128i wanted = _mm_set1_epi8(static_cast<char>(byte));
    for (; child < end; child += kBlock) {
      __m128i block = _mm_loadu_si128(reinterpret_cast<const __m128i*>(label + child));
      unsigned hits = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(block, wanted)));
      if (hits != 0) {
        int32_t at = child + __builtin_ctz(hits);
        return at < end ? at : kNone;
      }
    }
#else
    for (; child < end; ++child) {
      if (label[child] >= byte) return label[child] == byte ? child : kNone;
    }
#endif
    return kNone;
  }

  // The number of nodes (the root included); node numbers are 0 .. size() - 1.
  size_t size() const { return first_child_.empty() ? 1 : first_child_.size() - 1; }

 private:
  struct Sorted {  // a key in the sort: its head (see shift_of), index and size
    uint64_t head;
    uint32_t index;
    uint32_t size;
  };

  int32_t root_[256];
  std::vector<int32_t> first_child_;  // node -> its first child (n_nodes + 1 entries)
  std::vector<uint8_t> label_;        // node -> the byte on the edge into it

  static constexpr size_t kHeadBytes = 8;
  static constexpr size_t kRadix = 256;

  // A key's head: its first kHeadBytes bytes as a big-endian number, zeros past its end.
  // Heads keep the keys' order (a key that ends compares as if followed by zeros; equal heads
  // fall back to the bytes). Byte p of a key is at bit shift_of(p) of its head.
  static unsigned shift_of(size_t p) { return static_cast<unsigned>(8 * (kHeadBytes - 1 - p)); }

  // The number of first bytes two heads share (kHeadBytes: equal).
  static size_t shared_bytes(uint64_t a, uint64_t b) {
    if (a == b) return kHeadBytes;
#if defined(__GNUC__) || defined(__clang__)
    return static_cast<size_t>(__builtin_clzll(a ^ b)) / 8;
#else
    size_t p = 0;
    while (((a ^ b) >> shift_of(p) & 0xFF) == 0) ++p;
    return p;
#endif
  }

  // The keys in the keys' byte order: a radix sort of the heads (least significant byte
  // first, a pass per byte where the keys differ), then a comparison sort of each run of equal
  // heads (keys that share their first 8 bytes, few). A comparison sort of them all costs
  // ~4x more (36k keys: 1.5 ms), an MSD radix sort a little more.
  static std::vector<Sorted> sorted(const TrieKey* keys, size_t n) {
    std::vector<Sorted> order(n), spare(n);
    // the heads, and how many keys hold each byte value at each of their first 8 bytes; a
    // key that ends before byte p is counted as a zero there at the end (keys of a few bytes
    // are most: counting their padding one by one, the same counter over and over, is slow)
    std::vector<size_t> counts(kHeadBytes * kRadix, 0);  // byte p's at p * kRadix
    size_t sizes[kHeadBytes + 1] = {0};  // keys by their first bytes held, up to 8
    for (size_t k = 0; k < n; ++k) {
      if (keys[k].size > kMaxNodes) throw std::length_error("too many trie nodes");
      size_t held = std::min(keys[k].size, kHeadBytes);
      uint64_t value = 0;
      for (size_t p = 0; p < held; ++p) {
        uint8_t byte = keys[k].data[p];
        value |= static_cast<uint64_t>(byte) << shift_of(p);
        ++counts[p * kRadix + byte];
      }
      ++sizes[held];
      order[k] = Sorted{value, static_cast<uint32_t>(k), static_cast<uint32_t>(keys[k].size)};
    }
    for (size_t p = 0, ended = 0; p < kHeadBytes; ++p) {
      ended += sizes[p];
      counts[p * kRadix] += ended;
    }
    for (size_t p = kHeadBytes; p-- > 0;) {
      size_t* count = counts.data() + p * kRadix;
      if (std::find(count, count + kRadix, n) != count + kRadix) continue;  // one value: no change
      for (size_t digit = 0, at = 0; digit < kRadix; ++digit) {
        size_t here = count[digit];
        count[digit] = at;
        at += here;
      }
      unsigned shift = shift_of(p);
      for (const Sorted& entry : order) spare[count[(entry.head >> shift) & 0xFF]++] = entry;
      order.swap(spare);
    }
    auto before = [keys](const Sorted& a, const Sorted& b) {
      const TrieKey& x = keys[a.index];
      const TrieKey& y = keys[b.index];
      int c = std::memcmp(x.data, y.data, std::min(x.size, y.size));
      return c != 0 ? c < 0 : x.size < y.size;
    };
    for (size_t start = 0, end; start < n; start = end) {
      for (end = start + 1; end < n && order[end].head == order[start].head;) ++end;
      if (end - start > 1) std::sort(order.begin() + start, order.begin() + end, before);
    }
    return order;
  }

  void clear() {
    std::fill(root_, root_ + 256, kNone);
    first_child_.clear();
    label_.clear();
  }
};

}  // namespace ubpe
