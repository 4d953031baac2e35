#include "distributed/strategy_factory.hpp"

#include <stdexcept>

#include "distributed/all_reduce.hpp"
#include "distributed/hogwild.hpp"
#include "distributed/ps_server.hpp"
#include "distributed/ps_worker.hpp"

namespace drun::distributed {

std::unique_ptr<Strategy> make_strategy(const StrategySpec& spec, Communicator& world,
                                        Communicator& workers, const json& experiment_optimizer) {
  switch (spec.exchange) {
    case Exchange::all_reduce:
      return std::make_unique<AllReduce>(workers, spec.bucket_bytes, spec.shared_memory,
                                         spec.hierarchical);
    case Exchange::shared:
      return std::make_unique<Hogwild>(world, workers, spec);
    default:
      return std::make_unique<PsWorker>(world, workers, spec, experiment_optimizer);
  }
}

json serve(const StrategySpec& spec, Communicator& world, std::span<Param* const> params,
           const json& experiment_optimizer, const std::string& model_dir,
           timeline::Timeline* timeline) {
  if (!spec.uses_servers())
    throw std::logic_error("distributed::serve: strategy " + spec.name + " uses no servers");
  if (spec.exchange == Exchange::shared) return serve_hogwild(world, spec, params);
  ParameterServer server(world, spec, params, experiment_optimizer, model_dir);
  server.set_timeline(timeline);
  return server.serve();
}

}  // namespace drun::distributed
