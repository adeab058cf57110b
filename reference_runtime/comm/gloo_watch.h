// GlooWatch: the hang watchdog of a Gloo world. Unlike the thread world, no process sees every
// rank, so each rank publishes what it is doing (running, blocked in a call, finished, failed) on
// a board the whole world reads: in memory when every rank is a thread of this process, one small
// file per rank in a folder beside the rendezvous store when ranks are processes. A monitor
// thread in each process reads the board a few times a second and decides, from the calls alone,
// whether the world can still progress: a send whose receiver is not in the matching recv, a
// collective whose group is not all in it, a wait on a rank that has finished. A deadlock seen
// unchanged for a short settling time (so that states read a moment apart cannot fake one) is
// the world's hang: the report names every blocked rank's pending call in the thread world's words
// ("hang: no rank can progress: rank 0 waits in send_v2 to rank 1 (ring 0, ...); rank 1 ..."),
// it is written to the board for the other processes, and the hosted ranks' connections are
// closed so that their waits end at once with that report instead of a Gloo error. The per-call
// timeout stays as the backstop for a rank busy outside communication.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "reference_runtime/comm/communicator.h"

namespace irm::rt {

// What one rank is doing, as the board holds it.
struct GlooCallState {
  enum class Phase : uint8_t { kRunning, kBlocked, kFinished, kFailed };
  Phase phase = Phase::kRunning;
  // Bumped by every Block: two states with the same serial are the same wait.
  uint64_t serial = 0;
  CommKind kind = CommKind::kBarrier;
  int ring_id = 0;
  int peer = -1;      // send and recv: the peer's global rank
  int64_t index = 0;  // a collective: its index among the group's collectives (alike on every rank)
  std::string name{};   // the op type, else the call's kind ("send_v2", "all_reduce")
  std::string where{};  // DescribeSite of the call ("ring 0, job forward, ...")
};

// One line without tabs or newlines in `name` and `where` (which never hold them): the board's
// file format. Decode returns nullopt for anything else (a file being replaced reads whole or not
// at all, but a stranger's file must not crash the reader).
std::string EncodeCallState(const GlooCallState& state);
std::optional<GlooCallState> DecodeCallState(std::string_view text);

// The hang the states prove, or nullopt. `states` is indexed by global rank (nullopt: unknown);
// `groups` maps each ring to its global ranks. "hang: rank 1 finished while rank 0 waits in ..."
// when a blocked rank needs a rank that finished (proven whatever the others do); with
// `finished_only` false also "hang: no rank can progress: ..." when every rank is blocked or
// finished, at least one is blocked and no blocked call has its counterpart. A failed rank
// proves nothing (its closed connections end its peers' waits). Linear in ranks × group size.
std::optional<std::string> FindGlooHang(const std::vector<std::optional<GlooCallState>>& states,
                                        const std::map<int, std::vector<int>>& groups,
                                        bool finished_only);

struct GlooWatchOptions {
  // How often the monitor reads the board, and how long a deadlock must stay unchanged.
  std::chrono::milliseconds period{100};
  std::chrono::milliseconds settle{1000};
  // Ranks as processes: the board's folder (shared by every process of the world). Empty: every
  // rank is hosted by this process and the board is in memory.
  std::string folder;
};

class GlooWatch {
 public:
  GlooWatch(int world_size, std::vector<int> hosted, std::map<int, std::vector<int>> groups,
            GlooWatchOptions options);
  ~GlooWatch();
  GlooWatch(const GlooWatch&) = delete;
  GlooWatch& operator=(const GlooWatch&) = delete;

  // Starts watching one run of the hosted ranks (each one running); `abort` ends every hosted
  // rank's pending Gloo call (it closes their connections). Stop ends the monitor.
  void Start(std::function<void()> abort);
  void Stop();

  // A hosted rank enters a blocking call (the state's phase and serial are set here), leaves it,
  // or ends its run; Finish is published at once, before the rank's connections may close.
  void Block(int rank, GlooCallState state);
  void Unblock(int rank);
  void Finish(int rank, bool ok);

  // The world's hang report once decided, by this process or another.
  std::optional<std::string> Report();
  // After a hosted rank's Gloo call failed: the report, else a hang the board proves now (any
  // hang when `timed_out`, since the rank waited its whole timeout; else only a wait on a
  // finished rank, which is final). Nullopt when the board explains nothing.
  std::optional<std::string> Diagnose(bool timed_out);
  // Every rank's state, "; "-separated ("rank 0 waits in ...; rank 1 is busy outside
  // communication"), for a timeout's message.
  std::string DescribeAll();

 private:
  std::vector<std::optional<GlooCallState>> Gather();
  // Writes the hosted ranks' states that changed since last written (folder mode).
  void Publish();
  void WriteFile(const std::string& name, const std::string& text);
  void Monitor();
  // Records `report` as the world's (the first one wins) and aborts the hosted ranks.
  void Decide(const std::string& report);

  const int world_size_;
  const std::vector<int> hosted_;
  const std::map<int, std::vector<int>> groups_;
  const GlooWatchOptions options_;

  std::mutex publish_mu_;  // taken before mu_
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<GlooCallState> local_;  // by global rank; only hosted entries are used
  std::vector<std::string> written_;  // by global rank: the text last written to the board
  uint64_t next_serial_ = 1;
  std::optional<std::string> report_;
  std::function<void()> abort_;
  bool stop_ = true;
  std::thread monitor_;
};

}  // namespace irm::rt
