// FitTimeline: the timeline of one fit on every rank of a job, and its one
// trace file. It starts on every rank at once (a barrier, after which each
// rank takes its own clock's origin: ranks of one node then agree to the
// barrier's skew, microseconds; see docs/timeline.md) and, when the fit
// ends, rank 0 gathers every rank's events and writes the Chrome trace.
#pragma once
#include <string>

#include "base/timeline.hpp"
#include "train/context.hpp"

namespace drun::train {

class FitTimeline {
 public:
  // Collective over ctx.comm when there is one.
  FitTimeline(const Context& ctx, std::string path);
  timeline::Timeline* get() { return &timeline_; }
  // Collective: every rank's events go to rank 0, which writes `path`.
  void write();

 private:
  const Context& ctx_;
  std::string path_;
  timeline::Timeline timeline_;
};

}  // namespace drun::train
