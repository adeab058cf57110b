// The name bindings of the blocks being translated (Scope in op_context.h): an open-addressing
// table over stable entries.
#include <algorithm>
#include <bit>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "translator/op_context.h"

namespace irm::translator {

Scope::Slot& Scope::SlotOf(std::string_view name, size_t hash) const {
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash & mask;; i = (i + 1) & mask) {
    Slot& slot = slots_[i];
    if (slot.entry == 0) return slot;
    if (slot.hash == hash && entries_[slot.entry - 1].name == name) return slot;
  }
}

void Scope::Rehash(size_t slots) {
  std::vector<Slot> old = std::move(slots_);
  slots_.assign(slots, Slot{});
  for (const Slot& s : old) {
    if (s.entry != 0) SlotOf(entries_[s.entry - 1].name, s.hash) = s;
  }
}

const Binding* Scope::FindLocal(std::string_view name) const {
  if (slots_.empty()) return nullptr;
  const Slot& slot = SlotOf(name, std::hash<std::string_view>{}(name));
  return slot.entry == 0 ? nullptr : &entries_[slot.entry - 1].binding;
}

const Binding* Scope::Find(std::string_view name) const {
  const size_t hash = std::hash<std::string_view>{}(name);
  for (const Scope* s = this; s != nullptr; s = s->parent_) {
    if (s->slots_.empty()) continue;
    const Slot& slot = s->SlotOf(name, hash);
    if (slot.entry != 0) return &s->entries_[slot.entry - 1].binding;
  }
  return nullptr;
}

void Scope::Bind(std::string_view name, Binding binding) {
  // At most half full, so probes stay short.
  if (2 * (entries_.size() + 1) > slots_.size()) Rehash(std::max<size_t>(64, slots_.size() * 2));
  const size_t hash = std::hash<std::string_view>{}(name);
  Slot& slot = SlotOf(name, hash);
  if (slot.entry != 0) {
    entries_[slot.entry - 1].binding = binding;
    return;
  }
  char* copy = static_cast<char*>(names_.allocate(name.size(), 1));
  std::copy(name.begin(), name.end(), copy);
  entries_.push_back({std::string_view(copy, name.size()), binding});
  slot = {hash, static_cast<uint32_t>(entries_.size())};
}

void Scope::Reserve(size_t names) {
  const size_t slots = std::bit_ceil(std::max<size_t>(64, 2 * names));
  if (slots > slots_.size()) Rehash(slots);
}

std::vector<std::pair<std::string_view, const Binding*>> Scope::local_bindings() const {
  std::vector<std::pair<std::string_view, const Binding*>> bindings;
  bindings.reserve(entries_.size());
  for (const Entry& e : entries_) bindings.emplace_back(e.name, &e.binding);
  return bindings;
}

}  // namespace irm::translator
