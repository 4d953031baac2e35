// What compile() fixes for a model (loss, optimizer, metrics) and what an
// evaluation returns; shared by the trainer and its background evaluation.
#pragma once
#include <string>
#include <vector>

#include "base/options.hpp"
#include "train/progress.hpp"

namespace drun::train {

struct CompileOptions {
  json loss = "sparse_categorical_crossentropy";
  json optimizer = {{"class_name", "SGD"}, {"config", json::object()}};
  // Names or {class_name, config} descriptions (nn::make_metrics).
  json metrics = json::array();
  // Keras' dtype policy: "float32", "mixed_float16" or "mixed_bfloat16"
  // (nn/layer.hpp set_compute_dtype; the trainer refuses the mixed ones on
  // the CPU and gives mixed_float16 a loss scale).
  std::string precision = "float32";
  // On a GPU, whether steps run as CUDA graphs where they can (train/step_graph.hpp).
  bool cuda_graphs = true;
};

// compile's options, with CompileOptions' defaults: loss, optimizer, metrics,
// precision and cuda_graphs.
const Schema& compile_schema();

// compile's options checked against compile_schema(): loss required;
// UsageError for a missing loss, an unknown key or precision. The loss, optimizer and metrics
// themselves are checked where they are built.
CompileOptions parse_compile_options(const json& options);

struct Evaluation {
  double loss = 0.0;
  MetricValues metrics;
  int64_t examples = 0;
  // The loss is a sparse cross-entropy (in nats) over text (a data set with a
  // vocabulary, data.text): results also give bits_per_char = loss / ln 2.
  bool per_character = false;
  // {loss, examples, <metric>..., bits_per_char where per_character}: what
  // evaluate returns and summary.json's eval holds.
  json to_json() const;
};

}  // namespace drun::train
