// Shard annotations, parsed and applied (shard_annotation.h).
#include "newir/auto_parallel/shard_annotation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <nlohmann/json.hpp>
#include <set>

#include "common/json_access.h"
#include "common/json_depth.h"
#include "common/json_parse.h"
#include "newir/attributes.h"
#include "newir/auto_parallel/shard_layout.h"
#include "newir/builder.h"

namespace irm::newir {
namespace {

using nlohmann::json;

// The checks of an annotation file on the shared JSON reader (common/json_access.h): every error
// is located by the file and the value's JSON pointer.
class Reader {
 public:
  explicit Reader(std::string file) : access_(std::move(file)) {}

  Status Error(const std::string& pointer, const std::string& message) const {
    return access_.Err(JsonPath::Rendered(pointer), message);
  }
  std::string Source(const std::string& pointer) const {
    return fmt::format("{}: {}", access_.file(), pointer);
  }
  StatusOr<std::vector<int64_t>> Ints(const json& value, const std::string& pointer) const {
    return access_.Ints(value, JsonPath::Rendered(pointer));
  }
  Status CheckKeys(const json& object, std::initializer_list<std::string_view> known,
                   const std::string& pointer) const {
    return access_.CheckKeys(object, JsonPath::Rendered(pointer), known);
  }

 private:
  JsonAccess access_;
};

// "Shard(1)", "Shard(dim=1)" -> 1; "Replicate()" -> -1.
StatusOr<int64_t> PlacementShardDim(const json& value, const std::string& pointer,
                                    const Reader& reader) {
  if (!value.is_string()) return reader.Error(pointer, "expected \"Shard(d)\" or \"Replicate()\"");
  const std::string text = value.get<std::string>();
  if (text == "Replicate()") return int64_t{-1};
  std::string_view rest = text;
  if (!rest.starts_with("Shard(") || !rest.ends_with(")")) {
    return reader.Error(pointer, fmt::format("'{}' is not \"Shard(d)\" or \"Replicate()\" "
                                             "(Partial cannot annotate an input)",
                                             text));
  }
  rest = rest.substr(6, rest.size() - 7);
  if (rest.starts_with("dim=")) rest = rest.substr(4);
  int64_t dim = 0;
  if (rest.empty()) return reader.Error(pointer, fmt::format("'{}' names no dim", text));
  for (char c : rest) {
    if (c < '0' || c > '9') return reader.Error(pointer, fmt::format("'{}' has a bad dim", text));
    dim = dim * 10 + (c - '0');
    if (dim > 1'000'000) return reader.Error(pointer, fmt::format("'{}' has a bad dim", text));
  }
  return dim;
}

Status CheckMesh(const ProcessMesh& mesh, const std::string& where) {
  const auto fail = [&](const std::string& message) {
    return Status(StatusCode::kInvalid, Location::File(where), message);
  };
  int64_t count = 1;
  for (int64_t d : mesh.shape) {
    if (d <= 0)
      return fail(fmt::format("mesh shape {} has a dim that is not positive", mesh.shape));
    count *= d;
  }
  if (mesh.shape.empty()) return fail("the mesh has no dims");
  if (count != static_cast<int64_t>(mesh.process_ids.size())) {
    return fail(fmt::format("mesh shape {} holds {} processes, process_ids lists {}", mesh.shape,
                            count, mesh.process_ids.size()));
  }
  std::set<int64_t> seen;
  for (int64_t id : mesh.process_ids) {
    if (id < 0) return fail(fmt::format("process id {} is negative", id));
    if (!seen.insert(id).second) return fail(fmt::format("process id {} appears twice", id));
  }
  if (!mesh.dim_names.empty() && mesh.dim_names.size() != mesh.shape.size()) {
    return fail(fmt::format("{} dim names for a mesh of {} dims", mesh.dim_names.size(),
                            mesh.shape.size()));
  }
  return Status::Ok();
}

// The name an annotation knows an op's result by, or empty when the op cannot be annotated.
std::string AnnotatedName(const Operation& op) {
  const char* key = op.name() == "builtin.parameter" ? "parameter_name"
                    : op.name() == "pd_op.data"      ? "name"
                                                     : nullptr;
  if (key == nullptr || op.num_results() != 1) return "";
  const std::string_view* name = op.attribute(key).AsString();
  return name == nullptr ? "" : std::string(*name);
}

}  // namespace

StatusOr<ShardAnnotations> ParseShardAnnotations(std::string_view text, const std::string& file) {
  const Reader reader(file);
  IRM_ASSIGN_OR_RETURN(const json root, ParseStrictJson(text, file, kMaxSmallJsonDepth));
  if (!root.is_object()) return reader.Error("", "expected an object");
  IRM_RETURN_IF_ERROR(reader.CheckKeys(root, {"mesh", "values"}, ""));
  if (!root.contains("mesh") || !root["mesh"].is_object()) {
    return reader.Error("/mesh", "expected an object {\"shape\", \"process_ids\", \"dim_names\"}");
  }
  const json& mesh = root["mesh"];
  IRM_RETURN_IF_ERROR(reader.CheckKeys(mesh, {"shape", "process_ids", "dim_names"}, "/mesh"));
  ShardAnnotations out;
  if (!mesh.contains("shape")) return reader.Error("/mesh", "missing 'shape'");
  if (!mesh.contains("process_ids")) return reader.Error("/mesh", "missing 'process_ids'");
  IRM_ASSIGN_OR_RETURN(out.mesh.shape, reader.Ints(mesh["shape"], "/mesh/shape"));
  IRM_ASSIGN_OR_RETURN(out.mesh.process_ids, reader.Ints(mesh["process_ids"], "/mesh/process_ids"));
  if (mesh.contains("dim_names")) {
    const json& names = mesh["dim_names"];
    if (!names.is_array()) return reader.Error("/mesh/dim_names", "expected an array of strings");
    for (size_t i = 0; i < names.size(); ++i) {
      if (!names[i].is_string()) {
        return reader.Error(fmt::format("/mesh/dim_names/{}", i), "expected a string");
      }
      out.mesh.dim_names.push_back(names[i].get<std::string>());
    }
  }
  IRM_RETURN_IF_ERROR(CheckMesh(out.mesh, reader.Source("/mesh")));
  if (!root.contains("values") || !root["values"].is_object()) {
    return reader.Error("/values", "expected an object of layouts by var name");
  }
  for (const auto& [name, layout] : root["values"].items()) {
    std::string pointer = "/values";
    AppendJsonPointerToken(&pointer, name);
    if (!layout.is_object()) {
      return reader.Error(pointer, "expected {\"placements\": [...]} or {\"dims_mapping\": [...]}");
    }
    IRM_RETURN_IF_ERROR(reader.CheckKeys(layout, {"placements", "dims_mapping"}, pointer));
    ValueAnnotation annotation;
    annotation.source = reader.Source(pointer);
    const bool placements = layout.contains("placements");
    if (placements == layout.contains("dims_mapping")) {
      return reader.Error(pointer, "give exactly one of 'placements' and 'dims_mapping'");
    }
    if (placements) {
      const json& list = layout["placements"];
      if (!list.is_array()) return reader.Error(pointer + "/placements", "expected an array");
      if (list.size() != out.mesh.shape.size()) {
        return reader.Error(
            pointer + "/placements",
            fmt::format("{} placements for a mesh of {} dims", list.size(), out.mesh.shape.size()));
      }
      annotation.by_placements = true;
      for (size_t i = 0; i < list.size(); ++i) {
        IRM_ASSIGN_OR_RETURN(
            int64_t dim,
            PlacementShardDim(list[i], fmt::format("{}/placements/{}", pointer, i), reader));
        annotation.shard_dim_of_mesh_dim.push_back(dim);
      }
    } else {
      IRM_ASSIGN_OR_RETURN(annotation.dims_mapping,
                           reader.Ints(layout["dims_mapping"], pointer + "/dims_mapping"));
    }
    out.values[name] = std::move(annotation);
  }
  return out;
}

ShardAnnotations DataParallelAnnotations(int64_t degree, const std::vector<std::string>& feeds) {
  ShardAnnotations out;
  out.mesh.shape = {degree};
  for (int64_t i = 0; i < degree; ++i) out.mesh.process_ids.push_back(i);
  out.mesh.dim_names = {"dp"};
  for (const std::string& feed : feeds) {
    ValueAnnotation annotation;
    annotation.by_placements = true;
    annotation.shard_dim_of_mesh_dim = {0};
    annotation.source = fmt::format("data parallel: feed '{}'", feed);
    out.values[feed] = std::move(annotation);
  }
  return out;
}

StatusOr<std::vector<int64_t>> DimsMappingOf(const ValueAnnotation& annotation, size_t rank,
                                             const ProcessMesh& mesh) {
  const int64_t mesh_dims = static_cast<int64_t>(mesh.shape.size());
  const auto fail = [&](const std::string& message) {
    return Status(StatusCode::kInvalid, Location::File(annotation.source), message);
  };
  std::vector<int64_t> mapping(rank, -1);
  if (annotation.by_placements) {
    for (size_t m = 0; m < annotation.shard_dim_of_mesh_dim.size(); ++m) {
      const int64_t dim = annotation.shard_dim_of_mesh_dim[m];
      if (dim < 0) continue;
      if (dim >= static_cast<int64_t>(rank)) {
        return fail(fmt::format("Shard({}) on a tensor of {} dims", dim, rank));
      }
      // Two mesh dims on one tensor dim is a layout the SPMD rules here refuse.
      if (mapping[dim] >= 0) {
        return fail(
            fmt::format("tensor dim {} is sharded on mesh dims {} and {}", dim, mapping[dim], m));
      }
      mapping[dim] = static_cast<int64_t>(m);
    }
    return mapping;
  }
  if (annotation.dims_mapping.size() != rank) {
    return fail(fmt::format("dims_mapping has {} entries for a tensor of {} dims",
                            annotation.dims_mapping.size(), rank));
  }
  std::set<int64_t> used;
  for (int64_t m : annotation.dims_mapping) {
    if (m < -1 || m >= mesh_dims) {
      return fail(fmt::format("mesh dim {} is not -1 or a dim of a mesh of {} dims", m, mesh_dims));
    }
    if (m >= 0 && !used.insert(m).second) {
      return fail(fmt::format("mesh dim {} shards two tensor dims", m));
    }
  }
  return annotation.dims_mapping;
}

Status AnnotateShards(Program& program, const ShardAnnotations& annotations) {
  IRM_RETURN_IF_ERROR(CheckMesh(annotations.mesh, "annotations: mesh"));
  std::set<std::string> found;
  std::vector<Operation*> ops;
  for (Operation* op : program.block().ops()) ops.push_back(op);
  for (Operation* op : ops) {
    const std::string name = AnnotatedName(*op);
    auto it = name.empty() ? annotations.values.end() : annotations.values.find(name);
    if (it == annotations.values.end()) continue;
    found.insert(name);
    Value* dense = op->result(0);
    const auto located = [&](const Status& status) {
      Location at = LocationOf(*op);
      at.var = name;
      return Status(StatusCode::kInvalid, at.With(it->second.source), status.message());
    };
    if (dense->type().dist_attr() != nullptr || dense->type().kind() == TypeKind::kVector) {
      return located(
          Status(StatusCode::kInvalid, Location{}, "already distributed or not a tensor"));
    }
    StatusOr<std::vector<int64_t>> mapping =
        DimsMappingOf(it->second, dense->type().dims().size(), annotations.mesh);
    if (!mapping.ok()) return located(mapping.status());
    TensorDistAttr layout;
    layout.mesh = annotations.mesh;
    layout.dims_mapping = *mapping;
    // Every process must hold a piece: refuse a layout whose last piece would be empty.
    std::vector<int64_t> local;
    for (int64_t process : annotations.mesh.process_ids) {
      StatusOr<std::vector<int64_t>> dims = LocalDimsOn(dense->type().dims(), layout, process);
      if (!dims.ok()) return located(dims.status());
      if (local.empty()) local = *dims;
    }
    StatusOr<Type> type = Type::DistDenseTensor(dense->type(), layout, local);
    if (!type.ok()) return located(type.status());
    OperationDistAttr dist;
    dist.mesh = annotations.mesh;
    dist.results = {Attribute::TensorDist(layout)};
    Builder b(program.block());
    b.SetInsertionPointAfter(*op);
    Operation* shard = b.Create("dist_op.shard_tensor", {dense}, {*type},
                                {{"op_dist_attr", Attribute::OperationDist(dist)}});
    dense->ReplaceAllUsesWith(shard->result(0));
    shard->SetOperand(0, dense);
  }
  for (const auto& [name, annotation] : annotations.values) {
    if (found.count(name) == 0) {
      return Status(StatusCode::kNotFound, Location::File(annotation.source),
                    fmt::format("the program has no parameter or feed '{}'", name));
    }
  }
  return Status::Ok();
}

}  // namespace irm::newir
