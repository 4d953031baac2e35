// The small CNN and its compile settings that the multi-rank equivalence
// tests train (12x12 inputs, so 20 steps take milliseconds).
#pragma once
#include "base/options.hpp"
#include "train/compile_options.hpp"

namespace drun::testing {

inline json small_cnn() {
  return json::parse(R"({"layers": [
    {"class_name": "Conv2D", "config": {"filters": 8, "kernel_size": 3, "activation": "relu",
                                        "input_shape": [12, 12, 1]}},
    {"class_name": "MaxPooling2D", "config": {"pool_size": 2}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 16, "activation": "relu"}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
}

inline train::CompileOptions compiled() {
  train::CompileOptions c;
  c.loss = json::parse(
      R"({"class_name": "SparseCategoricalCrossentropy", "config": {"from_logits": true}})");
  c.optimizer =
      json::parse(R"({"class_name": "SGD", "config": {"learning_rate": 0.05, "momentum": 0.9}})");
  return c;
}

}  // namespace drun::testing
