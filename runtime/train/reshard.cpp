#include "train/reshard.hpp"

#include <algorithm>

namespace drun::train {

EpochResume epoch_resume(const TrainingState& at, int workers, int64_t batch_size,
                         int64_t pass_size) {
  if (at.workers <= 0 || (at.workers == workers && at.epoch_offset == 0))
    return {at.epoch, at.batch, 0, false};
  // Each worker's shard of what was left of the pass when its sharding began
  // (even shards: the few left over are no worker's).
  const int64_t shard = std::max<int64_t>(0, pass_size - at.epoch_offset) / at.workers;
  // The last batch of a shard may be short: a worker never consumed more than its shard.
  const int64_t consumed = std::min(at.batch * batch_size, shard);
  if (consumed >= shard) return {at.epoch + 1, 0, 0, false};
  return {at.epoch, 0, at.epoch_offset + consumed * at.workers, true};
}

}  // namespace drun::train
