// The two sides of a strategy built from its description (StrategySpec): the
// Strategy a worker trains with, and the serving loop of a parameter-server
// rank. The only place that maps an exchange to the classes implementing it.
#pragma once
#include <memory>
#include <span>
#include <string>

#include "distributed/comm.hpp"
#include "distributed/strategy.hpp"
#include "distributed/strategy_spec.hpp"

namespace drun::distributed {

// A worker's side. `world` holds workers and servers, `workers` the workers
// only; `experiment_optimizer` is the script's optimizer (servers and local
// updates use it where the strategy names none of its own).
std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, Communicator& world,
                                        Communicator& workers, const json& experiment_optimizer);

// A parameter server's side, for a strategy that uses servers: serves the
// workers until every one is done; returns what it measured. Records on
// `timeline` where it is not null.
json serve(const StrategySpec& spec, Communicator& world, std::span<Param* const> params,
           const json& experiment_optimizer, const std::string& model_dir,
           timeline::Timeline* timeline = nullptr);

}  // namespace drun::distributed
