// The worker's side of the parameter-server strategies (every exchange but
// shared memory, see strategy_spec.hpp). Per step, by exchange:
//   gradients  no local update: push the gradients, take the variables the
//              servers send back. Downpour: step locally, accumulate the
//              gradients, push them every n_push steps, fetch every n_fetch.
//   deltas     step locally; every lambda steps push (w - w_fetched) / lambda
//              and take the servers' variables.
//   elastic    step locally; every tau steps push w, receive the centre c and
//              move w -= alpha (w - c).
// Staleness is what the servers report for each push.
#pragma once
#include <array>
#include <memory>
#include <optional>
#include <vector>

#include "distributed/ps_protocol.hpp"
#include "distributed/strategy.hpp"
#include "distributed/strategy_spec.hpp"

namespace drun::distributed {

class PsWorker final : public Strategy {
 public:
  // `world` holds workers and servers; `workers` the workers only.
  PsWorker(Communicator& world, Communicator& workers, const StrategySpec& spec,
           const json& experiment_optimizer);
  std::string name() const override { return spec_.name; }
  int workers() const override { return workers_.size(); }
  int worker_index() const override { return workers_.rank(); }
  bool lockstep() const override { return spec_.sync; }
  void setup(std::span<Param* const> params) override;
  void apply(optim::Optimizer& optimizer, std::span<Param* const> params) override;
  void sum(double* values, int64_t n) override { workers_.allreduce_sum(values, n); }
  json epoch_stats() override;
  void set_timeline(timeline::Timeline* tl) override {
    timeline_ = tl;
    if (timeline_) timeline_->name_track(timeline::kExchange, "exchange: parameter servers");
  }
  void finish(std::span<Param* const> params, const std::string& model_dir) override;
  void checkpoint(const std::string& model_dir, int64_t step) override;
  std::optional<int64_t> shared_global_step(std::span<Param* const> params) override;

 private:
  enum class From { values, gradients };
  void gather(std::span<Param* const> params, From from);
  void accumulate_gradients(std::span<Param* const> params);
  void scatter(std::span<Param* const> params);
  // Sends `op` (with send_ as payload for pushes) to every server; with a
  // reply, waits for it in recv_.
  void exchange(ps::Op op);

  Communicator& world_;
  Communicator& workers_;
  StrategySpec spec_;
  json experiment_optimizer_;
  ps::Roles roles_;
  std::optional<ps::Layout> layout_;
  std::unique_ptr<optim::Optimizer> local_;  // when the strategy names its own
  std::vector<Tensor> send_, recv_;          // per server
  std::vector<std::array<int64_t, ps::kHeaderLen>> send_header_, recv_header_;
  std::vector<int64_t> version_;  // per server: the version of recv_
  int64_t step_ = 0;
  double staleness_sum_ = 0, staleness_max_ = 0, pushes_ = 0;
};

}  // namespace drun::distributed
