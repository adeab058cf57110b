// An op's (or block argument's) attributes: a flat array of (name, value) pairs sorted by name,
// with interned names (interned_name.h). Paddle prints attributes in name order, so the order is
// part of the format. Ops carry a handful of attributes each, and a program has ~140k ops: a
// sorted array costs one pooled allocation per op where a std::map cost a node and a key string
// per attribute, and freeing it is one pass. The interface is the part of std::map's the IR uses.
#pragma once

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "newir/attributes.h"
#include "newir/interned_name.h"
#include "newir/ir_pool.h"

namespace irm::newir {

class AttributeMap {
 public:
  // The name views the process-wide interned copy, so it outlives the map.
  using value_type = std::pair<std::string_view, Attribute>;
  using Storage = std::vector<value_type, detail::PoolAllocator<value_type>>;
  using iterator = Storage::iterator;
  using const_iterator = Storage::const_iterator;

  AttributeMap() = default;
  // Like std::map's: of repeated names the first wins.
  AttributeMap(std::initializer_list<value_type> items) {
    entries_.reserve(items.size());
    for (const value_type& item : items) emplace(item.first, item.second);
  }

  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }
  iterator begin() { return entries_.begin(); }
  iterator end() { return entries_.end(); }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void reserve(size_t n) { entries_.reserve(n); }
  void clear() { entries_.clear(); }

  const_iterator find(std::string_view name) const { return begin() + IndexOf(name); }
  iterator find(std::string_view name) { return begin() + IndexOf(name); }
  bool contains(std::string_view name) const { return find(name) != end(); }
  // std::map's contract: std::out_of_range when absent (tests use it; the IR's code uses find).
  const Attribute& at(std::string_view name) const {
    auto it = find(name);
    if (it == end()) throw std::out_of_range("AttributeMap::at");
    return it->second;
  }

  // Inserts when `name` is absent; answers where the name is and whether it was inserted.
  std::pair<iterator, bool> emplace(std::string_view name, Attribute value) {
    auto it = begin() + LowerBound(name);
    if (it != entries_.end() && it->first == name) return {it, false};
    it = entries_.emplace(it, InternName(name), std::move(value));
    return {it, true};
  }
  std::pair<iterator, bool> try_emplace(std::string_view name, Attribute value) {
    return emplace(name, std::move(value));
  }
  std::pair<iterator, bool> insert_or_assign(std::string_view name, Attribute value) {
    auto [it, inserted] = emplace(name, Attribute());
    it->second = std::move(value);
    return {it, inserted};
  }
  Attribute& operator[](std::string_view name) { return emplace(name, Attribute()).first->second; }
  // How many were removed (0 or 1).
  size_t erase(std::string_view name) {
    auto it = find(name);
    if (it == entries_.end()) return 0;
    entries_.erase(it);
    return 1;
  }

  bool operator==(const AttributeMap& other) const { return entries_ == other.entries_; }

 private:
  // Byte order, as std::string's; names mostly differ in their first byte, which is compared
  // inline before a call to memcmp.
  static bool Less(const value_type& entry, std::string_view name) {
    const std::string_view key = entry.first;
    if (!key.empty() && !name.empty() && key[0] != name[0]) {
      return static_cast<unsigned char>(key[0]) < static_cast<unsigned char>(name[0]);
    }
    return key < name;
  }
  // Where `name` is or would go.
  size_t LowerBound(std::string_view name) const {
    return std::lower_bound(entries_.begin(), entries_.end(), name, Less) - entries_.begin();
  }
  // Where `name` is, or size() when absent.
  size_t IndexOf(std::string_view name) const {
    const size_t i = LowerBound(name);
    return i < entries_.size() && entries_[i].first == name ? i : entries_.size();
  }

  Storage entries_;
};

}  // namespace irm::newir
