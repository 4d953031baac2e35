// The update rules of the parameter-server family (distributed/ps_worker,
// ps_server): each entry says which of the four exchanges a rule is
// (strategy_spec.hpp) and reads its options. docs/strategies.md gives each
// rule and its paper.
#include "distributed/strategy_spec.hpp"

namespace drun::distributed {

namespace {

// Downpour and DownpourEasy: replicas take n_push local steps between pushes.
void configure_downpour(Options& o, StrategySpec& s) {
  read_placement(o, s);
  s.exchange = Exchange::gradients;
  s.local_update = true;
  s.push_every = read_count(o, "n_push", s);
  s.fetch_every = read_count(o, "n_fetch", s);
  s.worker_optimizer = o.get<json>("worker_optimizer", json());
}

// EASGD and its asynchronous variants: every tau steps towards the centre.
void configure_elastic(Options& o, StrategySpec& s, bool sync) {
  read_placement(o, s);
  s.exchange = Exchange::elastic;
  s.local_update = true;
  s.sync = sync;
  s.push_every = s.fetch_every = read_count(o, "tau", s);
  s.alpha = o.get<double>("alpha", -1.0);
  if (o.has("alpha") && !(s.alpha > 0 && s.alpha < 1))
    throw UsageError("strategy." + s.name + ": alpha must lie in (0, 1), got " +
                     std::to_string(s.alpha));
}

Schema elastic_options() {
  return {
      {"tau", OptionType::integer, 4, "local steps between exchanges with the centre"},
      {"alpha", OptionType::number, nullptr, "the moving rate, in (0, 1) (default: 0.9 / workers)"},
      placement_option()};
}

// AGN and SAGN: workers push the normalised change of their weights every lambda steps.
void configure_deltas(Options& o, StrategySpec& s, bool sync) {
  read_placement(o, s);
  s.exchange = Exchange::deltas;
  s.local_update = true;
  s.sync = sync;
  s.push_every = s.fetch_every = read_count(o, "lambda", s);
}

Schema delta_options() {
  return {{"lambda", OptionType::integer, 4, "local steps between pushes"}, placement_option()};
}

Schema::Entry worker_optimizer_option() {
  return {"worker_optimizer", OptionType::table, nullptr,
          "the replicas' optimizer (default: the experiment's)"};
}

}  // namespace

const StrategyInfo& parameter_server_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"ParameterServer"},
                .doc = "workers push gradients; the servers apply the optimizer",
                .schema = {{"mode", OptionType::string, "async", "'async' or 'sync'"},
                           {"replicas_to_aggregate", OptionType::integer, 0,
                            "sync: the gradients a round waits for (0: every worker less backups)"},
                           {"backup_workers", OptionType::integer, 0,
                            "sync: workers whose late gradients a round does not wait for"},
                           placement_option(),
                           scale_lr_option()}},
      .presets = {{"ps_async", {{"mode", "async"}}}, {"ps_sync", {{"mode", "sync"}}}},
      .configure = [](Options& o, StrategySpec& s) {
        read_placement(o, s);
        s.exchange = Exchange::gradients;
        const auto mode = o.get<std::string>("mode");
        if (mode != "async" && mode != "sync")
          throw UsageError("strategy.ParameterServer: mode must be 'async' or 'sync', got '" +
                           mode + "'");
        s.sync = mode == "sync";
        if (!s.sync && (o.has("replicas_to_aggregate") || o.has("backup_workers")))
          throw UsageError(
              "strategy.ParameterServer: replicas_to_aggregate and backup_workers are for "
              "mode = 'sync'");
        s.replicas_to_aggregate = o.get<int>("replicas_to_aggregate");
        s.backup_workers = o.get<int>("backup_workers");
        if (s.replicas_to_aggregate < 0 || s.backup_workers < 0)
          throw UsageError(
              "strategy.ParameterServer: replicas_to_aggregate and backup_workers must not be "
              "negative");
      }};
  return info;
}

const StrategyInfo& dyn_sgd_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"DynSGD"},
                .doc = "asynchronous gradients, each scaled by 1 / its staleness",
                .schema = {placement_option(), scale_lr_option()}},
      .presets = {{"dyn_sgd", json::object()}},
      .configure = [](Options& o, StrategySpec& s) {
        read_placement(o, s);
        s.exchange = Exchange::gradients;
        s.staleness_lr = true;
      }};
  return info;
}

const StrategyInfo& sync_sgd_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"SyncSGD"},
                .doc = "synchronous gradients, optionally a learning rate per worker",
                .schema = {{"learning_rates", OptionType::list, json::array(),
                            "one learning rate per worker (default: the optimizer's)"},
                           placement_option(),
                           scale_lr_option()}},
      .presets = {{"sync_sgd", json::object()}},
      .configure = [](Options& o, StrategySpec& s) {
        read_placement(o, s);
        s.exchange = Exchange::gradients;
        s.sync = true;
        s.learning_rates = o.get<std::vector<double>>("learning_rates");
        for (double lr : s.learning_rates)
          if (!(lr > 0)) throw UsageError("strategy.SyncSGD: learning_rates must be positive");
      }};
  return info;
}

const StrategyInfo& downpour_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"Downpour"},
                .doc =
                    "replicas step locally and push accumulated gradients; Adagrad on the servers",
                .schema = {{"n_push", OptionType::integer, 4, "local steps between pushes"},
                           {"n_fetch", OptionType::integer, 4, "local steps between fetches"},
                           worker_optimizer_option(),
                           {"server_optimizer", OptionType::table, nullptr,
                            "the servers' optimizer (default: Adagrad, learning rate 0.01)"},
                           placement_option(),
                           scale_lr_option()}},
      .presets = {{"downpour", json::object()}},
      .configure = [](Options& o, StrategySpec& s) {
        configure_downpour(o, s);
        // Dean et al. apply Adagrad on the servers; the replicas step with SGD.
        s.server_optimizer =
            o.get<json>("server_optimizer",
                        json{{"class_name", "Adagrad"}, {"config", {{"learning_rate", 0.01}}}});
      }};
  return info;
}

const StrategyInfo& downpour_easy_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"DownpourEasy"},
                .doc = "Downpour with the experiment's optimizer on the servers",
                .schema = {{"n_push", OptionType::integer, 4, "local steps between pushes"},
                           {"n_fetch", OptionType::integer, 4, "local steps between fetches"},
                           worker_optimizer_option(),
                           placement_option(),
                           scale_lr_option()}},
      .presets = {{"downpour_easy", json::object()}},
      .configure = configure_downpour};
  return info;
}

const StrategyInfo& agn_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"AGN"},
                .doc = "asynchronous: workers push the normalised change of their weights",
                .schema = delta_options()},
      .presets = {{"agn", json::object()}},
      .configure = [](Options& o, StrategySpec& s) { configure_deltas(o, s, false); }};
  return info;
}

const StrategyInfo& sagn_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"SAGN"}, .doc = "AGN in synchronous rounds", .schema = delta_options()},
      .presets = {{"sagn", json::object()}},
      .configure = [](Options& o, StrategySpec& s) { configure_deltas(o, s, true); }};
  return info;
}

const StrategyInfo& easgd_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"EASGD"},
                .doc = "synchronous elastic averaging towards a centre the servers hold",
                .schema = elastic_options()},
      .presets = {{"easgd", json::object()}},
      .configure = [](Options& o, StrategySpec& s) { configure_elastic(o, s, true); }};
  return info;
}

const StrategyInfo& aeasgd_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"AEASGD"}, .doc = "asynchronous EASGD", .schema = elastic_options()},
      .presets = {{"aeasgd", json::object()}},
      .configure = [](Options& o, StrategySpec& s) { configure_elastic(o, s, false); }};
  return info;
}

const StrategyInfo& aeamsgd_strategy() {
  static const StrategyInfo info{
      .about = {.names = {"AEAMSGD"},
                .doc = "asynchronous EASGD with Nesterov momentum on the workers",
                .schema = elastic_options().with(
                    {{"momentum", OptionType::number, 0.9, "the workers' momentum, in [0, 1)"}})},
      .presets = {{"aeamsgd", json::object()}},
      .configure = [](Options& o, StrategySpec& s) {
        configure_elastic(o, s, false);
        s.worker_momentum = o.get<double>("momentum");
        if (!(s.worker_momentum >= 0 && s.worker_momentum < 1))
          throw UsageError("strategy.AEAMSGD: momentum must lie in [0, 1)");
      }};
  return info;
}

}  // namespace drun::distributed
