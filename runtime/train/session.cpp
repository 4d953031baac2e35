#include "train/session.hpp"

namespace drun::train {

Session::Session(std::shared_ptr<nn::Model> m, const CompileOptions& c, const kernels::Exec& exec)
    : model(std::move(m)), compiled(c), trainer(*model, compiled, exec) {}

json Session::training_config() {
  return train::training_config(compiled, trainer.optimizer());
}

json training_config(const CompileOptions& compiled, const optim::Optimizer& optimizer) {
  json metrics = json::array();
  for (const auto& m : compiled.metrics) metrics.push_back(m);
  return {{"loss", compiled.loss},
          {"metrics", metrics},
          {"weighted_metrics", nullptr},
          {"loss_weights", nullptr},
          {"optimizer_config", optimizer.config()}};
}

}  // namespace drun::train
