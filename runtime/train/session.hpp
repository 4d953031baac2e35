// Session: a model compiled for training (a script's compiled model, or its
// Estimator): the model, its Trainer, and the strategy the fits of a
// multi-worker job share. A strategy with parameter servers lasts one fit
// (the servers return when it ends); AllReduce and Hogwild stay for the next.
#pragma once
#include <memory>

#include "distributed/strategy.hpp"
#include "nn/model.hpp"
#include "train/compile_options.hpp"
#include "train/trainer.hpp"

namespace drun::train {

// Keras' training_config of a model file: loss, metrics and the optimizer's config.
json training_config(const CompileOptions& compiled, const optim::Optimizer& optimizer);

struct Session {
  Session(std::shared_ptr<nn::Model> model, const CompileOptions& compiled,
          const kernels::Exec& exec);
  // Keras' training_config of a model file: loss, metrics and the optimizer's config.
  json training_config();

  std::shared_ptr<nn::Model> model;  // alive as long as its trainer
  CompileOptions compiled;
  Trainer trainer;
  std::unique_ptr<distributed::Strategy> strategy;  // the trainer's, once a fit has joined the job
};

}  // namespace drun::train
