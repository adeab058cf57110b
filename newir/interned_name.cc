// The interned-name table (interned_name.h): a process-wide set behind a mutex, and in front of it
// a small direct-mapped cache per thread, so that the names a program uses again and again are
// found without taking the lock.
#include "newir/interned_name.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <mutex>
#include <unordered_set>

namespace irm::newir {
namespace {

// Lets the set be searched with a string_view, without making a string first.
struct NameHash {
  using is_transparent = void;
  size_t operator()(std::string_view name) const { return std::hash<std::string_view>{}(name); }
};

struct Table {
  std::mutex mutex;
  // Node-based: an element never moves, so references to it stay valid as the set grows.
  std::unordered_set<std::string, NameHash, std::equal_to<>> names;
};

Table& GlobalTable() {
  static Table* table = new Table;  // immortal: names outlive every static destructor
  return *table;
}

const std::string& InternLocked(std::string_view name) {
  Table& table = GlobalTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.names.find(name);
  if (it == table.names.end()) it = table.names.emplace(name).first;
  return *it;
}

// Where the per-thread cache keeps `name`: its length and its first and last (up to) eight
// bytes, mixed. A name is interned several times per op built, and a full hash of it was most of
// the cost; this is enough to spread a vocabulary of a few hundred names, and a collision only
// costs a trip to the table.
constexpr int kCacheBits = 10;

size_t CacheSlot(std::string_view name) {
  const size_t n = name.size();
  uint64_t head = 0, tail = 0;
  if (n >= 8) {
    std::memcpy(&head, name.data(), 8);
    std::memcpy(&tail, name.data() + n - 8, 8);
  } else {
    for (size_t i = 0; i < n; ++i) head |= uint64_t{static_cast<unsigned char>(name[i])} << (8 * i);
  }
  const uint64_t h = head * 0x9E3779B97F4A7C15ull ^ tail * 0xC2B2AE3D27D4EB4Full ^ n;
  return static_cast<size_t>((h * 0xD6E8FEB86659FD93ull) >> (64 - kCacheBits));  // top bits mix all
}

}  // namespace

const std::string& InternName(std::string_view name) {
  struct Cache {
    std::array<const std::string*, size_t{1} << kCacheBits> slots{};
  };
  thread_local Cache cache;
  const std::string*& slot = cache.slots[CacheSlot(name)];
  // A view of the interned copy itself (keys copied from another map) needs no comparison.
  if (slot != nullptr &&
      (slot->data() == name.data() ? slot->size() == name.size() : *slot == name)) {
    return *slot;
  }
  slot = &InternLocked(name);
  return *slot;
}

size_t InternedNameCount() {
  Table& table = GlobalTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  return table.names.size();
}

}  // namespace irm::newir
