// Paddle job lists to CommProgram (paddle_comm.h).
#include "schedules/paddle_comm.h"

#include <fmt/format.h>

namespace irm::schedules {
namespace {

class Lowering {
 public:
  Lowering(int pp, int vpp, bool v_shape, JobListIr ir, const PaddleCommOptions& options)
      : p_(pp), v_(vpp), v_shape_(v_shape), ir_(ir), options_(options) {}

  // The virtual stage rank `rank` runs for chunk `chunk`, and the rank that runs a virtual stage.
  int VirtualStage(int rank, int chunk) const {
    return chunk * p_ + (v_shape_ && chunk % 2 ? p_ - 1 - rank : rank);
  }
  int RankOf(int stage) const {
    const int chunk = stage / p_;
    const int position = stage % p_;
    return v_shape_ && chunk % 2 ? p_ - 1 - position : position;
  }
  int ChunkOf(int stage) const { return stage / p_; }

  Status Lower(int rank, const std::vector<Job>& jobs, std::vector<Step>* steps) const {
    bool has_recv_forward = false;
    bool has_send_backward = false;
    for (const Job& job : jobs) {
      const JobKind kind = ClassifyJobType(job.type).kind;
      has_recv_forward |= kind == JobKind::kRecvForward;
      has_send_backward |= kind == JobKind::kSendBackward;
    }
    const int last = v_ * p_ - 1;
    for (size_t index = 0; index < jobs.size(); ++index) {
      const Job& job = jobs[index];
      const JobTypeInfo info = ClassifyJobType(job.type);
      const int chunk = info.chunk < 0 ? 0 : info.chunk;
      if (chunk >= v_ || (info.chunk < 0 && v_ > 1 && Communicates(info.kind))) {
        return Status(
            StatusCode::kInvalid,
            Location{}.With(fmt::format("stage {}, job {} ({}, micro-batch {})", rank, index,
                                        job.type, job.micro_batch)),
            info.chunk < 0
                ? fmt::format("job type {} names no chunk, but the pipeline has {}", job.type, v_)
                : fmt::format("chunk {} is out of range: the pipeline has {} chunks", chunk, v_));
      }
      const int stage = VirtualStage(rank, chunk);
      const std::string label = Label(info, job);
      const auto recv = [&](bool activation) {
        const int from = activation ? stage - 1 : stage + 1;
        if (from < 0 || from > last || RankOf(from) == rank) return;
        steps->push_back(
            P2p(StepKind::kRecv, RankOf(from), rank, activation, from, stage, job, info, label));
      };
      const auto send = [&](bool activation) {
        const int to = activation ? stage + 1 : stage - 1;
        if (to < 0 || to > last || RankOf(to) == rank) return;
        steps->push_back(
            P2p(StepKind::kSend, rank, RankOf(to), activation, stage, to, job, info, label));
      };
      const auto compute = [&] {
        Step step;
        step.kind = StepKind::kCompute;
        step.label = label;
        Fill(&step, job, info);
        steps->push_back(std::move(step));
      };
      switch (info.kind) {
        case JobKind::kForward:
          if (!has_recv_forward) recv(true);
          compute();
          send(true);
          break;
        case JobKind::kRecvForward:
          recv(true);
          break;
        case JobKind::kBackward:
        case JobKind::kBackwardB:
          recv(false);
          compute();
          if (!has_send_backward) send(false);
          break;
        case JobKind::kSendBackward:
          send(false);
          break;
        case JobKind::kBackwardW:
        case JobKind::kOptimizer:
        case JobKind::kOther:
          compute();
          break;
      }
    }
    return Status::Ok();
  }

 private:
  static bool Communicates(JobKind kind) {
    return kind != JobKind::kOptimizer && kind != JobKind::kOther && kind != JobKind::kBackwardW;
  }

  std::string Label(const JobTypeInfo& info, const Job& job) const {
    const char* prefix = nullptr;
    switch (info.kind) {
      case JobKind::kForward:
        prefix = "F";
        break;
      case JobKind::kBackward:
        prefix = "B";
        break;
      case JobKind::kBackwardB:
        prefix = "Bb";
        break;
      case JobKind::kBackwardW:
        prefix = "Bw";
        break;
      case JobKind::kRecvForward:
        prefix = "recv_forward";
        break;
      case JobKind::kSendBackward:
        prefix = "send_backward";
        break;
      case JobKind::kOptimizer:
        return "OPT";
      case JobKind::kOther:
        return fmt::format("{}{}", job.type, job.micro_batch);
    }
    if (info.chunk >= 0) return fmt::format("{}{}.{}", prefix, info.chunk, job.micro_batch);
    return fmt::format("{}{}", prefix, job.micro_batch);
  }

  std::string StageName(int stage) const {
    if (v_ == 1) return fmt::format("{}", RankOf(stage));
    return fmt::format("{} chunk {}", RankOf(stage), ChunkOf(stage));
  }

  void Fill(Step* step, const Job& job, const JobTypeInfo& info) const {
    step->job = job.type;
    step->micro_batch = job.micro_batch;
    step->chunk = info.chunk;
  }

  Step P2p(StepKind kind, int sender, int receiver, bool activation, int from, int to,
           const Job& job, const JobTypeInfo& info, const std::string& label) const {
    Step step;
    step.kind = kind;
    int group = options_.shared_group;
    if (options_.groups == PaddleCommGroups::kPerDirection) {
      group = activation ? options_.forward_group : options_.backward_group;
    }
    step.channel = Channel{sender, receiver, group};
    step.message = fmt::format(
        "{} stage {} -> {}, micro-batch {}", activation ? "activation" : "gradient",
        StageName(from),
        v_ == 1 ? fmt::format("{}", RankOf(to)) : fmt::format("stage {}", StageName(to)),
        job.micro_batch);
    const bool comm_job = info.kind == JobKind::kRecvForward || info.kind == JobKind::kSendBackward;
    step.label = comm_job ? label : label + (kind == StepKind::kSend ? ":send" : ":recv");
    const char* op = kind == StepKind::kSend ? "send_v2" : "recv_v2";
    step.op = ir_ == JobListIr::kPir ? fmt::format("pd_op.{}", op) : op;
    Fill(&step, job, info);
    return step;
  }

  const int p_;
  const int v_;
  const bool v_shape_;
  const JobListIr ir_;
  const PaddleCommOptions options_;
};

}  // namespace

StatusOr<CommProgram> JobListsCommProgram(const std::vector<std::vector<Job>>& stage_jobs, int vpp,
                                          bool v_shape, JobListIr ir,
                                          const PaddleCommOptions& options) {
  if (stage_jobs.empty()) {
    return Status(StatusCode::kInvalidArgument, Location{}, "a pipeline needs at least one stage");
  }
  if (vpp < 1) {
    return Status(StatusCode::kInvalidArgument, Location{},
                  fmt::format("vpp_degree must be >= 1, got {}", vpp));
  }
  const Lowering lowering(static_cast<int>(stage_jobs.size()), vpp, v_shape, ir, options);
  CommProgram program;
  program.ranks.resize(stage_jobs.size());
  for (size_t rank = 0; rank < stage_jobs.size(); ++rank) {
    IRM_RETURN_IF_ERROR(
        lowering.Lower(static_cast<int>(rank), stage_jobs[rank], &program.ranks[rank]));
  }
  return program;
}

StatusOr<CommProgram> PaddleCommProgram(const PaddleScheduleSpec& spec,
                                        const PaddleCommOptions& options) {
  IRM_ASSIGN_OR_RETURN(std::vector<std::vector<Job>> lists, MakeJobLists(spec));
  return JobListsCommProgram(lists, spec.vpp, spec.mode == PaddleMode::kZbvpp, spec.ir, options);
}

}  // namespace irm::schedules
