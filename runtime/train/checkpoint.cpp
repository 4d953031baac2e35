#include "train/checkpoint.hpp"

#include <algorithm>
#include <filesystem>
#include <regex>

#include "io/atomic_file.hpp"
#include "io/h5_tensors.hpp"
#include "train/trainer.hpp"

namespace drun::train {

namespace fs = std::filesystem;

Checkpoints::Checkpoints(std::string model_dir, int keep_max)
    : dir_(std::move(model_dir)), keep_max_(keep_max) {
  if (keep_max_ < 1)
    throw UsageError("keep_checkpoint_max must be at least 1, got " + std::to_string(keep_max_));
}

std::string Checkpoints::path_of(int64_t step) const {
  return dir_ + "/ckpt-" + std::to_string(step) + ".h5";
}

std::vector<int64_t> Checkpoints::steps() const {
  std::vector<int64_t> steps;
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) return steps;
  static const std::regex name(R"(ckpt-(\d+)\.h5)");
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    std::smatch m;
    const std::string file = entry.path().filename().string();
    if (std::regex_match(file, m, name)) steps.push_back(std::stoll(m[1]));
  }
  std::sort(steps.begin(), steps.end());
  return steps;
}

void Checkpoints::save(nn::Model& model, optim::Optimizer& optimizer, const TrainingState& state) {
  fs::create_directories(dir_);
  std::vector<std::pair<std::string, Tensor>> tensors;
  for (const Param* p : model.params()) tensors.emplace_back("model/" + p->name, p->value);
  for (const auto& [name, t] : optimizer.state()) tensors.emplace_back("optimizer/" + name, *t);
  for (const auto& [name, t] : optimizer.accumulators())
    tensors.emplace_back("optimizer/" + name, *t);
  for (const auto& [name, t] : state.callback_tensors) tensors.emplace_back("callbacks/" + name, t);
  json rngs = json::object();
  for (const auto& node : model.nodes())
    if (Rng* r = node.layer->rng()) rngs[node.layer->name()] = r->state();
  json attributes = {{"global_step", state.global_step},
                     {"epoch", state.epoch},
                     {"batch", state.batch},
                     {"optimizer_iterations", optimizer.iterations()},
                     {"optimizer_built", optimizer.built()},
                     {"rngs", rngs}};
  if (state.workers > 0) attributes["workers"] = state.workers;
  if (state.epoch_offset != 0) attributes["epoch_offset"] = state.epoch_offset;
  if (!state.callbacks.is_null()) attributes["callbacks"] = state.callbacks;
  if (const optim::DynamicLossScale* s = optimizer.dynamic_loss_scale()) {
    attributes["loss_scale"] = s->scale();
    attributes["loss_scale_counter"] = s->counter();
  }
  // A failed write (a full disk) throws here: the index and the older
  // checkpoints stay as they were, and the run stops (docs/formats.md).
  io::write_tensors(path_of(state.global_step), tensors, attributes);

  // The index names the kept checkpoints before the oldest are removed, so
  // that it never names a removed file, even when writing it fails.
  auto all = steps();
  const size_t drop = all.size() > static_cast<size_t>(keep_max_) ? all.size() - keep_max_ : 0;
  const std::vector<int64_t> pruned(all.begin(), all.begin() + static_cast<ptrdiff_t>(drop));
  all.erase(all.begin(), all.begin() + static_cast<ptrdiff_t>(drop));
  write_index(all);
  for (int64_t step : pruned) {
    const std::string prefix = "ckpt-" + std::to_string(step) + ".";
    for (const auto& entry : fs::directory_iterator(dir_))
      if (entry.path().filename().string().rfind(prefix, 0) == 0) fs::remove(entry.path());
  }
}

void Checkpoints::write_index(const std::vector<int64_t>& steps) const {
  if (steps.empty()) return;
  std::string text = "model_checkpoint_path: \"ckpt-" + std::to_string(steps.back()) + ".h5\"\n";
  for (int64_t s : steps)
    text += "all_model_checkpoint_paths: \"ckpt-" + std::to_string(s) + ".h5\"\n";
  io::write_text_atomically(dir_ + "/checkpoint", text);
}

namespace {

io::TensorFile read_checkpoint(const std::string& path) {
  io::TensorFile file = io::read_tensor_file(path);
  if (!file.attributes.is_object() || !file.attributes.contains("global_step"))
    throw UsageError(path + " has no training state: not a drun checkpoint");
  return file;
}

TrainingState apply(const io::TensorFile& file, const std::string& path, nn::Model& model,
                    optim::Optimizer& optimizer) {
  const auto take = [&](const std::string& name, Tensor& into) {
    const auto found = file.tensors.find(name);
    if (found == file.tensors.end())
      throw UsageError("checkpoint " + path + " lacks '" + name +
                       "': it is not a checkpoint of this model (move it away or give "
                       "--model-dir DIR for a new run)");
    if (found->second.numel() != into.numel())
      throw UsageError("checkpoint " + path + ": '" + name + "' has shape " +
                       found->second.shape().str() + ", the model's is " + into.shape().str() +
                       ": a run of another model (give --model-dir DIR for a new run)");
    into.copy_from(found->second.reshaped(into.shape()));
  };
  const auto params = model.params();
  for (Param* p : params) take("model/" + p->name, p->value);
  const json& a = file.attributes;
  if (a.value("optimizer_built", false)) {
    optimizer.build(params);
    for (auto& [name, t] : optimizer.state()) take("optimizer/" + name, *t);
    // A checkpoint of a run without accumulation: the cycle starts empty.
    for (auto& [name, t] : optimizer.accumulators())
      if (file.tensors.contains("optimizer/" + name)) take("optimizer/" + name, *t);
  }
  optimizer.set_iterations(a.value("optimizer_iterations", int64_t{0}));
  // A run that starts loss scaling from a checkpoint without it starts at the initial scale.
  if (optim::DynamicLossScale* s = optimizer.dynamic_loss_scale(); s && a.contains("loss_scale")) {
    try {
      s->restore(a["loss_scale"].get<float>(), a.value("loss_scale_counter", int64_t{0}));
    } catch (const std::exception& e) {
      throw UsageError("checkpoint " + path + ": " + e.what());
    }
  }
  const json rngs = a.value("rngs", json::object());
  for (const auto& node : model.nodes())
    if (Rng* r = node.layer->rng(); r && rngs.contains(node.layer->name()))
      r->set_state(rngs[node.layer->name()].get<std::string>());
  TrainingState state{a["global_step"].get<int64_t>(), a.value("epoch", int64_t{0}),
                      a.value("batch", int64_t{0})};
  state.workers = a.value("workers", 0);
  state.epoch_offset = a.value("epoch_offset", int64_t{0});
  if (a.contains("callbacks")) state.callbacks = a["callbacks"];
  const std::string prefix = "callbacks/";
  for (const auto& [name, t] : file.tensors)
    if (name.rfind(prefix, 0) == 0)
      state.callback_tensors.emplace_back(name.substr(prefix.size()), t);
  return state;
}

}  // namespace

TrainingState Checkpoints::load(int64_t step, nn::Model& model, optim::Optimizer& optimizer) {
  const std::string path = path_of(step);
  return apply(read_checkpoint(path), path, model, optimizer);
}

std::optional<TrainingState> Checkpoints::restore(
    nn::Model& model, optim::Optimizer& optimizer,
    const std::function<void(const std::string&)>& warn) {
  auto all = steps();
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    // An unreadable file (truncated, corrupt) is skipped; another model's
    // checkpoint is an error (from apply).
    io::TensorFile file;
    try {
      file = read_checkpoint(path_of(*it));
    } catch (const UsageError& e) {
      warn("skipping checkpoint " + path_of(*it) + ", which cannot be read (" + e.what() +
           "); trying the one before");
      continue;
    }
    return apply(file, path_of(*it), model, optimizer);
  }
  return std::nullopt;
}

}  // namespace drun::train
