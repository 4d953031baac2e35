// A fit small enough for every step to be checked: a Dense(2) on 8 examples
// of 3 features in batches of 2 (4 steps an epoch), mse, evaluated in batches
// of 4, progress silent. `optimizer` as compile takes it (default: compile's).
#pragma once
#include <memory>

#include "data/arrays.hpp"
#include "train/trainer.hpp"

namespace drun::testing {

inline train::CompileOptions toy_compile_options(const json& optimizer) {
  train::CompileOptions c;
  c.loss = "mse";
  if (!optimizer.is_null()) c.optimizer = optimizer;
  return c;
}

inline data::PipelineSpec toy_batches(int64_t size) {
  data::PipelineSpec s;
  s.batch_size = size;
  return s;
}

struct ToyFit {
  explicit ToyFit(const json& optimizer = nullptr)
      : trainer{model, toy_compile_options(optimizer), kernels::Exec{Device::cpu, 1}} {}
  nn::Model model{json::parse(R"({"name": "sequential", "layers": [
    {"class_name": "Dense", "config": {"units": 2, "input_shape": [3]}}]})"),
                  1};
  train::Trainer trainer;
  std::shared_ptr<const data::Dataset> ds = std::make_shared<const data::Dataset>(
      data::dataset_from_arrays(json::parse("[[1,2,3],[4,5,6],[7,8,9],[1,0,1],[0,1,0],[2,2,2],"
                                            "[3,1,2],[0,0,1]]"),
                                json::parse("[[1,0],[0,1],[1,0],[0,1],[1,0],[0,1],[1,0],[0,1]]")));
  data::Pipeline train{ds, toy_batches(2)};
  data::Pipeline eval{ds, toy_batches(4)};
  train::Progress progress{false, true};
};

}  // namespace drun::testing
