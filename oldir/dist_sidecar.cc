// Reading, writing and checking dist-attr sidecars.
#include "oldir/dist_sidecar.h"

#include <fmt/format.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include <set>

#include "common/file_io.h"
#include "oldir/program_io.h"
#include "oldir/wire_check.h"

namespace irm::oldir {
namespace {

class FirstError : public google::protobuf::io::ErrorCollector {
 public:
  explicit FirstError(std::string file) : file_(std::move(file)) {}
  void AddError(int line, int column, const std::string& message) override {
    if (!status_) {
      status_ =
          Status(StatusCode::kParseError, Location::Text(file_, line + 1, column + 1), message);
    }
  }
  std::optional<Status> status_;

 private:
  std::string file_;
};

void CheckMesh(const dist_proto::ProcessMeshProto& mesh, const Location& where, Diagnostics* out) {
  int64_t product = 1;
  for (int64_t d : mesh.shape()) {
    if (d <= 0) {
      out->Add(Error(where, fmt::format("process mesh dim of size {} (must be positive)", d)));
      return;
    }
    product *= d;
    if (product > (int64_t{1} << 40)) {
      out->Add(Error(where, "process mesh is impossibly large"));
      return;
    }
  }
  if (product != mesh.process_ids_size()) {
    out->Add(
        Error(where, fmt::format("process mesh of shape [{}] needs {} process ids, has {}",
                                 fmt::join(mesh.shape(), ", "), product, mesh.process_ids_size())));
  }
  std::set<int64_t> seen;
  for (int64_t id : mesh.process_ids()) {
    if (!seen.insert(id).second) {
      out->Add(Error(where, fmt::format("process id {} appears twice in the mesh", id)));
    }
  }
  if (mesh.dim_names_size() != 0 && mesh.dim_names_size() != mesh.shape_size()) {
    out->Add(Error(where, fmt::format("process mesh has {} dims but {} dim names",
                                      mesh.shape_size(), mesh.dim_names_size())));
  }
}

void CheckTensorAttr(const dist_proto::TensorDistAttrProto& attr, int rank, const Location& where,
                     Diagnostics* out) {
  if (attr.has_process_mesh()) CheckMesh(attr.process_mesh(), where, out);
  const int mesh_rank = attr.process_mesh().shape_size();
  if (rank >= 0 && attr.dims_mapping_size() != rank) {
    out->Add(Error(where, fmt::format("dims_mapping has {} entries for a tensor of rank {}",
                                      attr.dims_mapping_size(), rank)));
  }
  std::set<int64_t> used;
  for (int64_t m : attr.dims_mapping()) {
    if (m < -1 || m >= mesh_rank) {
      out->Add(
          Error(where, fmt::format("dims_mapping entry {} is not -1 or a mesh dim (mesh rank {})",
                                   m, mesh_rank)));
    } else if (m >= 0 && !used.insert(m).second) {
      out->Add(Error(where, fmt::format("mesh dim {} shards two tensor dims", m)));
    }
  }
}

}  // namespace

StatusOr<dist_proto::DistAttrSidecar> ParseDistSidecar(std::string_view bytes,
                                                       const std::string& file) {
  dist_proto::DistAttrSidecar sidecar;
  if (DetectProgramFormat(bytes) == ProgramFormat::kText) {
    google::protobuf::TextFormat::Parser parser;
    FirstError errors(file);
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(std::string(bytes), &sidecar)) {
      if (errors.status_) return *errors.status_;
      return Status(StatusCode::kParseError, Location::File(file), "not a valid text dist sidecar");
    }
    return sidecar;
  }
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !sidecar.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    auto problem = FindWireProblem(bytes, dist_proto::DistAttrSidecar::descriptor());
    Location loc = Location::File(file);
    if (problem) loc.detail = fmt::format("byte {}", problem->offset);
    return Status(StatusCode::kParseError, loc,
                  problem ? problem->message : "not a valid binary dist sidecar");
  }
  return sidecar;
}

StatusOr<dist_proto::DistAttrSidecar> LoadDistSidecar(const std::string& path) {
  IRM_ASSIGN_OR_RETURN(std::string bytes, ReadFile(path));
  return ParseDistSidecar(bytes, path == "-" ? "<stdin>" : path);
}

Status SaveDistSidecar(const dist_proto::DistAttrSidecar& sidecar, const std::string& path,
                       bool text) {
  std::string bytes;
  if (text) {
    if (!google::protobuf::TextFormat::PrintToString(sidecar, &bytes)) {
      return Status(StatusCode::kInternal, Location::File(path), "cannot print the sidecar");
    }
  } else if (!sidecar.SerializePartialToString(&bytes)) {
    return Status(StatusCode::kInternal, Location::File(path), "cannot serialize the sidecar");
  }
  return WriteFileAtomically(path, bytes);
}

Diagnostics CheckDistSidecar(const dist_proto::DistAttrSidecar& sidecar, const Program& program,
                             const std::string& file) {
  Diagnostics out;
  for (int i = 0; i < sidecar.vars_size(); ++i) {
    const auto& entry = sidecar.vars(i);
    Location where = Location::File(file).With(fmt::format("sidecar vars[{}]", i));
    if (entry.block_idx() < 0 || entry.block_idx() >= program.num_blocks()) {
      out.Add(Error(where, fmt::format("block {} does not exist", entry.block_idx())));
      continue;
    }
    const Block block = program.block(entry.block_idx());
    where.InBlock(entry.block_idx()).AtVar(entry.var_name());
    std::optional<Var> var = block.FindVar(entry.var_name());
    if (!var) {
      out.Add(Error(where, "var is not declared in this block"));
      continue;
    }
    const int rank = var->tensor_desc() ? var->tensor_desc()->dims_size() : -1;
    CheckTensorAttr(entry.dist_attr(), rank, where, &out);
  }
  for (int i = 0; i < sidecar.ops_size(); ++i) {
    const auto& entry = sidecar.ops(i);
    Location where = Location::File(file).With(fmt::format("sidecar ops[{}]", i));
    if (entry.block_idx() < 0 || entry.block_idx() >= program.num_blocks()) {
      out.Add(Error(where, fmt::format("block {} does not exist", entry.block_idx())));
      continue;
    }
    const Block block = program.block(entry.block_idx());
    if (entry.op_idx() < 0 || entry.op_idx() >= block.num_ops()) {
      out.Add(Error(
          where.InBlock(entry.block_idx()),
          fmt::format("op {} does not exist (block has {} ops)", entry.op_idx(), block.num_ops())));
      continue;
    }
    where = OpLocation(file, block, entry.op_idx()).With(fmt::format("sidecar ops[{}]", i));
    const std::string& type = block.op(entry.op_idx()).type();
    if (entry.has_op_type() && entry.op_type() != type) {
      out.Add(Error(where, fmt::format("sidecar expects op type '{}'", entry.op_type())));
    }
    const auto& attr = entry.dist_attr();
    if (attr.has_process_mesh()) CheckMesh(attr.process_mesh(), where, &out);
    for (const auto* list : {&attr.input_dist_attrs(), &attr.output_dist_attrs()}) {
      for (const auto& tensor : *list) {
        Location at = where;
        at.AtVar(tensor.name());
        std::optional<Var> var = block.FindVarRecursive(tensor.name());
        const int rank = var && var->tensor_desc() ? var->tensor_desc()->dims_size() : -1;
        CheckTensorAttr(tensor.tensor_dist_attr(), rank, at, &out);
      }
    }
  }
  return out;
}

}  // namespace irm::oldir
