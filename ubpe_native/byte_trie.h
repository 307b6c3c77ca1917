// A byte trie of a fixed set of keys, built in one go from the keys in sorted order and laid
// out for look-ups: nodes are numbered breadth first, so the children of a node are the
// consecutive nodes first_child[node] .. first_child[node + 1] - 1, in byte order, and a
// step down scans their bytes (`label`), a few at most below the root; the root's children
// are a direct table of 256.
//
// It knows nothing about what the keys stand for: `build` says at which node each key ends,
// and the caller keeps whatever it needs per node (WordPiece: the piece ending there).
//
// Why not a hash of (node, byte) -> child: it needs a table sized by the keys' bytes (BERT's
// 30,522 pieces: 222,517 bytes, an 8 MB table for 68,634 nodes) and each insertion is a
// random cache miss; this one is two arrays of one entry per node, written in order.
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

namespace ubpe {

struct TrieKey {
  const uint8_t* data;
  size_t size;
};

class ByteTrie {
 public:
  static constexpr int32_t kNone = -1;  // no such child
  static constexpr size_t kMaxNodes = INT32_MAX;

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
    // its bytes past that prefix, one per level; `per_level` counts them.
    std::vector<uint32_t> shared(n);
    std::vector<size_t> per_level(1, 1);  // level 0: the root
    size_t n_nodes = 1;
    const TrieKey* previous = nullptr;
    for (size_t i = 0; i < n; ++i) {
      const TrieKey& key = keys[order[i].index];
      size_t common = 0;
      if (previous != nullptr) {
        size_t most = std::min(key.size, previous->size);
        uint64_t differ = order[i].head ^ order[i - 1].head;
        if (differ != 0) {  // they part within the first 8 bytes (or one ends there)
          common = std::min(static_cast<size_t>(__builtin_clzll(differ) / 8), most);
        } else {
          common = std::min(kHeadBytes, most);
          while (common < most && key.data[common] == previous->data[common]) ++common;
        }
      }
      shared[i] = static_cast<uint32_t>(common);
      if (key.size > common) {
        if (key.size >= per_level.size()) per_level.resize(key.size + 1, 0);
        for (size_t level = common + 1; level <= key.size; ++level) ++per_level[level];
        n_nodes += key.size - common;
        if (n_nodes > kMaxNodes) throw std::length_error("too many trie nodes");
      }
      previous = &key;
    }

    // Second pass: the nodes numbered level by level; within a level in key order, which is
    // the order of (parent, byte), so a node's children are consecutive and sorted.
    std::vector<size_t> next(per_level.size());  // the next free number of each level
    for (size_t level = 0, at = 0; level < per_level.size(); ++level) {
      next[level] = at;
      at += per_level[level];
    }
    std::vector<int32_t> path(per_level.size(), 0);  // the nodes of the current key's prefixes
    label_.resize(n_nodes, 0);
    first_child_.resize(n_nodes + 1, 0);  // first the number of children of each node
    for (size_t i = 0; i < n; ++i) {
      const TrieKey& key = keys[order[i].index];
      for (size_t level = shared[i] + 1; level <= key.size; ++level) {
        int32_t node = static_cast<int32_t>(next[level]++);
        label_[node] = key.data[level - 1];
        ++first_child_[path[level - 1]];
        path[level] = node;
      }
      node_of[order[i].index] = path[key.size];
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
    for (int32_t child = first_child_[node], end = first_child_[node + 1]; child < end; ++child) {
      if (label[child] >= byte) return label[child] == byte ? child : kNone;
    }
    return kNone;
  }

  // The number of nodes (the root included); node numbers are 0 .. size() - 1.
  size_t size() const { return label_.empty() ? 1 : label_.size(); }

 private:
  struct Sorted {
    uint64_t head;
    uint32_t index;
  };

  int32_t root_[256];
  std::vector<int32_t> first_child_;  // node -> its first child (n_nodes + 1 entries)
  std::vector<uint8_t> label_;        // node -> the byte on the edge into it

  static constexpr size_t kHeadBytes = 8;
  static constexpr size_t kRadix = 256;

  // The first kHeadBytes bytes of `key` as a big-endian number, zeros past its end: numbers
  // keep the keys' order (a key that ends compares as if followed by zeros, and equal numbers
  // fall back to the bytes).
  static uint64_t head(const TrieKey& key) {
    uint64_t value = 0;
    size_t size = std::min(key.size, kHeadBytes);
    for (size_t i = 0; i < size; ++i) value |= static_cast<uint64_t>(key.data[i]) << (8 * (kHeadBytes - 1 - i));
    return value;
  }

  // The keys' indices in the keys' byte order. A radix sort of the heads (least significant
  // byte first, a pass per byte where the keys differ), then a comparison sort of each run
  // of equal heads (keys that share their first 8 bytes, rare): a comparison sort of them
  // all costs ~4x more (36k keys: 1.5 ms).
  static std::vector<Sorted> sorted(const TrieKey* keys, size_t n) {
    std::vector<Sorted> order(n), spare(n);
    std::vector<size_t> counts(kHeadBytes * kRadix, 0);
    for (size_t k = 0; k < n; ++k) {
      uint64_t value = head(keys[k]);
      order[k] = Sorted{value, static_cast<uint32_t>(k)};
      for (size_t b = 0; b < kHeadBytes; ++b) ++counts[b * kRadix + ((value >> (8 * b)) & 0xFF)];
    }
    for (size_t b = 0; b < kHeadBytes; ++b) {
      size_t* count = counts.data() + b * kRadix;
      if (std::find(count, count + kRadix, n) != count + kRadix) continue;  // one value: no change
      for (size_t digit = 0, at = 0; digit < kRadix; ++digit) {
        size_t here = count[digit];
        count[digit] = at;
        at += here;
      }
      for (const Sorted& entry : order) spare[count[(entry.head >> (8 * b)) & 0xFF]++] = entry;
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
