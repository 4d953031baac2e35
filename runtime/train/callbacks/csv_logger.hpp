// CSVLogger (keras.callbacks.CSVLogger): one row per epoch, "epoch" then
// the logs' names sorted (and their val_ names where the logs have none),
// values as Python writes floats; with append (or on resume) rows go after
// the file's, the header only into an empty file. The chief writes it.
#pragma once
#include <fstream>
#include <optional>

#include "train/callbacks/callback.hpp"

namespace drun::train {

class CSVLogger final : public Callback {
 public:
  explicit CSVLogger(Options& o);
  std::string name() const override { return "CSVLogger"; }
  void train_begin(CallbackControl& c) override;
  void epoch_end(int64_t epoch, const Logs& logs, CallbackControl& c) override;
  void train_end(CallbackControl& c) override;
  json state() const override { return {{"resumed", true}}; }
  void set_state(const json& state) override { resumed_ = state.value("resumed", false); }

 private:
  std::string filename_, separator_;
  bool append_, resumed_ = false;
  bool header_ = true;
  std::ofstream out_;
  std::optional<std::vector<std::string>> keys_;
};

}  // namespace drun::train
