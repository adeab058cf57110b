// Auto-parallel dist attrs of a legacy program, kept in a sidecar file next to it. Paddle's old IR
// holds meshes and dims_mappings only in memory (VarDesc/OpDesc dist_attr), never in a .pdmodel;
// ir-migrate stores them as a DistAttrSidecar message (oldir/proto/dist_attr.proto), binary or
// protobuf text, keyed by block + var name and block + op index.
#pragma once

#include <string>
#include <string_view>

#include "common/diagnostic.h"
#include "common/status.h"
#include "oldir/program.h"
#include "oldir/proto/dist_attr.pb.h"

namespace irm::oldir {

namespace dist_proto = ::phi::distributed::auto_parallel;

// Binary or text, detected from content like programs.
StatusOr<dist_proto::DistAttrSidecar> ParseDistSidecar(std::string_view bytes,
                                                       const std::string& file);
StatusOr<dist_proto::DistAttrSidecar> LoadDistSidecar(const std::string& path);
Status SaveDistSidecar(const dist_proto::DistAttrSidecar& sidecar, const std::string& path,
                       bool text);

// Checks a sidecar against its program: every entry names an existing block and var / op (with the
// recorded op type), meshes are well formed (shape product == number of process ids, no duplicate
// ids, dim_names empty or one per dim), dims_mapping has one entry per tensor dim, each -1 or a
// mesh dim, and no mesh dim shards two tensor dims.
Diagnostics CheckDistSidecar(const dist_proto::DistAttrSidecar& sidecar, const Program& program,
                             const std::string& file);

}  // namespace irm::oldir
