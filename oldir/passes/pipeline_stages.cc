// The stage partition of the legacy pipeline pass (pipeline_stages.h): layer units to chunks,
// every op to a chunk, and reshard's send_v2 / recv_v2 pairs where a var crosses stages.
#include "oldir/passes/pipeline_stages.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <optional>
#include <set>
#include <unordered_map>
#include <utility>

#include "oldir/builder.h"
#include "oldir/editor.h"
#include "oldir/op_role.h"

namespace irm::oldir::passes {

namespace {

// "linear_12.w_0" -> ("linear", 12); nullopt for a name without that shape.
std::optional<std::pair<std::string, int>> LayerOfParam(const std::string& name) {
  const size_t dot = name.find('.');
  if (dot == std::string::npos) return std::nullopt;
  const std::string layer = name.substr(0, dot);
  const size_t underscore = layer.rfind('_');
  if (underscore == std::string::npos || underscore + 1 == layer.size()) return std::nullopt;
  int index = 0;
  for (size_t i = underscore + 1; i < layer.size(); ++i) {
    if (layer[i] < '0' || layer[i] > '9' || index > 100000000) return std::nullopt;
    index = index * 10 + (layer[i] - '0');
  }
  return std::make_pair(layer.substr(0, underscore), index);
}

// Each value's position among the sorted distinct values.
std::map<int, int> Ranks(const std::set<int>& values) {
  std::map<int, int> ranks;
  for (int v : values) ranks.emplace(v, static_cast<int>(ranks.size()));
  return ranks;
}

enum class OpKind { kFeed, kFetch, kForward, kBackward, kOptimize };

OpKind KindOf(const Op& op) {
  if (op.type() == "feed") return OpKind::kFeed;
  if (op.type() == "fetch" || op.type() == "fetch_v2") return OpKind::kFetch;
  const int role = op.role();
  if (IsOptimize(role)) return OpKind::kOptimize;
  return IsBackward(role) ? OpKind::kBackward : OpKind::kForward;
}

// The forward var a gradient name belongs to: "x@GRAD@RENAME@block0@1" -> "x"; "" for a name
// that is no gradient.
std::string GradBase(const std::string& name) {
  const size_t at = name.find(kGradSuffix);
  return at == std::string::npos ? std::string() : name.substr(0, at);
}

std::vector<std::string> InputsOf(const proto::OpDesc& op) {
  std::vector<std::string> names;
  for (const proto::OpDesc::Var& slot : op.inputs()) {
    for (const std::string& name : slot.arguments()) {
      if (!name.empty() && std::find(names.begin(), names.end(), name) == names.end()) {
        names.push_back(name);
      }
    }
  }
  return names;
}

std::vector<std::string> OutputsOf(const proto::OpDesc& op) {
  std::vector<std::string> names;
  for (const proto::OpDesc::Var& slot : op.outputs()) {
    for (const std::string& name : slot.arguments()) {
      if (!name.empty()) names.push_back(name);
    }
  }
  return names;
}

std::string Device(int stage) { return fmt::format("gpu:{}", stage); }

// Where the current value of a var was computed.
struct Producer {
  int stage = 0;
  int chunk = 0;  // local
  OpKind kind = OpKind::kForward;
};

// Makes the reshard ops with the attributes every op of a Paddle program carries.
class P2pFactory {
 public:
  proto::OpDesc Send(const std::string& var, int ring, int role, int stage, int chunk) {
    Stamp(role, stage);
    proto::OpDesc op = *scratch_.root().AppendOp("send_v2", {{"X", {var}}}, {},
                                                 {{"ring_id", int32_t{ring}},
                                                  {"peer", int32_t{1}},
                                                  {"use_calc_stream", true},
                                                  {"dynamic_shape", false}});
    OpEditor(&op).SetAttr(kChunkIdAttr, int32_t{chunk});
    return op;
  }

  proto::OpDesc Recv(const std::string& var, int ring, int role, int stage, int chunk,
                     std::vector<int32_t> shape, proto::VarType::Type dtype) {
    Stamp(role, stage);
    proto::OpDesc op = *scratch_.root().AppendOp("recv_v2", {}, {{"Out", {var}}},
                                                 {{"ring_id", int32_t{ring}},
                                                  {"peer", int32_t{0}},
                                                  {"use_calc_stream", true},
                                                  {"dynamic_shape", false},
                                                  {"out_shape", std::move(shape)},
                                                  {"dtype", static_cast<int32_t>(dtype)}});
    OpEditor(&op).SetAttr(kChunkIdAttr, int32_t{chunk});
    return op;
  }

 private:
  void Stamp(int role, int stage) {
    scratch_.set_role(role);
    scratch_.set_namescope("/");
    scratch_.set_device(Device(stage));
  }

  ProgramBuilder scratch_;
};

}  // namespace

int ChunkOf(const proto::OpDesc& op) { return Op(&op).AttrOr<int32_t>(kChunkIdAttr, 0); }

std::vector<std::string> ArgumentsOf(const proto::OpDesc& op) {
  std::vector<std::string> names;
  for (const auto* slots : {&op.inputs(), &op.outputs()}) {
    for (const proto::OpDesc::Var& slot : *slots) {
      for (const std::string& name : slot.arguments()) {
        if (!name.empty()) names.push_back(name);
      }
    }
  }
  return names;
}

void KeepUsedVars(Program& program) {
  proto::BlockDesc& root = *program.mutable_desc()->mutable_blocks(0);
  std::set<std::string> used;
  for (const proto::OpDesc& op : root.ops()) {
    for (const std::string& name : ArgumentsOf(op)) used.insert(name);
  }
  google::protobuf::RepeatedPtrField<proto::VarDesc> kept;
  for (const proto::VarDesc& var : root.vars()) {
    if (used.count(var.name()) != 0) *kept.Add() = var;
  }
  root.mutable_vars()->Swap(&kept);
  program.Reindex();
}

StatusOr<LayerUnits> FindLayerUnits(const Program& main, const std::string& file) {
  const Block root = main.root();
  std::map<std::string, std::set<int>> layers;  // kind -> indices
  std::vector<std::pair<std::string, std::pair<std::string, int>>> params;
  for (int i = 0; i < root.num_vars(); ++i) {
    const Var var = root.var(i);
    if (!var.is_parameter()) continue;
    std::optional<std::pair<std::string, int>> layer = LayerOfParam(var.name());
    if (!layer ||
        (layer->first != "linear" && layer->first != "layer_norm" && layer->first != "embedding")) {
      return Status(StatusCode::kInvalidArgument, VarLocation(file, root, var.name()),
                    fmt::format("parameter '{}' belongs to no layer unit the pipeline pass knows "
                                "(linear_<i>, layer_norm_<i>, embedding_<i>)",
                                var.name()));
    }
    layers[layer->first].insert(layer->second);
    params.emplace_back(var.name(), *layer);
  }
  if (params.empty()) {
    return Status(StatusCode::kInvalidArgument, Location::File(file).InBlock(0),
                  "the pipeline pass found no parameter to split into stages");
  }
  LayerUnits units;
  const std::map<int, int> linear = Ranks(layers["linear"]);
  if (layers.count("embedding") == 0) {
    // mlp: one unit per linear layer (a layer_norm would need a transformer's layout).
    for (const auto& [name, layer] : params) {
      if (layer.first != "linear") {
        return Status(StatusCode::kInvalidArgument, VarLocation(file, root, name),
                      fmt::format("parameter '{}' belongs to no layer unit: a model without "
                                  "embeddings is split by its linear layers",
                                  name));
      }
      units.of_param[name] = linear.at(layer.second);
    }
    units.count = static_cast<int>(linear.size());
    return units;
  }
  // gpt: 2 layer_norms per block and one final; the linears split evenly over the blocks, the
  // last one (the head) with the final LayerNorm.
  const std::map<int, int> norms = Ranks(layers["layer_norm"]);
  const int num_norms = static_cast<int>(norms.size());
  const int num_linears = static_cast<int>(linear.size());
  const int blocks = (num_norms - 1) / 2;
  if (blocks < 1 || num_norms != 2 * blocks + 1 || num_linears < blocks + 1 ||
      (num_linears - 1) % blocks != 0) {
    return Status(StatusCode::kInvalidArgument, Location::File(file).InBlock(0),
                  fmt::format("a model with embeddings is split as a GPT: 2 layer_norms and the "
                              "same linears per block, one final layer_norm and a head; found {} "
                              "layer_norms and {} linears",
                              num_norms, num_linears));
  }
  const int per_block = (num_linears - 1) / blocks;
  for (const auto& [name, layer] : params) {
    int unit = 0;
    if (layer.first == "layer_norm") {
      const int r = norms.at(layer.second);
      unit = r < 2 * blocks ? r / 2 + 1 : blocks + 1;
    } else if (layer.first == "linear") {
      const int r = linear.at(layer.second);
      unit = r < per_block * blocks ? r / per_block + 1 : blocks + 1;
    }
    units.of_param[name] = unit;
  }
  units.count = blocks + 2;
  return units;
}

StatusOr<std::vector<StagePrograms>> PartitionStages(const Program& startup, const Program& main,
                                                     const PipelinePartitionOptions& options) {
  const std::string& file = options.file;
  const int pp = options.pp_degree;
  const int vpp = options.vpp_degree;
  if (pp < 1 || vpp < 1) {
    return Status(
        StatusCode::kInvalidArgument,
        Location::File(file).AtAttr(pp < 1 ? "pp_degree" : "vpp_degree"),
        fmt::format("a pipeline needs pp_degree and vpp_degree >= 1, not {} and {}", pp, vpp));
  }
  if (options.micro_batch_size < 1 || !options.ring) {
    return Status(StatusCode::kInvalidArgument, Location::File(file),
                  "the stage partition needs a micro-batch size >= 1 and a ring for each pair of "
                  "stages");
  }
  if (main.num_blocks() != 1 || startup.num_blocks() < 1) {
    return Status(StatusCode::kInvalid, Location::File(file),
                  fmt::format("the pipeline pass takes a main program of one block, not {} (it "
                              "runs before gradient merge)",
                              main.num_blocks()));
  }
  IRM_ASSIGN_OR_RETURN(LayerUnits units, FindLayerUnits(main, file));
  const int chunks = pp * vpp;
  if (chunks > units.count) {
    return Status(StatusCode::kInvalidArgument, Location::File(file).AtAttr("pp_degree"),
                  fmt::format("pp_degree above the layer count: pp_degree {} x vpp_degree {} = {} "
                              "chunks for {} layer units",
                              pp, vpp, chunks, units.count));
  }
  // Units split evenly and in order: chunk c takes [c*U/C, (c+1)*U/C).
  std::vector<int> chunk_of_unit(static_cast<size_t>(units.count));
  for (int c = 0; c < chunks; ++c) {
    for (int u = c * units.count / chunks; u < (c + 1) * units.count / chunks; ++u) {
      chunk_of_unit[static_cast<size_t>(u)] = c;
    }
  }
  std::unordered_map<std::string, int> param_chunk;
  for (const auto& [param, unit] : units.of_param) {
    param_chunk[param] = chunk_of_unit[static_cast<size_t>(unit)];
  }

  const Block root = main.root();
  const int n = root.num_ops();
  std::vector<OpKind> kind(static_cast<size_t>(n));
  std::vector<int> chunk(static_cast<size_t>(n), -1);  // global chunk; -1: every stage
  std::unordered_map<std::string, int> writer;         // var -> latest writer so far
  std::vector<std::unordered_map<std::string, int>> writer_before(static_cast<size_t>(n));
  std::unordered_map<std::string, std::vector<int>> readers;
  const auto error_at = [&](int i, std::string message) {
    return Status(StatusCode::kInvalid, OpLocation(file, root, i), std::move(message));
  };

  // Forward ops: by parameter, else the latest producer's chunk.
  for (int i = 0; i < n; ++i) {
    const Op op = root.op(i);
    const size_t at = static_cast<size_t>(i);
    kind[at] = KindOf(op);
    const std::vector<std::string> inputs = InputsOf(op.desc());
    for (const std::string& v : inputs) {
      readers[v].push_back(i);
      if (auto w = writer.find(v); w != writer.end()) writer_before[at][v] = w->second;
    }
    if (kind[at] == OpKind::kForward) {
      for (const std::string& v : inputs) {
        auto p = param_chunk.find(v);
        if (p == param_chunk.end()) continue;
        if (chunk[at] >= 0 && chunk[at] != p->second) {
          return error_at(i, fmt::format("the op reads parameters of chunks {} and {}: shared "
                                         "parameters across pipeline stages are not supported",
                                         chunk[at], p->second));
        }
        chunk[at] = p->second;
      }
      // A column-parallel linear's c_identity belongs to the linear (Paddle's dist op of the
      // matmul owns it), so it goes with its consumer, like a constant.
      if (chunk[at] < 0 && op.type() != "c_identity") {
        for (const std::string& v : inputs) {
          auto w = writer_before[at].find(v);
          if (w != writer_before[at].end()) chunk[at] = std::max(chunk[at], chunk[w->second]);
        }
      }
    }
    for (const std::string& v : OutputsOf(op.desc())) writer[v] = i;
  }
  // Forward ops computing from constants only: with their first consumer.
  for (int i = n - 1; i >= 0; --i) {
    const size_t at = static_cast<size_t>(i);
    if (kind[at] != OpKind::kForward || chunk[at] >= 0) continue;
    int first = INT_MAX;
    for (const std::string& v : OutputsOf(root.op(i).desc())) {
      for (int j : readers[v]) {
        if (j > i && kind[static_cast<size_t>(j)] == OpKind::kForward && chunk[j] >= 0) {
          first = std::min(first, chunk[static_cast<size_t>(j)]);
        }
      }
    }
    if (first == INT_MAX) {
      return error_at(i,
                      "the pipeline pass cannot place this forward op: it reads no parameter, "
                      "no layer's output, and no layer reads its output");
    }
    chunk[at] = first;
  }
  // Backward ops with the forward op whose gradient they take; optimizer ops with their
  // parameter; fetches with their var's producer.
  std::unordered_map<std::string, int> forward_writer;
  for (int i = 0; i < n; ++i) {
    const size_t at = static_cast<size_t>(i);
    const proto::OpDesc& desc = root.op(i).desc();
    if (kind[at] == OpKind::kForward) {
      for (const std::string& v : OutputsOf(desc)) forward_writer[v] = i;
    } else if (kind[at] == OpKind::kBackward) {
      for (const std::vector<std::string>& names : {InputsOf(desc), OutputsOf(desc)}) {
        for (const std::string& name : names) {
          auto w = forward_writer.find(GradBase(name));
          if (chunk[at] < 0 && w != forward_writer.end()) chunk[at] = chunk[w->second];
        }
        if (chunk[at] >= 0) break;
      }
      if (chunk[at] < 0) {
        return error_at(i,
                        "the pipeline pass cannot place this backward op: none of its "
                        "gradients is that of a forward op's output");
      }
    } else if (kind[at] == OpKind::kOptimize) {
      for (const std::string& name : InputsOf(desc)) {
        auto p = param_chunk.find(name.substr(0, name.find('@')));
        if (p != param_chunk.end()) {
          chunk[at] = p->second;
          break;
        }
      }
    } else if (kind[at] == OpKind::kFetch) {
      for (const std::string& v : InputsOf(desc)) {
        auto w = writer_before[at].find(v);
        if (w != writer_before[at].end()) chunk[at] = chunk[w->second];
      }
      if (chunk[at] < 0) return error_at(i, "no op computes the var this fetch reads");
    }
  }

  // The walk: each op on its stage (feeds on every reading stage, optimizer ops of no parameter
  // on every stage), a send/recv pair before each read of a var the stage does not hold.
  std::vector<std::vector<proto::OpDesc>> stage_ops(static_cast<size_t>(pp));
  std::unordered_map<std::string, Producer> producer;
  std::unordered_map<std::string, std::set<int>> holders;
  P2pFactory factory;
  for (int i = 0; i < n; ++i) {
    const size_t at = static_cast<size_t>(i);
    const Op op = root.op(i);
    std::set<int> stages;
    if (kind[at] == OpKind::kFeed) {
      for (const std::string& v : OutputsOf(op.desc())) {
        for (int j : readers[v]) {
          if (chunk[static_cast<size_t>(j)] >= 0) stages.insert(chunk[j] % pp);
        }
      }
      if (stages.empty()) stages.insert(0);
    } else if (chunk[at] < 0) {
      for (int s = 0; s < pp; ++s) stages.insert(s);
    } else {
      stages.insert(chunk[at] % pp);
    }
    const int local_chunk = chunk[at] < 0 ? 0 : chunk[at] / pp;
    const bool backward = kind[at] == OpKind::kBackward;
    for (int t : stages) {
      for (const std::string& v :
           kind[at] == OpKind::kFeed ? std::vector<std::string>{} : InputsOf(op.desc())) {
        const std::optional<Var> var = root.FindVar(v);
        if (var && var->persistable()) continue;
        auto held = holders.find(v);
        if (held == holders.end() || held->second.count(t) != 0) continue;
        const Producer& from = producer.at(v);
        const bool crosses_phase =
            (from.kind == OpKind::kBackward) != backward || kind[at] == OpKind::kOptimize;
        if (crosses_phase || !var || var->tensor_desc() == nullptr) {
          return error_at(i, fmt::format("'{}' is computed on stage {} and read here on stage {} "
                                         "by an op of another phase or with no tensor "
                                         "declaration: the pipeline pass cannot send it",
                                         v, from.stage, t));
        }
        std::vector<int32_t> shape;
        for (int64_t d : var->dims()) {
          shape.push_back(static_cast<int32_t>(d < 0 ? options.micro_batch_size : d));
        }
        const int role = backward ? kBackward : kForward;
        const int ring = options.ring(from.stage, t);
        stage_ops[static_cast<size_t>(from.stage)].push_back(
            factory.Send(v, ring, role, from.stage, from.chunk));
        stage_ops[static_cast<size_t>(t)].push_back(
            factory.Recv(v, ring, role, t, local_chunk, std::move(shape),
                         var->dtype().value_or(proto::VarType::FP32)));
        held->second.insert(t);
      }
      proto::OpDesc copy = op.desc();
      OpEditor(&copy).SetAttr(kOpDeviceAttr, Device(t)).SetAttr(kChunkIdAttr, int32_t{local_chunk});
      stage_ops[static_cast<size_t>(t)].push_back(std::move(copy));
    }
    for (const std::string& v : OutputsOf(op.desc())) {
      if (kind[at] == OpKind::kFeed) {
        holders[v].insert(stages.begin(), stages.end());
      } else {
        holders[v] = stages;
      }
      producer[v] = Producer{*stages.begin(), local_chunk, kind[at]};
    }
  }

  std::vector<StagePrograms> result;
  for (int s = 0; s < pp; ++s) {
    StagePrograms stage;
    stage.stage = s;
    stage.pp_degree = pp;
    stage.vpp_degree = vpp;
    stage.main = main;
    proto::BlockDesc& block = *stage.main.mutable_desc()->mutable_blocks(0);
    block.clear_ops();
    for (proto::OpDesc& op : stage_ops[static_cast<size_t>(s)]) *block.add_ops() = std::move(op);
    KeepUsedVars(stage.main);
    // The startup keeps the initialisers of what the stage's main uses.
    std::set<std::string> used;
    for (const proto::OpDesc& op : block.ops()) {
      for (const std::string& name : ArgumentsOf(op)) used.insert(name);
    }
    stage.startup = startup;
    proto::BlockDesc& init = *stage.startup.mutable_desc()->mutable_blocks(0);
    google::protobuf::RepeatedPtrField<proto::OpDesc> kept;
    for (const proto::OpDesc& op : init.ops()) {
      const std::vector<std::string> outputs = OutputsOf(op);
      if (std::any_of(outputs.begin(), outputs.end(),
                      [&](const std::string& v) { return used.count(v) != 0; })) {
        *kept.Add() = op;
      }
    }
    init.mutable_ops()->Swap(&kept);
    KeepUsedVars(stage.startup);
    result.push_back(std::move(stage));
  }
  return result;
}

}  // namespace irm::oldir::passes
