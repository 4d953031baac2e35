// What made the run in a model_dir: its worker count, strategy and batch
// size, kept in model_dir/setup.json beside the checkpoints. A rerun by
// another setup is refused in one line that names the difference and the flag
// to use, instead of resuming it (or finding it done) silently. The model
// itself is compared by the checkpoint when it is restored.
#pragma once
#include <cstdint>
#include <string>

#include "base/options.hpp"

namespace drun::train {

struct RunSetup {
  int workers = 1;
  std::string strategy;    // compared only where a run has more than one worker
  int64_t batch_size = 0;  // 0: not known yet (the launcher's check), not compared

  json to_json() const;
};

// Writes dir/setup.json (the chief, when a run starts afresh in dir).
void record_setup(const std::string& dir, const RunSetup& setup);

// Throws UsageError naming what differs from dir/setup.json and the flag to
// use; a folder without one (made before drun recorded it) passes. The
// launcher checks before it starts any rank, so that the job ends in one
// line, not in one line a rank.
void check_setup(const std::string& dir, const RunSetup& setup);

}  // namespace drun::train
