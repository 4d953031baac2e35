// The seed CNN as a model description, shared by the tests that build it:
// Conv2D 32 3x3 relu, MaxPool 2, Flatten, Dense 64 relu, Dense 10 (logits).
#pragma once
#include "base/options.hpp"

namespace drun::testing {

inline json seed_cnn_spec() {
  return json::parse(R"({"name": "sequential", "layers": [
    {"class_name": "Conv2D", "config": {"filters": 32, "kernel_size": 3, "activation": "relu",
                                        "input_shape": [28, 28, 1]}},
    {"class_name": "MaxPooling2D", "config": {"pool_size": 2}},
    {"class_name": "Flatten", "config": {}},
    {"class_name": "Dense", "config": {"units": 64, "activation": "relu"}},
    {"class_name": "Dense", "config": {"units": 10}}]})");
}

}  // namespace drun::testing
