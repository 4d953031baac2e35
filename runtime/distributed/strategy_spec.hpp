// A strategy as the experiment script describes it, {"name": ..., "options":
// {...}}, parsed and checked once. Workers, parameter servers and the launcher
// all read this one description, so they agree on what each side does.
//
// Every strategy of the parameter-server family is one of four exchanges:
//   gradients  workers push gradients, the servers apply an optimizer
//              (ParameterServer async/sync, DynSGD, SyncSGD, Downpour, DownpourEasy);
//   deltas     workers take local steps and push the normalised change of
//              their weights (AGN, SAGN);
//   elastic    workers take local steps and are pulled towards a centre
//              variable that the servers hold (EASGD, AEASGD, AEAMSGD);
//   shared     workers update one copy in node-shared memory (Hogwild).
// docs/strategies.md gives each update rule and its paper.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "base/options.hpp"
#include "base/registry.hpp"

namespace drun::distributed {

enum class Exchange { all_reduce, gradients, deltas, elastic, shared };

// The strategy of a script that names none (and of a single process).
inline constexpr const char* kDefaultStrategy = "AllReduce";

struct StrategySpec {
  std::string name = kDefaultStrategy;  // aliases resolved (MultiWorkerMirrored is AllReduce)
  json options = json::object();        // as the script gave them, for messages
  Exchange exchange = Exchange::all_reduce;
  bool sync = false;              // servers combine one contribution of each worker per round
  bool local_update = false;      // workers apply an optimizer to their own copy every step
  int64_t push_every = 1;         // n_push, lambda, tau: steps between pushes
  int64_t fetch_every = 1;        // n_fetch: steps between fetches
  int replicas_to_aggregate = 0;  // sync gradients: 0 means every worker, less the backups
  int backup_workers = 0;
  double alpha = -1;                   // elastic moving rate; < 0: 0.9 / workers (beta = 0.9)
  bool staleness_lr = false;           // DynSGD: lr / staleness
  std::vector<double> learning_rates;  // SyncSGD: per worker
  json server_optimizer;               // null: the experiment's optimizer
  json worker_optimizer;               // null: the experiment's optimizer
  double worker_momentum = -1;         // >= 0: SGD with Nesterov momentum locally (AEAMSGD)
  std::string variable_placement = "greedy";
  bool scale_lr = false;  // multiply the lr of the optimizer that applies the mean by workers
  int64_t bucket_bytes = int64_t{4} << 20;
  bool shared_memory = true;  // AllReduce on one node: sum through node-shared memory
  bool hierarchical = true;   // AllReduce across nodes: within each node first (shared memory)

  bool uses_servers() const { return exchange != Exchange::all_reduce; }
};

// Throws UsageError naming the strategy and the bad option.
StrategySpec parse_strategy(const json& description);

// A strategy's registry entry (distributed/strategy_list.hpp).
struct StrategyInfo {
  struct Preset {
    std::string name;  // the script's --strategy NAME, snake_case
    json options;      // what NAME fixes, e.g. {"mode": "sync"}
  };
  Described about;  // names: the class first (AllReduce), then aliases
  std::vector<Preset> presets;
  // Fills `s` (its name already set) from the checked options.
  std::function<void(Options&, StrategySpec& s)> configure;
};

#define DRUN_STRATEGY(id) const StrategyInfo& id##_strategy();
#include "distributed/strategy_list.hpp"
#undef DRUN_STRATEGY

const std::vector<const StrategyInfo*>& strategy_registry();
// Each entry's description, with its presets {name, options, averaging}:
// `averaging` where the preset applies the mean of all workers' gradients
// (AllReduce, synchronous servers), for which the linear scaling rule holds.
json describe_strategies();

// The options several strategies share.
Schema::Entry placement_option();  // how variables spread over the servers
Schema::Entry scale_lr_option();   // the linear scaling rule
void read_placement(Options& o, StrategySpec& s);
// A count option of at least 1.
int64_t read_count(Options& o, const std::string& key, const StrategySpec& s);

}  // namespace drun::distributed

namespace drun::distributed {
// The elastic moving rate: the given alpha, else beta / workers with beta = 0.9
// (Zhang, Choromanska and LeCun keep beta = p * alpha fixed).
float elastic_alpha(const StrategySpec& spec, int workers);
}  // namespace drun::distributed
