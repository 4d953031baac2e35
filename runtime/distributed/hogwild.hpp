// Hogwild (Niu, Recht, Re and Wright 2011): the workers of a node update one
// shared copy of the variables without locks. The node's parameter server
// owns the copy, in memory shared through an MPI window; each worker's
// variables are views into it, so forward reads it and the optimizer writes
// it directly (optimizer slots such as momentum stay per worker). When all
// workers are done the server writes the copy to the model directory.
// One node only: across nodes there is no shared memory to update.
#pragma once
#include <memory>
#include <optional>

#include "distributed/comm.hpp"
#include "distributed/ps_protocol.hpp"
#include "distributed/strategy.hpp"
#include "distributed/strategy_spec.hpp"

namespace drun::distributed {

class Hogwild final : public Strategy {
 public:
  Hogwild(Communicator& world, Communicator& workers, const StrategySpec& spec);
  ~Hogwild() override;
  std::string name() const override { return "Hogwild"; }
  int workers() const override { return workers_.size(); }
  int worker_index() const override { return workers_.rank(); }
  void setup(std::span<Param* const> params) override;
  void apply(optim::Optimizer& optimizer, std::span<Param* const> params) override {
    optimizer.apply(params);
  }
  void sum(double* values, int64_t n) override { workers_.allreduce_sum(values, n); }
  void finish(std::span<Param* const> params, const std::string& model_dir) override;

 private:
  Communicator& world_;
  Communicator& workers_;
  StrategySpec spec_;
  ps::Roles roles_;
  std::unique_ptr<Communicator> node_;
  std::optional<SharedWindow> window_;
};

// The parameter server's side: owns the shared copy until every worker is done.
json serve_hogwild(Communicator& world, const StrategySpec& spec, std::span<Param* const> params);

}  // namespace drun::distributed
