// The stall inspector (drun --stall-timeout): names a rank that stopped
// taking part (SIGSTOP, a frozen node) instead of letting the job hang.
//
// Every rank's inspector thread writes a heartbeat file into a directory all
// ranks see (DRUN_STALL_DIR, under the model_dir) once a second: rank, host,
// role, step, and the exchange it waits in. The thread keeps beating while
// the rank evaluates or writes a checkpoint, so only a process that stopped
// altogether falls silent. A rank that has itself waited in an exchange
// longer than the timeout reads the others' heartbeats; any silent for longer
// than the timeout is named, and the job ends (the starter ends every rank
// once one exits non-zero; with --max-restarts the launcher restarts it).
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "base/options.hpp"

namespace drun::distributed {

struct Heartbeat {
  int rank = 0;
  std::string host;
  std::string role;  // chief, worker, ps
  int task_index = 0;
  int64_t step = 0;
  std::string waiting;  // the exchange waited in; "" when computing
  double waiting_since = 0;
  double time = 0;  // when written, seconds since the epoch
};

json to_json(const Heartbeat& h);
Heartbeat heartbeat_from_json(const json& j);

// The ranks that stalled, as `me` judges at time `now`: none unless `me` has
// waited in an exchange for longer than `timeout`; then those of `others`
// not heard from for longer than `timeout`, oldest first.
std::vector<Heartbeat> stalled_ranks(const Heartbeat& me, const std::vector<Heartbeat>& others,
                                     double now, double timeout);

// "drun: stall: rank 1 (worker 0) on host nodeb has not been heard from for
// 12 s (last seen at step 340, computing); rank 0 has waited in MPI_Waitall
// for 11 s. Ending the job (--stall-timeout 10)." The launcher restarts
// (--max-restarts) on this line: launch/rank_death.hpp reads it.
std::string stall_message(const Heartbeat& stalled, const Heartbeat& me, double now,
                          double timeout);

class StallInspector {
 public:
  // Starts the thread; `me` holds this rank's fixed fields.
  StallInspector(std::string dir, double timeout, Heartbeat me);
  // Stops the thread and removes this rank's heartbeat file.
  ~StallInspector();
  StallInspector(const StallInspector&) = delete;
  StallInspector& operator=(const StallInspector&) = delete;

 private:
  void run();
  Heartbeat current() const;
  std::vector<Heartbeat> read_others() const;
  std::string dir_, path_;
  double timeout_;
  Heartbeat me_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace drun::distributed
