// The validator's per-block name table: for each name a block uses, where it is declared, whether
// the declaration is fed (persistable or need_check_feed), and the first op that writes it. A flat
// open-addressing table with names up to 16 bytes stored inline, so that the one lookup per op
// argument touches one cache line: the validator's hot loop is bound by memory, not arithmetic.
// Header-only so that lookups inline into that loop.
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

namespace irm::oldir::validation {

// What a block knows about a name: where it is declared in the block, the flags of that
// declaration the dataflow check needs, and the first op of the block writing the name. 32 bytes,
// one per half cache line: names up to 16 bytes (most of them) are stored inline, so that a lookup
// touches one cache line.
struct alignas(32) NameEntry {
  static constexpr uint32_t kFree = UINT32_MAX;  // `size` of a free slot
  static constexpr size_t kInline = 16;

  union {
    char inline_name[kInline];  // size <= kInline: the bytes, zero-padded
    const char* data;           // size > kInline: the bytes of one occurrence of the name
  };
  uint32_t size = kFree;
  uint32_t hash : 31 = 0;
  uint32_t fed : 1 = 0;              // the declaration is persistable or need_check_feed
  int32_t var = -1;                  // position of the first declaration in the block
  int32_t first_writer = INT32_MAX;  // index of the first op writing the name

  NameEntry() : inline_name{} {}
  bool used() const { return size != kFree; }
};
static_assert(sizeof(NameEntry) == 32);

// A name prepared for lookups: its hash and, when short, its zero-padded bytes.
struct Key {
  explicit Key(std::string_view name);
  std::string_view name;
  uint32_t hash;
  uint64_t words[2] = {0, 0};
};

inline uint32_t HashName(std::string_view s) {
  // 8 bytes at a time with multiply-xorshift mixing; collisions are resolved by comparing names,
  // so this only needs to spread well.
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t chunk;
    std::memcpy(&chunk, s.data() + i, 8);
    h = (h ^ chunk) * 0xff51afd7ed558ccdULL;
    h ^= h >> 32;
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = (h ^ tail) * 0xc4ceb9fe1a85ec53ULL;
  h ^= h >> 33;
  return static_cast<uint32_t>(h) & 0x7fffffffU;  // 31 bits: NameEntry::hash
}

inline Key::Key(std::string_view n) : name(n), hash(HashName(n)) {
  if (n.size() <= NameEntry::kInline) std::memcpy(words, n.data(), n.size());
}

inline bool Matches(const NameEntry& entry, const Key& key) {
  if (entry.hash != key.hash || entry.size != key.name.size()) return false;
  if (key.name.size() <= NameEntry::kInline) {
    uint64_t stored[2];
    std::memcpy(stored, entry.inline_name, sizeof(stored));
    return stored[0] == key.words[0] && stored[1] == key.words[1];
  }
  return std::memcmp(entry.data, key.name.data(), key.name.size()) == 0;
}

// A flat open-addressing (linear probing) table of NameEntry: one probe per lookup in the common
// case and no allocation per entry.
class NameTable {
 public:
  void Reserve(size_t names) {
    size_t capacity = 16;
    while (capacity * 2 < names * 3) capacity *= 2;  // load factor <= 2/3
    slots_.assign(capacity, NameEntry{});
    mask_ = capacity - 1;
    size_ = 0;
  }

  // Starts loading the slot `name` would take, for a lookup a few steps later.
  void Prefetch(std::string_view name) const {
    __builtin_prefetch(&slots_[HashName(name) & mask_]);
  }

  // The entry of `name`, added when missing. Valid until the next Upsert. A long name's entry
  // keeps the bytes of `name`, the occurrence most likely to be in cache for the next lookup.
  NameEntry& Upsert(std::string_view name) {
    if ((size_ + 1) * 3 > slots_.size() * 2) Grow();
    const Key key(name);
    NameEntry& entry = slots_[Probe(key)];
    if (!entry.used()) {
      entry.size = static_cast<uint32_t>(name.size());
      entry.hash = key.hash;
      if (name.size() <= NameEntry::kInline) std::memcpy(entry.inline_name, key.words, 16);
      ++size_;
    }
    if (name.size() > NameEntry::kInline) entry.data = name.data();
    return entry;
  }

  const NameEntry* Find(std::string_view name) const {
    const NameEntry& entry = slots_[Probe(Key(name))];
    return entry.used() ? &entry : nullptr;
  }

 private:
  // The slot holding the key's name, or the free slot where it would go.
  size_t Probe(const Key& key) const {
    for (size_t i = key.hash & mask_;; i = (i + 1) & mask_) {
      const NameEntry& entry = slots_[i];
      if (!entry.used() || Matches(entry, key)) return i;
    }
  }

  void Grow() {
    std::vector<NameEntry> old = std::move(slots_);
    slots_.assign(old.size() * 2, NameEntry{});
    mask_ = slots_.size() - 1;
    for (const NameEntry& entry : old) {
      if (!entry.used()) continue;
      for (size_t i = entry.hash & mask_;; i = (i + 1) & mask_) {
        if (!slots_[i].used()) {
          slots_[i] = entry;
          break;
        }
      }
    }
  }

  std::vector<NameEntry> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace irm::oldir::validation
