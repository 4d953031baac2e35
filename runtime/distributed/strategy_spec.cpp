#include "distributed/strategy_spec.hpp"

namespace drun::distributed {

const std::vector<const StrategyInfo*>& strategy_registry() {
  static const std::vector<const StrategyInfo*> entries = {
#define DRUN_STRATEGY(id) &id##_strategy(),
#include "distributed/strategy_list.hpp"
#undef DRUN_STRATEGY
  };
  return entries;
}

json describe_strategies() {
  json out = json::array();
  for (const StrategyInfo* info : strategy_registry()) {
    json entry = info->about.describe();
    entry["presets"] = json::array();
    for (const auto& p : info->presets) {
      const StrategySpec s = parse_strategy({{"name", info->about.name()}, {"options", p.options}});
      const bool averaging =
          s.exchange == Exchange::all_reduce || (s.exchange == Exchange::gradients && s.sync);
      entry["presets"].push_back(
          {{"name", p.name}, {"options", p.options}, {"averaging", averaging}});
    }
    out.push_back(entry);
  }
  return out;
}

Schema::Entry placement_option() {
  return {"placement", OptionType::string, "greedy",
          "how variables spread over the servers: 'greedy' (by bytes) or 'round_robin'"};
}

Schema::Entry scale_lr_option() {
  return {"scale_lr", OptionType::boolean, false,
          "multiply the learning rate of the optimizer that applies the workers' gradients by "
          "their number"};
}

void read_placement(Options& o, StrategySpec& s) {
  s.variable_placement = o.get<std::string>("placement");
  if (s.variable_placement != "greedy" && s.variable_placement != "round_robin")
    throw UsageError("strategy." + s.name + ": placement must be 'greedy' or 'round_robin', got '" +
                     s.variable_placement + "'");
}

int64_t read_count(Options& o, const std::string& key, const StrategySpec& s) {
  const auto v = o.get<int64_t>(key);
  if (v < 1)
    throw UsageError("strategy." + s.name + ": " + key + " must be at least 1, got " +
                     std::to_string(v));
  return v;
}

StrategySpec parse_strategy(const json& description) {
  StrategySpec s;
  const std::string given = description.value("name", std::string(kDefaultStrategy));
  const StrategyInfo* info = find_entry(strategy_registry(), given);
  if (!info)
    throw UsageError("unknown strategy '" + given +
                     "'; valid: " + registry_names(strategy_registry()));
  s.name = info->about.name();
  s.options = description.value("options", json::object());
  Options o(s.options, "strategy." + s.name, info->about.schema);
  info->configure(o, s);
  // The linear scaling rule is for an optimizer that applies gradients
  // averaged or gathered from all workers: AllReduce's, or the servers'.
  if (info->about.schema.find("scale_lr")) s.scale_lr = o.get<bool>("scale_lr");
  o.finish();
  return s;
}

}  // namespace drun::distributed

namespace drun::distributed {
float elastic_alpha(const StrategySpec& spec, int workers) {
  return spec.alpha > 0 ? static_cast<float>(spec.alpha) : 0.9f / static_cast<float>(workers);
}
}  // namespace drun::distributed
