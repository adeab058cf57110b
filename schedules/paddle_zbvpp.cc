// Paddle's ZBVPP V-schedule creator (paddle_zbvpp.h), rebuilt from pipeline_zero_bubble.py's
// VScheduleCreator. The model chunks form a V: even chunks run stage 0 -> p-1, odd chunks p-1 -> 0
// (a forward of an odd chunk waits for the stage below it, a backward of an odd chunk for the
// stage above). Times are the pass's program_runtimes; a job starts when its stage is free and its
// dependency from the neighbouring stage has ended plus one communication time. The loss stage
// (stage 0 for an even chunk count, p-1 for an odd one) adds the loss runtime to its last chunk.
#include "schedules/paddle_zbvpp.h"

#include <algorithm>
#include <array>
#include <deque>
#include <optional>

#include <fmt/format.h>

namespace irm::schedules {
namespace {

// Paddle's job_types order ["forward", "backward_w", "backward_b"] fixes the node numbering.
enum Type { kF = 0, kW = 1, kB = 2 };

const char* TypeName(Type type) {
  switch (type) {
    case kF:
      return "forward";
    case kW:
      return "backward_w";
    case kB:
      return "backward_b";
  }
  return "forward";
}

struct Placed {
  Type type;
  int chunk;
  int micro_batch;
};

struct Result {
  std::vector<std::vector<Placed>> schedule;
  std::vector<double> end_times;
  double max_bubble = 0;
};

double MaxOf(const std::vector<double>& values) {
  return values.empty() ? 0 : *std::max_element(values.begin(), values.end());
}

class VScheduleCreator {
 public:
  VScheduleCreator(int stages, int micro_batches, int chunks, const std::array<int, 5>& runtimes)
      : p_(stages),
        m_(micro_batches),
        v_(chunks),
        forward_(runtimes[0]),
        backward_b_(runtimes[1]),
        backward_w_(runtimes[2]),
        loss_(runtimes[3]),
        comm_(runtimes[4]),
        loss_stage_(chunks % 2 == 0 ? 0 : stages - 1) {}

  // create_v_schedule: builds a schedule, then rebuilds it with the bubbles it found as the
  // "approved" ones for as long as that lowers the largest bubble, keeping an earlier end.
  StatusOr<Result> Create(bool fill_w_before_f, bool fill_w_before_b, bool fill_loss_stage,
                          const std::vector<double>* approved_bubbles, int depth = 0) {
    Init();
    std::vector<double> approved =
        approved_bubbles ? *approved_bubbles : std::vector<double>(p_, -1.0);
    const double max_approved = MaxOf(approved);
    IRM_RETURN_IF_ERROR(InsertForwardsBeforeForward1());
    IRM_RETURN_IF_ERROR(InsertForwardsBeforeBackwardB());
    IRM_RETURN_IF_ERROR(
        InsertAfterBackwardStart(fill_w_before_f, fill_w_before_b, fill_loss_stage, approved));
    Result result{schedule_, end_times_, MaxStageBubble(-1, approved)};
    // Paddle recurses without a bound; the bubble strictly shrinks each time, so this bound is
    // never reached on real sizes and only keeps a pathological input finite.
    constexpr int kMaxDepth = 256;
    if ((max_approved < 0 || result.max_bubble < max_approved) && depth < kMaxDepth) {
      const std::vector<double> bubbles = bubbles_;
      IRM_ASSIGN_OR_RETURN(Result next, Create(fill_w_before_f, fill_w_before_b, fill_loss_stage,
                                               &bubbles, depth + 1));
      if (MaxOf(next.end_times) < MaxOf(result.end_times)) return next;
    }
    return result;
  }

 private:
  void Init() {
    counters_.assign(p_, std::vector<std::array<int, 3>>(v_, {0, 0, 0}));
    end_times_.assign(static_cast<size_t>(v_) * p_ * m_ * 3, -1.0);
    stage_time_.assign(p_, 0.0);
    pending_w_.assign(p_, {});
    schedule_.assign(p_, {});
    bubbles_.assign(p_, 0.0);
  }

  int& Counter(int stage, Type type, int chunk) { return counters_[stage][chunk][type]; }

  size_t JobId(Type type, int chunk, int stage, int micro_batch) const {
    return static_cast<size_t>(type) * v_ * p_ * m_ + static_cast<size_t>(chunk) * p_ * m_ +
           static_cast<size_t>(stage) * m_ + micro_batch;
  }
  // Paddle reads its end-time list at the computed id (ids past the end would raise there).
  double EndTime(size_t id) const { return id < end_times_.size() ? end_times_[id] : -1.0; }

  double Runtime(Type type, int stage, int chunk) const {
    double runtime = type == kF ? forward_ : type == kB ? backward_b_ : backward_w_;
    if (stage == loss_stage_ && chunk == v_ - 1) runtime += loss_;
    return runtime;
  }

  int PrevStage(Type type, int chunk, int stage) const {
    if (type == kF) return chunk % 2 ? stage + 1 : stage - 1;
    return chunk % 2 ? stage - 1 : stage + 1;
  }

  double DependencyEndTime(Type type, int chunk, int stage, int micro_batch) const {
    const int prev = PrevStage(type, chunk, stage);
    if (prev < 0 || prev >= p_) return 0;
    return EndTime(JobId(type, chunk, prev, micro_batch));
  }

  bool CanSchedule(Type type, int chunk, int stage) {
    const int micro_batch = Counter(stage, type, chunk);
    if (micro_batch >= m_) return false;
    if ((type == kF && chunk > 0) || type == kB) {
      int prev_count = 0;
      if (type == kF) {
        prev_count = Counter(stage, kF, chunk - 1);
      } else {
        prev_count = chunk + 1 >= v_ ? Counter(stage, kF, v_ - 1) : Counter(stage, kB, chunk + 1);
      }
      if (prev_count <= micro_batch) return false;
    }
    return DependencyEndTime(type, chunk, stage, micro_batch) >= 0;
  }

  int StageForwardNumber(int stage, int chunk_count) {
    int n = 0;
    for (int c = 0; c < chunk_count; ++c) n += Counter(stage, kF, c);
    return n;
  }

  int StageBackwardBNumber(int stage) {
    int n = 0;
    for (int c = 0; c < v_; ++c) n += Counter(stage, kB, c);
    return n;
  }

  bool TimeCheck(Type type, int chunk, int stage, double next_job_start) {
    const double dependency = DependencyEndTime(type, chunk, stage, Counter(stage, type, chunk));
    const double end =
        std::max(stage_time_[stage], dependency + comm_) + Runtime(type, stage, chunk);
    return end <= next_job_start;
  }

  double MaxStageBubble(int stage, const std::vector<double>& approved) const {
    double bubble = MaxOf(bubbles_);
    if (stage >= 0) bubble = std::max(bubble, MaxOf(approved) - approved[stage]);
    return bubble;
  }

  Status Internal(std::string message) const {
    return Status(StatusCode::kInternal, Location{},
                  fmt::format("ZBVPP schedule creator: {}", message));
  }

  Status Put(Type type, int chunk, int stage) {
    const double runtime = Runtime(type, stage, chunk);
    double end = stage_time_[stage] + runtime;
    const int micro_batch = Counter(stage, type, chunk);
    if (micro_batch >= m_) {
      return Internal(
          fmt::format("job {}{} exceeds the limit of micro batches", TypeName(type), chunk));
    }
    // _check_job_chunk_order: a chunk's forward follows the previous chunk's, a chunk's backward_b
    // the next chunk's, a backward_w its backward_b.
    size_t before = 0;
    bool check = true;
    if (type == kF && chunk > 0) {
      before = JobId(kF, chunk - 1, stage, micro_batch);
    } else if (type == kB && chunk < v_ - 1) {
      before = JobId(kB, chunk + 1, stage, micro_batch);
    } else if (type == kW) {
      before = JobId(kB, chunk, stage, micro_batch);
    } else {
      check = false;
    }
    if (check && EndTime(before) < 0) {
      return Internal(fmt::format("job {}{}_{} at stage {} runs before the job it depends on",
                                  TypeName(type), chunk, micro_batch, stage));
    }
    if (type == kF || type == kB) {
      const double dependency = DependencyEndTime(type, chunk, stage, micro_batch);
      if (dependency < 0) {
        return Internal(fmt::format("job {}{}_{} at stage {} depends on an unscheduled job",
                                    TypeName(type), chunk, micro_batch, stage));
      }
      end = std::max(end, dependency + comm_ + runtime);
    }
    if (Counter(stage, kF, 0) > 0) bubbles_[stage] += end - stage_time_[stage] - runtime;
    end_times_[JobId(type, chunk, stage, micro_batch)] = end;
    stage_time_[stage] = end;
    schedule_[stage].push_back({type, chunk, micro_batch});
    if (type == kB) pending_w_[stage].push_back(chunk);
    ++Counter(stage, type, chunk);
    return Status::Ok();
  }

  // Paddle pops the oldest pending chunk; the W's micro-batch is that chunk's W counter.
  Status PutW(int stage) {
    if (pending_w_[stage].empty()) return Internal("no pending backward_w job");
    const int chunk = pending_w_[stage].front();
    pending_w_[stage].pop_front();
    return Put(kW, chunk, stage);
  }

  Status InsertForwardsBeforeForward1() {
    for (int stage = 0; stage < p_; ++stage) IRM_RETURN_IF_ERROR(Put(kF, 0, stage));
    return FillForwardBeforeOneJob(kF, 1, 1, /*down=*/true, /*insert_end_point_job=*/true);
  }

  Status InsertForwardsBeforeBackwardB() {
    // chunk_to_insert_order: the last filled chunk even -> "down", odd -> "up".
    for (int chunk = 2; chunk < v_; ++chunk) {
      IRM_RETURN_IF_ERROR(FillForwardBeforeOneJob(kF, chunk, chunk, (chunk - 1) % 2 == 0, true));
    }
    return FillForwardBeforeOneJob(kB, 0, v_, (v_ - 1) % 2 == 0, false);
  }

  // Fills each stage's bubble before `end_type<end_chunk>` with forwards of chunks
  // 0..fill_chunks-1, walking the stages down (p-1 .. 0) or up.
  Status FillForwardBeforeOneJob(Type end_type, int end_chunk, int fill_chunks, bool down,
                                 bool insert_end_point_job) {
    std::vector<int> stage_order(p_);
    for (int i = 0; i < p_; ++i) stage_order[i] = down ? p_ - 1 - i : i;
    const Placed& first_last = schedule_[stage_order[0]].back();
    double start =
        EndTime(JobId(first_last.type, first_last.chunk, stage_order[0], first_last.micro_batch));
    if (insert_end_point_job) IRM_RETURN_IF_ERROR(Put(end_type, end_chunk, stage_order[0]));
    for (size_t k = 1; k < stage_order.size(); ++k) {
      const int stage = stage_order[k];
      const int start_fill_chunk = (schedule_[stage].back().chunk + 1) % fill_chunks;
      start = start + comm_ + Runtime(end_type, stage, end_chunk);
      IRM_RETURN_IF_ERROR(FillBubbleWithForward(stage, fill_chunks, start_fill_chunk, start, down));
      if (insert_end_point_job) IRM_RETURN_IF_ERROR(Put(end_type, end_chunk, stage));
    }
    return Status::Ok();
  }

  std::vector<int> FillStageOrder(int stage, bool down) const {
    std::vector<int> order;
    if (down) {
      for (int i = 0; i <= stage; ++i) order.push_back(i);
    } else {
      for (int i = p_ - 1; i >= stage; --i) order.push_back(i);
    }
    return order;
  }

  Status FillBubbleWithForward(int stage, int fill_chunks, int start_chunk, double next_job_start,
                               bool down) {
    int chunk = start_chunk;
    const int less_forward_number = down ? 0 : StageForwardNumber(0, fill_chunks);
    const std::vector<int> stage_order = FillStageOrder(stage, down);
    // Every pass places at least one forward (CheckBeforeInsert says one fits), and there are
    // finitely many; the bound only guards against a logic slip.
    for (int guard = 0;
         CheckBeforeInsert(fill_chunks, stage_order, next_job_start, less_forward_number);
         ++guard) {
      if (guard > 4 * p_ * m_ * v_ + 16) return Internal("filling a bubble made no progress");
      for (int i : stage_order) {
        if (!CanSchedule(kF, chunk, i)) continue;
        if (StageForwardNumber(i, fill_chunks) >= less_forward_number &&
            !TimeCheck(kF, chunk, i, next_job_start)) {
          continue;
        }
        IRM_RETURN_IF_ERROR(Put(kF, chunk, i));
      }
      chunk = (chunk + 1) % fill_chunks;
    }
    return Status::Ok();
  }

  bool CheckBeforeInsert(int fill_chunks, const std::vector<int>& stage_order,
                         double next_job_start, int less_forward_number) {
    const int stage = stage_order.back();
    if (StageForwardNumber(stage, fill_chunks) < less_forward_number) return true;
    bool micro_batch_left = false;
    for (int c = 0; c < fill_chunks; ++c) {
      if (Counter(stage, kF, c) < m_) micro_batch_left = true;
    }
    bool can_insert = false;
    for (int c = 0; c < fill_chunks && !can_insert; ++c) {
      for (int i : stage_order) {
        if (!CanSchedule(kF, c, i)) continue;
        if (StageForwardNumber(i, fill_chunks) >= less_forward_number &&
            !TimeCheck(kF, c, i, next_job_start)) {
          continue;
        }
        can_insert = true;
        break;
      }
    }
    return micro_batch_left && can_insert;
  }

  bool WFitsBefore(int stage, double dependency, double scale) {
    return !pending_w_[stage].empty() &&
           dependency + comm_ >=
               stage_time_[stage] + Runtime(kW, stage, pending_w_[stage].front()) * scale;
  }

  // Before each backward_b / forward, runs pending W jobs that fit in the wait for its
  // dependency (on the loss stage also those that fit five times over, with fill_loss_stage), and
  // one more where the wait would exceed the largest bubble allowed.
  Status FillW(int stage, double dependency, bool fill_loss_stage, bool fill_w,
               const std::vector<double>& approved) {
    while (WFitsBefore(stage, dependency, 1.0)) IRM_RETURN_IF_ERROR(PutW(stage));
    if (stage == loss_stage_ && fill_loss_stage) {
      while (WFitsBefore(stage, dependency, 0.2)) IRM_RETURN_IF_ERROR(PutW(stage));
    }
    const double max_bubble = MaxStageBubble(stage, approved);
    if (!pending_w_[stage].empty() &&
        dependency + comm_ - stage_time_[stage] > max_bubble - bubbles_[stage] && fill_w) {
      IRM_RETURN_IF_ERROR(PutW(stage));
    }
    return Status::Ok();
  }

  Status InsertAfterBackwardStart(bool fill_w_before_f, bool fill_w_before_b, bool fill_loss_stage,
                                  const std::vector<double>& approved) {
    const int backward_b_jobs = v_ * m_;
    const int first_backward_b_stage = v_ % 2 == 0 ? 0 : p_ - 1;
    std::vector<int> order(p_);
    for (int i = 0; i < p_; ++i) order[i] = v_ % 2 ? p_ - 1 - i : i;
    int rounds = 0;
    while (StageBackwardBNumber(first_backward_b_stage) < backward_b_jobs) {
      if (++rounds > 4 * p_ * m_ * v_ + 16) return Internal("the steady phase made no progress");
      for (int stage : order) {
        for (int chunk = 0; chunk < v_; ++chunk) {
          if (!CanSchedule(kB, chunk, stage)) continue;
          const double dependency = DependencyEndTime(kB, chunk, stage, Counter(stage, kB, chunk));
          IRM_RETURN_IF_ERROR(FillW(stage, dependency, fill_loss_stage, fill_w_before_b, approved));
          IRM_RETURN_IF_ERROR(Put(kB, chunk, stage));
          break;
        }
      }
      for (int stage : order) {
        for (int chunk = v_ - 1; chunk >= 0; --chunk) {
          if (!CanSchedule(kF, chunk, stage)) continue;
          const double dependency = DependencyEndTime(kF, chunk, stage, Counter(stage, kF, chunk));
          // Paddle's forward step has no loss-stage fill.
          IRM_RETURN_IF_ERROR(FillW(stage, dependency, false, fill_w_before_f, approved));
          IRM_RETURN_IF_ERROR(Put(kF, chunk, stage));
          break;
        }
      }
    }
    for (int stage = 0; stage < p_; ++stage) {
      while (!pending_w_[stage].empty()) IRM_RETURN_IF_ERROR(PutW(stage));
    }
    return Status::Ok();
  }

  const int p_;
  const int m_;
  const int v_;
  const double forward_;
  const double backward_b_;
  const double backward_w_;
  const double loss_;
  const double comm_;
  const int loss_stage_;

  std::vector<std::vector<std::array<int, 3>>> counters_;  // [stage][chunk][Type]
  std::vector<double> end_times_;                          // -1: not scheduled
  std::vector<double> stage_time_;
  std::vector<std::deque<int>> pending_w_;  // chunks of backward_b jobs whose W is due
  std::vector<std::vector<Placed>> schedule_;
  std::vector<double> bubbles_;
};

}  // namespace

StatusOr<std::vector<std::vector<Job>>> ZbvppJobLists(const PaddleScheduleSpec& spec) {
  VScheduleCreator creator(spec.pp, spec.micro_batches, spec.vpp, spec.zbvpp_program_runtimes);
  // Paddle tries every fill option (W before B, W before F, loss-stage fill; True first) and
  // keeps the first schedule with the earliest end.
  std::optional<Result> best;
  for (bool fill_w_before_b : {true, false}) {
    for (bool fill_w_before_f : {true, false}) {
      for (bool fill_loss_stage : {true, false}) {
        IRM_ASSIGN_OR_RETURN(Result result, creator.Create(fill_w_before_f, fill_w_before_b,
                                                           fill_loss_stage, nullptr));
        if (!best || MaxOf(result.end_times) < MaxOf(best->end_times)) best = std::move(result);
      }
    }
  }
  std::vector<std::vector<Job>> lists;
  for (const std::vector<Placed>& stage : best->schedule) {
    std::vector<Job> jobs;
    for (const Placed& placed : stage) {
      jobs.push_back(
          Job{fmt::format("{}{}", TypeName(placed.type), placed.chunk), placed.micro_batch});
    }
    jobs.push_back(Job{"optimizer", 0});
    lists.push_back(std::move(jobs));
  }
  return lists;
}

}  // namespace irm::schedules
