// drun's public C++ API (libdrun): a model, built from Keras layers or loaded
// from a Keras HDF5 file, compiled with an optimizer and a loss, trained on a
// Dataset under a distribution strategy, evaluated, used to predict, and
// saved as Keras HDF5 (keras.models.load_model reads it).
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "drun/config.hpp"
#include "drun/dataset.hpp"
#include "drun/runtime.hpp"

namespace drun {

// A layer by its Keras class name and config ("Dense", {{"units", 10}}).
struct Layer {
  std::string class_name;
  Config config = {};
};
// An optimizer ("SGD", "Adam", ...) or a loss ("SparseCategoricalCrossentropy", ...).
struct Optimizer {
  std::string class_name = "SGD";
  Config config = {};
};
struct Loss {
  std::string class_name;
  Config config = {};
};
// A distribution strategy by drun's name (AllReduce, ParameterServer, EASGD,
// ..., docs/strategies.md) and its options.
struct Strategy {
  std::string name = "AllReduce";
  Config options = {};
};

struct FitOptions {
  int64_t epochs = 1;
  int64_t steps = 0;      // > 0: at most this many steps in all
  std::string model_dir;  // "": no checkpoints or summaries
  Strategy strategy = {};
  Config more = {};  // any other option of fit (save_checkpoints_steps, ...)
};

// Loss and metrics by name ("loss", "accuracy", ...) and the examples seen.
struct Evaluation {
  std::map<std::string, double> metrics;
  int64_t examples = 0;
};

struct FitResult {
  int64_t global_step = 0;
  Evaluation train;          // the last epoch's
  Evaluation eval;           // the last evaluation's (empty without eval data)
  std::string summary_json;  // what summary.json holds
};

// Model outputs, row-major, one row per example.
struct Prediction {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

class Model {
 public:
  // The layers in order; the first gives input_shape.
  static Model sequential(const Runtime& runtime, const std::vector<Layer>& layers,
                          uint64_t seed = 0, const std::string& name = "sequential");
  // A Keras HDF5 model file (Keras' model.save('m.h5') or Model::save).
  static Model load(const Runtime& runtime, const std::string& path);
  ~Model();
  Model(Model&&) noexcept;
  Model& operator=(Model&&) noexcept;

  void compile(const Optimizer& optimizer, const Loss& loss,
               const std::vector<std::string>& metrics = {});
  // Trains on `train` (batched: its batch size) and evaluates on `eval` after
  // each epoch when given. With a model_dir holding checkpoints it resumes.
  FitResult fit(const Dataset& train, const FitOptions& options = {},
                const Dataset* eval = nullptr);
  Evaluation evaluate(const Dataset& data);
  // Works on an uncompiled model too (a loaded one, say).
  Prediction predict(const Dataset& data);

  // Keras HDF5: architecture, weights and, once compiled, the training config.
  void save(const std::string& path) const;
  std::string summary() const;
  int64_t param_count() const;

 private:
  struct Impl;
  explicit Model(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace drun
