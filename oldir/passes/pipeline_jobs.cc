// The job split of the legacy pipeline pass (pipeline_jobs.h).
#include "oldir/passes/pipeline_jobs.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <utility>

#include "oldir/builder.h"
#include "oldir/editor.h"
#include "oldir/op_role.h"
#include "oldir/passes/pipeline_accumulation.h"
#include "oldir/passes/pipeline_zero_bubble.h"
#include "schedules/paddle_schedule.h"

namespace irm::oldir::passes {

namespace {

namespace sched = irm::schedules;

std::string SentVar(const proto::OpDesc& op) {
  for (const proto::OpDesc::Var& slot : op.inputs()) {
    if (slot.parameter() == "X" && slot.arguments_size() == 1) return slot.arguments(0);
  }
  return "";
}

// _insert_sync_for_fthenb_1f1b (pass_utils.py) on the root block: send and recv get
// dynamic_shape false ("pipeline might hang when dynamic_shape is True"); each send runs on the
// comm stream (use_calc_stream false) after a c_sync_calc_stream, and is waited for by a
// c_sync_comm_stream — right before the first optimizer op for a backward send, right after it
// for a forward one, which is then dropped again when it precedes the first backward recv.
void InsertSendSyncs(Program& main) {
  proto::BlockDesc& block = *main.mutable_desc()->mutable_blocks(0);
  ProgramBuilder scratch;
  const auto sync = [&](const char* type, const proto::OpDesc& send, int role, bool comm) {
    const Op op(&send);
    scratch.set_role(role);
    scratch.set_namescope(op.AttrOr<std::string>(kOpNamescopeAttr, "/"));
    scratch.set_device(op.AttrOr<std::string>(kOpDeviceAttr, ""));
    const std::string var = SentVar(send);
    AttrList attrs;
    if (comm) attrs.emplace_back("ring_id", op.AttrOr<int32_t>("ring_id", 0));
    proto::OpDesc made =
        *scratch.root().AppendOp(type, {{"X", {var}}}, {{"Out", {var}}}, std::move(attrs));
    OpEditor(&made).SetAttr(kChunkIdAttr, int32_t{ChunkOf(send)});
    return made;
  };
  std::vector<proto::OpDesc> ops;
  std::vector<proto::OpDesc> before_optimizer;
  bool optimizer_reached = false;
  for (const proto::OpDesc& original : block.ops()) {
    proto::OpDesc op = original;
    const int role = Op(&op).role();
    if (IsOptimize(role) && !optimizer_reached) {
      optimizer_reached = true;
      for (proto::OpDesc& s : before_optimizer) ops.push_back(std::move(s));
    }
    if (op.type() == "send_v2" || op.type() == "recv_v2") {
      OpEditor(&op).SetAttr("dynamic_shape", false);
    }
    if (op.type() != "send_v2") {
      ops.push_back(std::move(op));
      continue;
    }
    OpEditor(&op).SetAttr("use_calc_stream", false);
    ops.push_back(sync("c_sync_calc_stream", op, role, false));
    if (role == kBackward) {
      before_optimizer.push_back(sync("c_sync_comm_stream", op, kOptimize, true));
      ops.push_back(std::move(op));
    } else {
      proto::OpDesc wait = sync("c_sync_comm_stream", op, kBackward, true);
      OpEditor(&wait).SetAttr("pipeline_flag", std::string());
      ops.push_back(std::move(op));
      ops.push_back(std::move(wait));
    }
  }
  if (!optimizer_reached) {
    for (proto::OpDesc& s : before_optimizer) ops.push_back(std::move(s));
  }
  size_t backward_recv = ops.size();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i].type() == "recv_v2" && IsBackward(Op(&ops[i]).role())) {
      backward_recv = i;
      break;
    }
  }
  google::protobuf::RepeatedPtrField<proto::OpDesc> kept;
  for (size_t i = 0; i < ops.size(); ++i) {
    const bool forward_wait = ops[i].type() == "c_sync_comm_stream" &&
                              Op(&ops[i]).HasAttr("pipeline_flag") && i < backward_recv &&
                              backward_recv < ops.size();
    if (!forward_wait) *kept.Add() = std::move(ops[i]);
  }
  block.mutable_ops()->Swap(&kept);
}

// _overlap_send_recv: the p2p ops on their own streams (a dist attribute the ProgramDesc does not
// carry), on the calc stream flag and with static shapes.
void OverlapSendRecv(Program& main) {
  for (proto::OpDesc& op : *main.mutable_desc()->mutable_blocks(0)->mutable_ops()) {
    if (op.type() == "send_v2" || op.type() == "recv_v2") {
      OpEditor(&op).SetAttr("dynamic_shape", false).SetAttr("use_calc_stream", true);
    }
  }
}

bool IsFetch(const proto::OpDesc& op) { return op.type() == "fetch" || op.type() == "fetch_v2"; }

// The slots whose inputs an op needs no buffer of (Paddle's DECLARE_NO_NEED_BUFFER_VARS_INFERER:
// ElementwiseGradNoBufVarsInferer in elementwise_add_op.cc / elementwise_sub_op.cc,
// MeanGradNoNeedBufferVarsInferer in mean_op.cc, LookupTableV2GradOpNoBufferVarsInferer in
// lookup_table_v2_op.cc, LayerNormGradNoNeedBufferVarInferer in layer_norm_op.cc), for the ops
// the zoo's programs hold.
std::vector<std::string> NoNeedBufferSlots(const std::string& type) {
  if (type == "elementwise_add_grad" || type == "elementwise_sub_grad") return {"X", "Y"};
  if (type == "mean_grad") return {"X"};
  if (type == "lookup_table_v2_grad") return {"W"};
  if (type == "layer_norm_grad") return {"Bias"};
  return {};
}

// set_skip_gc_vars's step 1 for one program: its required vars.
std::set<std::string> RequiredVars(const Program& program) {
  std::set<std::string> required;
  for (int b = 0; b < program.num_blocks(); ++b) {
    const Block block = program.block(b);
    for (int i = 0; i < block.num_ops(); ++i) {
      const proto::OpDesc& op = block.op(i).desc();
      static const std::set<std::string> kSkipped = {"c_sync_comm_stream", "conditional_block",
                                                     "data", "nop", "while"};
      if (kSkipped.count(op.type()) != 0) continue;
      const std::vector<std::string> no_need = NoNeedBufferSlots(op.type());
      std::set<std::string> needed;  // args of the other slots (OpInOutInfo)
      for (const auto* slots : {&op.inputs(), &op.outputs()}) {
        for (const proto::OpDesc::Var& slot : *slots) {
          if (std::find(no_need.begin(), no_need.end(), slot.parameter()) != no_need.end() &&
              slots == &op.inputs()) {
            continue;
          }
          needed.insert(slot.arguments().begin(), slot.arguments().end());
        }
      }
      for (const std::string& name : ArgumentsOf(op)) {
        const std::optional<Var> var = block.FindVarRecursive(name);
        if (!var || var->persistable()) continue;
        if (!no_need.empty() && needed.count(name) == 0) continue;
        required.insert(name);
      }
    }
  }
  return required;
}

// The job types of a schedule's programs, in Paddle's order; `recv_send`: with the PIR passes'
// recv_forward / send_backward programs (pipeline_1f1b.py `_partial_pir_programs`,
// pipeline_vpp.py `_split_program_for_vpp`).
std::vector<std::string> JobTypes(sched::PaddleMode mode, int vpp, bool recv_send) {
  switch (mode) {
    case sched::PaddleMode::kVpp: {
      std::vector<std::string> types;
      for (int c = 0; c < vpp; ++c) {
        if (recv_send) types.push_back(fmt::format("recv_forward{}", c));
        types.push_back(fmt::format("forward{}", c));
      }
      for (int c = vpp - 1; c >= 0; --c) {
        types.push_back(fmt::format("backward{}", c));
        if (recv_send) types.push_back(fmt::format("send_backward{}", c));
      }
      types.push_back("optimizer");
      return types;
    }
    case sched::PaddleMode::kZbh1:
      return {"forward", "backward", "backward_b", "backward_w", "optimizer"};
    default:
      if (recv_send) return {"recv_forward", "forward", "backward", "send_backward", "optimizer"};
      return {"forward", "backward", "optimizer"};
  }
}

// The ops of `root` that the PIR split moves out of forward and backward: 1 for a forward-role
// recv_v2 (recv_forward), 2 for a backward-role send_v2 and the c_sync_calc_stream that
// InsertSendSyncs put right before it on the same var (send_backward), 0 otherwise.
std::vector<int> RecvSendOps(const Block& root) {
  std::vector<int> moved(static_cast<size_t>(root.num_ops()), 0);
  for (int i = 0; i < root.num_ops(); ++i) {
    const proto::OpDesc& op = root.op(i).desc();
    const int role = Op(&op).role();
    if (op.type() == "recv_v2" && !IsBackward(role) && !IsOptimize(role)) {
      moved[static_cast<size_t>(i)] = 1;
    } else if (op.type() == "send_v2" && IsBackward(role)) {
      moved[static_cast<size_t>(i)] = 2;
      if (i > 0) {
        const proto::OpDesc& before = root.op(i - 1).desc();
        if (before.type() == "c_sync_calc_stream" && SentVar(before) == SentVar(op)) {
          moved[static_cast<size_t>(i - 1)] = 2;
        }
      }
    }
  }
  return moved;
}

}  // namespace

StatusOr<RankPrograms> SplitPipelineJobs(const StagePrograms& stage,
                                         const PipelineStrategy& pipeline,
                                         sched::JobListIr job_lists) {
  const Location where = Location::File("pipeline").AtAttr("schedule_mode");
  IRM_ASSIGN_OR_RETURN(const sched::PaddleMode mode,
                       sched::ParsePaddleMode(pipeline.schedule_mode));
  const bool pir = job_lists == sched::JobListIr::kPir;
  if (pir && mode != sched::PaddleMode::kFThenB && mode != sched::PaddleMode::k1F1B &&
      mode != sched::PaddleMode::kVpp) {
    // static/pir_pass.py::pipeline_pass: "pipeline scheduler only support FThenB, 1F1B and VPP".
    return Status(StatusCode::kInvalidArgument, where,
                  fmt::format("{} has no PIR form: Paddle's PIR pipeline pass supports only "
                              "FThenB, 1F1B and VPP",
                              pipeline.schedule_mode));
  }
  if (pir && mode != sched::PaddleMode::kFThenB && pipeline.enable_send_recv_overlap) {
    // pipeline_1f1b.py and pipeline_vpp.py assert `not enable_send_recv_overlap` in PIR.
    return Status(StatusCode::kInvalidArgument,
                  Location::File("pipeline").AtAttr("enable_send_recv_overlap"),
                  fmt::format("Paddle's PIR {} pass does not take enable_send_recv_overlap",
                              pipeline.schedule_mode));
  }
  const bool chunked = mode == sched::PaddleMode::kVpp || mode == sched::PaddleMode::kZbvpp;
  if (!chunked && (pipeline.vpp_degree > 1 || stage.vpp_degree > 1)) {
    return Status(StatusCode::kInvalidArgument, Location::File("pipeline").AtAttr("vpp_degree"),
                  fmt::format("vpp_degree > 1 needs schedule_mode VPP (or ZBVPP), not {}",
                              pipeline.schedule_mode));
  }
  if (chunked && pipeline.vpp_degree != stage.vpp_degree) {
    return Status(StatusCode::kInvalidArgument, Location::File("pipeline").AtAttr("vpp_degree"),
                  fmt::format("vpp_degree {} differs from the {} chunks the stages were cut into",
                              pipeline.vpp_degree, stage.vpp_degree));
  }
  if (mode == sched::PaddleMode::kZbvpp ||
      (mode == sched::PaddleMode::kVpp && pipeline.split_backward)) {
    return Status(StatusCode::kUnimplemented, where,
                  "the legacy pipeline pass does not split ZBVPP or VPP with split_backward yet");
  }
  sched::PaddleScheduleSpec spec;
  spec.mode = mode;
  spec.pp = stage.pp_degree;
  spec.micro_batches = pipeline.accumulate_steps;
  spec.vpp = stage.vpp_degree;
  spec.ir = job_lists;
  spec.pir_split_recv_send = true;
  IRM_RETURN_IF_ERROR(sched::ValidatePaddleScheduleSpec(spec));
  const bool recv_send = sched::HasRecvSendJobs(spec);
  IRM_ASSIGN_OR_RETURN(std::vector<sched::Job> jobs, sched::MakeJobList(spec, stage.stage));

  RankPrograms rank;
  rank.startup = stage.startup;
  rank.main = stage.main;
  const std::string file = fmt::format("stage {}", stage.stage);
  IRM_RETURN_IF_ERROR(AppendPipelineAccumulation(rank.main, rank.startup, pipeline.accumulate_steps,
                                                 /*avg=*/true, file));
  if (mode == sched::PaddleMode::kZbh1) {
    IRM_RETURN_IF_ERROR(SplitMatmulGradToMatmul(rank.main, file));
  }
  if (pipeline.enable_send_recv_overlap) {
    OverlapSendRecv(rank.main);
  } else {
    InsertSendSyncs(rank.main);
  }
  rank.main.Reindex();

  // Each op to its job types.
  const std::vector<std::string> types = JobTypes(mode, stage.vpp_degree, recv_send);
  std::map<std::string, std::vector<proto::OpDesc>> ops_of;
  std::vector<proto::OpDesc> fetches;
  const Block root = rank.main.root();
  const std::vector<BackwardPart> parts = BackwardParts(rank.main);
  const std::vector<int> recv_send_ops =
      recv_send ? RecvSendOps(root) : std::vector<int>(static_cast<size_t>(root.num_ops()), 0);
  int chunk = 0;
  for (int i = 0; i < root.num_ops(); ++i) {
    const proto::OpDesc& op = root.op(i).desc();
    if (Op(&op).HasAttr(kChunkIdAttr)) chunk = ChunkOf(op);
    if (chunk < 0 || chunk >= stage.vpp_degree) {
      return Status(
          StatusCode::kInvalid, OpLocation(file, root, i),
          fmt::format("chunk_id {} outside the stage's {} chunks", chunk, stage.vpp_degree));
    }
    const std::string suffix = chunked ? std::to_string(chunk) : "";
    const int role = Op(&op).role();
    if (IsFetch(op)) {
      fetches.push_back(op);
    } else if (op.type() == "feed") {
      ops_of[chunked ? "forward0" : "forward"].push_back(op);
    } else if (recv_send_ops[static_cast<size_t>(i)] == 1) {
      ops_of["recv_forward" + suffix].push_back(op);
    } else if (recv_send_ops[static_cast<size_t>(i)] == 2) {
      ops_of["send_backward" + suffix].push_back(op);
    } else if (IsOptimize(role)) {
      ops_of["optimizer"].push_back(op);
    } else if (IsBackward(role)) {
      ops_of["backward" + suffix].push_back(op);
      if (mode == sched::PaddleMode::kZbh1) {
        ops_of[parts[static_cast<size_t>(i)] == BackwardPart::kW ? "backward_w" : "backward_b"]
            .push_back(op);
      }
    } else {
      ops_of["forward" + suffix].push_back(op);
    }
  }
  // A fetch goes to the first program (backward_b before backward_w under ZB, and never the
  // whole `backward`) whose ops use its var.
  for (const proto::OpDesc& fetch : fetches) {
    const std::vector<std::string> args = ArgumentsOf(fetch);
    for (const std::string& type : types) {
      if (type == "backward" && mode == sched::PaddleMode::kZbh1) continue;
      std::vector<proto::OpDesc>& ops = ops_of[type];
      const bool uses = std::any_of(ops.begin(), ops.end(), [&](const proto::OpDesc& op) {
        const std::vector<std::string> names = ArgumentsOf(op);
        return !args.empty() && std::find(names.begin(), names.end(), args.front()) != names.end();
      });
      if (uses) {
        ops.push_back(fetch);
        break;
      }
    }
  }
  for (const std::string& type : types) {
    Program program = rank.main;
    proto::BlockDesc& block = *program.mutable_desc()->mutable_blocks(0);
    block.clear_ops();
    for (const proto::OpDesc& op : ops_of[type]) *block.add_ops() = op;
    KeepUsedVars(program);
    rank.jobs.emplace(type, std::move(program));
  }
  std::vector<PlanJob> plan;
  for (const sched::Job& job : jobs) plan.push_back({job.type, job.micro_batch});
  rank.plan = std::move(plan);
  return rank;
}

StatusOr<std::vector<std::vector<std::string>>> PipelineSkipGcVars(
    const std::map<std::string, Program>& jobs, const std::vector<PlanJob>& plan,
    int micro_batches) {
  std::map<std::string, std::set<std::string>> required;
  for (const auto& [type, program] : jobs) required[type] = RequiredVars(program);
  // The jobs that end a micro-batch's work and so keep nothing: backward and backward_w, or, where
  // backward hands its gradient on to send_backward, send_backward and backward_w (the PIR passes
  // moved the assertion there with the split).
  const bool recv_send = std::any_of(plan.begin(), plan.end(), [](const PlanJob& job) {
    return sched::ClassifyJobType(job.type).kind == sched::JobKind::kSendBackward;
  });
  const std::string last_backward = recv_send ? "send_backward" : "backward";
  std::vector<std::set<std::string>> later(static_cast<size_t>(std::max(micro_batches, 0)));
  std::vector<std::vector<std::string>> skip(plan.size());
  for (size_t j = plan.size(); j-- > 0;) {
    const PlanJob& job = plan[j];
    auto found = required.find(job.type);
    if (found == required.end() || job.micro_batch < 0 || job.micro_batch >= micro_batches) {
      return Status(StatusCode::kInvalidArgument, Location::File("plan.json").AtAttr(job.type),
                    fmt::format("job {} ({}, micro-batch {}) has no program or lies outside the "
                                "{} micro-batches",
                                j, job.type, job.micro_batch, micro_batches));
    }
    std::set<std::string>& suffix = later[static_cast<size_t>(job.micro_batch)];
    std::set_intersection(found->second.begin(), found->second.end(), suffix.begin(), suffix.end(),
                          std::back_inserter(skip[j]));
    if ((job.type == last_backward || job.type == "backward_w") && !skip[j].empty()) {
      return Status(StatusCode::kInternal, Location::File("plan.json").AtAttr(job.type),
                    fmt::format("job {} ({}) would keep {} vars for later jobs (first '{}'); "
                                "Paddle's pipeline passes assert it keeps none",
                                j, job.type, skip[j].size(), skip[j].front()));
    }
    suffix.insert(found->second.begin(), found->second.end());
  }
  return skip;
}

}  // namespace irm::oldir::passes
