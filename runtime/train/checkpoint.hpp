// Checkpoints: model_dir/ckpt-<step>.h5 holds the model's variables
// ("model/<variable>"), the optimizer's slots ("optimizer/<variable>/<slot>")
// and, in the root attribute, what is not a tensor: global step, epoch and
// batch within it (the data pipeline's position), optimizer iterations, the
// layers' random generators and the callbacks' state (its tensors as
// "callbacks/<index>/<name>"). A file is written atomically (temporary file,
// fsync, rename) before the index `checkpoint` (TensorFlow's text format)
// names it, so a crash leaves either the old or the new checkpoint, never half
// of one. Parameter-server strategies add ckpt-<step>.ps-<i>.h5 shards, which
// go with their checkpoint when it is pruned.
#pragma once
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nn/model.hpp"
#include "optim/optimizer.hpp"

namespace drun::train {

struct TrainingState {
  int64_t global_step = 0;
  int64_t epoch = 0;  // the epoch the next step belongs to
  int64_t batch = 0;  // index within that epoch of the next batch
  // The workers that wrote it (0: not recorded) and where in the epoch's
  // permutation their sharding began (0 but in an epoch continued at another
  // worker count): with `batch` and the batch size, the examples of the epoch
  // all workers have consumed (train/reshard.hpp).
  int workers = 0;
  int64_t epoch_offset = 0;
  // The fit's callbacks' state (train/callbacks/callback_runner), null
  // without callbacks, and its tensors (EarlyStopping's best weights).
  json callbacks;
  std::vector<std::pair<std::string, Tensor>> callback_tensors;
};

class Checkpoints {
 public:
  Checkpoints(std::string model_dir, int keep_max);
  const std::string& model_dir() const { return dir_; }
  std::string path_of(int64_t step) const;
  // Steps of the ckpt-<step>.h5 files in the directory, ascending.
  std::vector<int64_t> steps() const;

  // Writes ckpt-<global step>.h5, then the index; removes the oldest beyond keep_max.
  void save(nn::Model& model, optim::Optimizer& optimizer, const TrainingState& state);
  // Loads the newest readable checkpoint into model and optimizer. A file that
  // cannot be read (truncated, corrupt) is skipped with a call to `warn` naming
  // it. A checkpoint of another model is a UsageError. nullopt: none.
  std::optional<TrainingState> restore(nn::Model& model, optim::Optimizer& optimizer,
                                       const std::function<void(const std::string&)>& warn);
  // Loads checkpoint `step` into model and optimizer; throws UsageError
  // naming the file when it cannot be read.
  TrainingState load(int64_t step, nn::Model& model, optim::Optimizer& optimizer);

 private:
  void write_index(const std::vector<int64_t>& steps) const;
  std::string dir_;
  int keep_max_;
};

}  // namespace drun::train
