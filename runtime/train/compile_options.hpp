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
  std::vector<std::string> metrics;
};

// compile's options {loss, optimizer, metrics}: loss required; UsageError for
// a missing loss or an unknown key. The loss, optimizer and metrics themselves
// are checked where they are built.
CompileOptions parse_compile_options(const json& options);

struct Evaluation {
  double loss = 0.0;
  MetricValues metrics;
  int64_t examples = 0;
};

}  // namespace drun::train
