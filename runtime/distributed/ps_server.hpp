// A parameter server: holds its shard of the variables (Layout), answers the
// workers' requests and applies their contributions as the strategy says
// (StrategySpec's exchange). It serves until every worker has said it is
// done, then writes its shard to the chief's model directory, hands the
// final values to the chief and returns: no server outlives its job.
#pragma once
#include <memory>
#include <span>
#include <vector>

#include "base/timeline.hpp"
#include "distributed/ps_protocol.hpp"
#include "distributed/strategy_spec.hpp"
#include "optim/optimizer.hpp"

namespace drun::distributed {

class ParameterServer {
 public:
  // Collective with the workers' setup (roles are exchanged). `params` is the
  // model as this rank built it from the script: names and shapes only.
  // Checkpoint shards go to and come from `model_dir`.
  ParameterServer(Communicator& world, const StrategySpec& spec, std::span<Param* const> params,
                  const json& experiment_optimizer, std::string model_dir);
  // Serves until every worker is done; returns what it measured.
  json serve();
  // Where waits, pushes received, applies and replies are recorded (null: nowhere).
  void set_timeline(timeline::Timeline* tl) { timeline_ = tl; }

 private:
  void handle(int source, const int64_t* header);
  void receive_payload(int source);
  void apply_gradient(const Tensor& gradient, int64_t staleness);
  // Sync exchanges: adds a contribution to the round; completes it when full.
  void contribute(int source, int64_t version_seen);
  void complete_round_if_full();
  void reply(int dest, const Tensor& values, int64_t staleness);
  void finish();
  void write_shard(int64_t step);
  void load_shard(int64_t step);
  int needed() const;
  float alpha() const;

  Communicator& world_;
  StrategySpec spec_;
  ps::Roles roles_;
  int index_ = 0;  // this server's index
  std::vector<std::string> names_;
  std::vector<Shape> shapes_;
  std::vector<Param> shard_;  // views into values_ and gradient_
  std::vector<Param*> shard_ptrs_;
  Tensor values_, gradient_, incoming_, round_sum_;
  std::unique_ptr<optim::Optimizer> optimizer_;
  float base_lr_ = 1.f;
  float lr_scale_ = 1.f;
  int64_t version_ = 0;
  int active_ = 0;              // workers not yet done
  int chief_ = -1;              // world rank of the chief once it is done
  std::string model_dir_;       // the chief's, sent when it is done
  std::string checkpoint_dir_;  // this rank's model_dir, for checkpoint shards
  std::vector<int> round_;      // world ranks whose contribution is in round_sum_
  timeline::Timeline* timeline_ = nullptr;
  int64_t staleness_sum_ = 0, staleness_max_ = 0, contributions_ = 0, dropped_ = 0;
};

}  // namespace drun::distributed
