// ModelCheckpoint (keras.callbacks.ModelCheckpoint): after each epoch writes
// the model (or its weights) as a Keras .h5 at `filepath`, formatted as
// Python's str.format with epoch (from 1) and the logs' values, e.g.
// "ckpt-{epoch:02d}-{val_loss:.4f}.h5"; with save_best_only only when the
// monitored value improves on the best so far. The file is written
// atomically by the Keras export (runtime/keras), on the chief.
#pragma once
#include <optional>

#include "train/callbacks/callback.hpp"
#include "train/callbacks/monitor.hpp"

namespace drun::train {

class ModelCheckpoint final : public Callback {
 public:
  explicit ModelCheckpoint(Options& o);
  std::string name() const override { return "ModelCheckpoint"; }
  void epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) override;
  json state() const override;
  void set_state(const json& state) override;
  // filepath formatted for this epoch; UsageError naming a field the logs lack.
  std::string path_for(int64_t epoch, const Logs& logs) const;

 private:
  std::string filepath_;
  Monitor monitor_;
  int64_t verbose_;
  bool save_best_only_, save_weights_only_;
  std::optional<double> best_;
};

}  // namespace drun::train
