// The interned-name table (interned_name.h): a process-wide set behind a mutex, and in front of it
// a small direct-mapped cache per thread, so that the names a program uses again and again are
// found without taking the lock.
#include "newir/interned_name.h"

#include <array>
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

}  // namespace

const std::string& InternName(std::string_view name) {
  struct Cache {
    std::array<const std::string*, 512> slots{};
  };
  thread_local Cache cache;
  const size_t hash = std::hash<std::string_view>{}(name);
  const std::string*& slot = cache.slots[hash % cache.slots.size()];
  if (slot == nullptr || *slot != name) slot = &InternLocked(name);
  return *slot;
}

size_t InternedNameCount() {
  Table& table = GlobalTable();
  std::lock_guard<std::mutex> lock(table.mutex);
  return table.names.size();
}

}  // namespace irm::newir
