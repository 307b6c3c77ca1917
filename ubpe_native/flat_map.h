// A small open-addressing hash map from 64-bit keys to 64-bit values (linear probing).
//
// The fit kernel counts pairs and (pair, document) occurrences millions of times per fit;
// std::unordered_map allocates a node per entry and chases pointers, this keeps the entries
// in one flat array, each key beside its value (a probe that hits touches one cache line, not
// two). Entries are never erased: callers store 0 for "absent".
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace ubpe {

class FlatMap {
 public:
  static constexpr uint64_t kEmpty = ~0ULL;  // no key may be all ones

  explicit FlatMap(size_t expected = 16) { allocate(capacity_for(expected)); }

  // Pointer to the value of `key`, inserting 0 if absent. Valid until the next insertion.
  // Only inserting a new key may grow the table; if growing throws std::bad_alloc, the map
  // is unchanged (callers rely on this to keep their structures whole on MemoryError).
  int64_t* slot(uint64_t key) {
    size_t i = probe(key);
    if (entries_[i].key == key) return &entries_[i].value;
    if ((size_ + 1) * 2 > entries_.size()) {
      grow();
      i = probe(key);
    }
    entries_[i].key = key;
    entries_[i].value = 0;
    ++size_;
    return &entries_[i].value;
  }

  // Value of `key`, or `missing` if absent.
  int64_t get(uint64_t key, int64_t missing) const {
    size_t i = hash(key) & mask_;
    while (true) {
      if (entries_[i].key == key) return entries_[i].value;
      if (entries_[i].key == kEmpty) return missing;
      i = (i + 1) & mask_;
    }
  }

  size_t size() const { return size_; }

 private:
  struct Entry {
    uint64_t key;
    int64_t value;
  };
  std::vector<Entry> entries_;
  size_t mask_ = 0;
  size_t size_ = 0;

  static uint64_t hash(uint64_t x) {  // splitmix64 finaliser: spreads clustered ids
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
  }

  static size_t capacity_for(size_t expected) {
    size_t capacity = 16;
    while (capacity < expected * 2) capacity <<= 1;
    return capacity;
  }

  void allocate(size_t capacity) {
    entries_.assign(capacity, Entry{kEmpty, 0});
    mask_ = capacity - 1;
    size_ = 0;
  }

  // The slot holding `key`, or the empty slot where it would go.
  size_t probe(uint64_t key) const {
    size_t i = hash(key) & mask_;
    while (entries_[i].key != key && entries_[i].key != kEmpty) i = (i + 1) & mask_;
    return i;
  }

  void grow() {
    // allocate first: a std::bad_alloc leaves the map as it was
    std::vector<Entry> old_entries(entries_.size() * 2, Entry{kEmpty, 0});
    old_entries.swap(entries_);
    mask_ = entries_.size() - 1;
    for (const Entry& entry : old_entries) {
      if (entry.key == kEmpty) continue;
      entries_[probe(entry.key)] = entry;
    }
  }
};

}  // namespace ubpe
