// Scope and the default Executor::RunJob (executor.h).
#include "reference_runtime/executor.h"

#include <algorithm>

namespace irm::rt {

StatusOr<std::vector<Fetch>> Executor::RunJob(Scope& /*persistent*/, Scope& /*job_scope*/,
                                              const FeedMap& /*feeds*/) {
  return Status(StatusCode::kUnimplemented, Location{},
                "this executor cannot run a program as a job of a plan");
}

Status CheckJobScope(const Scope& persistent, const Scope& job_scope) {
  if (job_scope.parent() == &persistent) return Status::Ok();
  return Status(StatusCode::kInvalidArgument, Location{},
                "a job's scope must be a child of the persistent scope");
}

Tensor* Scope::FindLocal(std::string_view name) {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

Tensor* Scope::Find(std::string_view name) {
  for (Scope* s = this; s != nullptr; s = s->parent_) {
    if (Tensor* t = s->FindLocal(name)) return t;
  }
  return nullptr;
}

const Tensor* Scope::Find(std::string_view name) const {
  return const_cast<Scope*>(this)->Find(name);
}

void Scope::Set(std::string_view name, Tensor tensor) {
  if (Tensor* t = Find(name)) {
    *t = std::move(tensor);
    return;
  }
  SetLocal(name, std::move(tensor));
}

void Scope::SetLocal(std::string_view name, Tensor tensor) {
  auto it = tensors_.find(name);
  if (it != tensors_.end()) {
    it->second = std::move(tensor);
  } else {
    tensors_.emplace(std::string(name), std::move(tensor));
  }
}

bool Scope::Erase(std::string_view name) {
  auto it = tensors_.find(name);
  if (it == tensors_.end()) return false;
  tensors_.erase(it);
  return true;
}

std::vector<std::string> Scope::LocalNames() const {
  std::vector<std::string> names;
  names.reserve(tensors_.size());
  for (const auto& [name, tensor] : tensors_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace irm::rt
