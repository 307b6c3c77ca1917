// The merge kernels' word cache: word bytes -> the ids its merges gave, flat in memory.
//
// Words of a text repeat (Zipf): most look-ups hit, so a hit must cost little. A node-based
// std::unordered_map<std::string, std::vector<int>> costs three or four cache misses a hit
// (bucket, node, the vector's heap block); here a hit costs two: an open-addressing slot
// (a 32-bit hash tag and the record's place) and the record, which holds the word's length,
// its ids and its bytes back to back in one arena.
//
// One cache serves one call at a time (`_merge_core`'s ScratchPool): no lock. Growing throws
// std::bad_alloc and leaves the cache as it was (Cython turns it into MemoryError).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace ubpe {

class WordCache {
 public:
  // Append the cached ids of `word` to `out` and return true; false if it is not cached
  // (then `store` caches the ids of this word).
  bool find(const uint8_t* word, size_t length, std::vector<int32_t>& out) {
    uint64_t h = hash(word, length);
    if (const int32_t* record = record_of(word, length, h)) {
      out.insert(out.end(), record + 2, record + 2 + record[1]);
      return true;
    }
    key_.assign(word, word + length);
    key_hash_ = h;
    return false;
  }

  // `find` that changes nothing on a miss: for a table filled once (`PairMerges`' whole
  // words) that several threads read at once while none stores.
  bool lookup(const uint8_t* word, size_t length, std::vector<int32_t>& out) const {
    if (const int32_t* record = record_of(word, length, hash(word, length))) {
      out.insert(out.end(), record + 2, record + 2 + record[1]);
      return true;
    }
    return false;
  }

  // Cache `ids` for the word of the last `find` that missed; at `limit` words (or when the
  // arena would pass 2**31 ints) the cache starts over: a bound on memory that keeps the
  // common words of a text hot.
  void store(const std::vector<int32_t>& ids, size_t limit) {
    size_t words = (key_.size() + sizeof(int32_t) - 1) / sizeof(int32_t);
    size_t record_size = 2 + ids.size() + words;
    if (size_ >= limit || arena_.size() + record_size >= kMaxArena) clear();
    if ((size_ + 1) * 2 > slots_.size()) grow();
    size_t offset = arena_.size();
    arena_.resize(offset + record_size);  // may throw: nothing changed yet; the new ints are 0
    int32_t* record = arena_.data() + offset;
    record[0] = static_cast<int32_t>(key_.size());
    record[1] = static_cast<int32_t>(ids.size());
    if (!ids.empty()) std::memcpy(record + 2, ids.data(), ids.size() * sizeof(int32_t));
    if (!key_.empty()) std::memcpy(record + 2 + ids.size(), key_.data(), key_.size());
    place(key_hash_, offset);
    ++size_;
  }

  void clear() {
    slots_.clear();
    arena_.clear();
    mask_ = 0;
    size_ = 0;
  }

  size_t size() const { return size_; }

 private:
  static constexpr size_t kMinSlots = 1024;
  static constexpr size_t kMaxArena = size_t{1} << 31;
  std::vector<uint64_t> slots_;  // 0: empty; else hash >> 32 << 32 | record offset + 1
  std::vector<int32_t> arena_;   // records: length, n_ids, ids..., bytes (padded to ints)
  std::vector<uint8_t> key_;     // the word of the last missed `find`
  uint64_t key_hash_ = 0;
  size_t mask_ = 0;
  size_t size_ = 0;

  static uint64_t hash(const uint8_t* word, size_t length) {
    // 8 bytes at a time, each chunk mixed in by a multiply; a splitmix64 finaliser at the end
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ length;
    size_t i = 0;
    for (; i + 8 <= length; i += 8) {
      uint64_t chunk;
      std::memcpy(&chunk, word + i, 8);
      h = (h ^ chunk) * 0xBF58476D1CE4E5B9ULL;
      h ^= h >> 31;
    }
    if (i < length) {
      uint64_t chunk = 0;
      std::memcpy(&chunk, word + i, length - i);
      h = (h ^ chunk) * 0xBF58476D1CE4E5B9ULL;
    }
    h ^= h >> 30;
    h *= 0x94D049BB133111EBULL;
    h ^= h >> 31;
    return h;
  }

  // The record of `word` (hash `h`): its length, its ids' count, its ids, its bytes; or null.
  const int32_t* record_of(const uint8_t* word, size_t length, uint64_t h) const {
    if (slots_.empty()) return nullptr;
    size_t i = h & mask_;
    while (slots_[i] != 0) {
      if ((slots_[i] >> 32) == (h >> 32)) {
        const int32_t* record = arena_.data() + ((slots_[i] & 0xFFFFFFFFULL) - 1);
        if (static_cast<size_t>(record[0]) == length && std::memcmp(record + 2 + record[1], word, length) == 0)
          return record;
      }
      i = (i + 1) & mask_;
    }
    return nullptr;
  }

  void place(uint64_t h, size_t offset) {
    size_t i = h & mask_;
    while (slots_[i] != 0) i = (i + 1) & mask_;
    slots_[i] = (h >> 32 << 32) | static_cast<uint64_t>(offset + 1);
  }

  void grow() {
    std::vector<uint64_t> bigger(slots_.empty() ? kMinSlots : slots_.size() * 2, 0);  // may throw
    bigger.swap(slots_);
    mask_ = slots_.size() - 1;
    for (uint64_t slot : bigger) {
      if (slot == 0) continue;
      size_t offset = (slot & 0xFFFFFFFFULL) - 1;
      const int32_t* record = arena_.data() + offset;
      const uint8_t* bytes = reinterpret_cast<const uint8_t*>(record + 2 + record[1]);
      place(hash(bytes, static_cast<size_t>(record[0])), offset);
    }
  }
};

}  // namespace ubpe
