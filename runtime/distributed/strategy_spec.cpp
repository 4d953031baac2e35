#include "distributed/strategy_spec.hpp"

namespace drun::distributed {

const char* strategy_names() {
  return "AllReduce (MultiWorkerMirrored), ParameterServer, Downpour, DownpourEasy, Hogwild, AGN, "
         "SAGN, EASGD, AEASGD, AEAMSGD, DynSGD, SyncSGD";
}

namespace {

void check_positive(int64_t v, const std::string& what) {
  if (v < 1) throw UsageError(what + " must be at least 1, got " + std::to_string(v));
}

}  // namespace

StrategySpec parse_strategy(const json& description) {
  StrategySpec s;
  s.name = description.value("name", std::string(kDefaultStrategy));
  if (s.name == "MultiWorkerMirrored") s.name = "AllReduce";
  s.options = description.value("options", json::object());
  Options o(s.options, "strategy." + s.name);
  const std::string& n = s.name;
  if (n != "AllReduce" && n != "Hogwild")
    s.variable_placement = o.get<std::string>("placement", "greedy");
  if (s.variable_placement != "greedy" && s.variable_placement != "round_robin")
    throw UsageError("strategy." + n + ": placement must be 'greedy' or 'round_robin', got '" +
                     s.variable_placement + "'");

  if (n == "AllReduce") {
    s.bucket_bytes = o.get<int64_t>("bucket_bytes", s.bucket_bytes);
    s.shared_memory = o.get<bool>("shared_memory", true);
    s.hierarchical = o.get<bool>("hierarchical", true);
    if (s.bucket_bytes <= 0) throw UsageError("strategy.AllReduce: bucket_bytes must be positive");
  } else if (n == "ParameterServer") {
    s.exchange = Exchange::gradients;
    const auto mode = o.get<std::string>("mode", "async");
    if (mode != "async" && mode != "sync")
      throw UsageError("strategy.ParameterServer: mode must be 'async' or 'sync', got '" + mode +
                       "'");
    s.sync = mode == "sync";
    if (s.sync) {
      s.replicas_to_aggregate = o.get<int>("replicas_to_aggregate", 0);
      s.backup_workers = o.get<int>("backup_workers", 0);
      if (s.replicas_to_aggregate < 0 || s.backup_workers < 0)
        throw UsageError(
            "strategy.ParameterServer: replicas_to_aggregate and backup_workers must not be "
            "negative");
    }
  } else if (n == "DynSGD") {
    s.exchange = Exchange::gradients;
    s.staleness_lr = true;
  } else if (n == "SyncSGD") {
    s.exchange = Exchange::gradients;
    s.sync = true;
    s.learning_rates = o.get<std::vector<double>>("learning_rates", {});
    for (double lr : s.learning_rates)
      if (!(lr > 0)) throw UsageError("strategy.SyncSGD: learning_rates must be positive");
  } else if (n == "Downpour" || n == "DownpourEasy") {
    s.exchange = Exchange::gradients;
    s.local_update = true;
    s.push_every = o.get<int64_t>("n_push", 4);
    s.fetch_every = o.get<int64_t>("n_fetch", 4);
    check_positive(s.push_every, "strategy." + n + ": n_push");
    check_positive(s.fetch_every, "strategy." + n + ": n_fetch");
    if (n == "Downpour") {
      // Dean et al. apply Adagrad on the servers; the replicas step with SGD.
      s.server_optimizer =
          o.get<json>("server_optimizer",
                      json{{"class_name", "Adagrad"}, {"config", {{"learning_rate", 0.01}}}});
      s.worker_optimizer = o.get<json>("worker_optimizer", json());
    } else {
      s.worker_optimizer = o.get<json>("worker_optimizer", json());
      s.worker_momentum = -1;
    }
  } else if (n == "Hogwild") {
    s.exchange = Exchange::shared;
    s.local_update = true;
  } else if (n == "AGN" || n == "SAGN") {
    s.exchange = Exchange::deltas;
    s.local_update = true;
    s.sync = n == "SAGN";
    s.push_every = s.fetch_every = o.get<int64_t>("lambda", 4);
    check_positive(s.push_every, "strategy." + n + ": lambda");
  } else if (n == "EASGD" || n == "AEASGD" || n == "AEAMSGD") {
    s.exchange = Exchange::elastic;
    s.local_update = true;
    s.sync = n == "EASGD";
    s.push_every = s.fetch_every = o.get<int64_t>("tau", 4);
    check_positive(s.push_every, "strategy." + n + ": tau");
    s.alpha = o.get<double>("alpha", -1.0);
    if (o.has("alpha") && !(s.alpha > 0 && s.alpha < 1))
      throw UsageError("strategy." + n + ": alpha must lie in (0, 1), got " +
                       std::to_string(s.alpha));
    if (n == "AEAMSGD") {
      s.worker_momentum = o.get<double>("momentum", 0.9);
      if (!(s.worker_momentum >= 0 && s.worker_momentum < 1))
        throw UsageError("strategy.AEAMSGD: momentum must lie in [0, 1)");
    }
  } else {
    throw UsageError("unknown strategy '" + n + "'; valid: " + strategy_names());
  }
  // The linear scaling rule is for an optimizer that applies gradients
  // averaged or gathered from all workers: AllReduce's, or the servers'.
  if (s.exchange == Exchange::all_reduce || s.exchange == Exchange::gradients)
    s.scale_lr = o.get<bool>("scale_lr", false);
  o.finish();
  return s;
}

}  // namespace drun::distributed

namespace drun::distributed {
float elastic_alpha(const StrategySpec& spec, int workers) {
  return spec.alpha > 0 ? static_cast<float>(spec.alpha) : 0.9f / static_cast<float>(workers);
}
}  // namespace drun::distributed
