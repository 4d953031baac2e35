#include "train/registries.hpp"

#include <fmt/format.h>

#include "data/pipeline_spec.hpp"
#include "data/reader_registry.hpp"
#include "distributed/strategy_spec.hpp"
#include "nn/layer_registry.hpp"
#include "nn/loss.hpp"
#include "nn/metrics.hpp"
#include "optim/optimizer.hpp"
#include "train/callbacks/callback_registry.hpp"
#include "train/fit_config.hpp"
#include "train/hook_registry.hpp"

namespace drun::train {

const std::map<std::string, RegistryKind>& registries() {
  static const std::map<std::string, RegistryKind> table = {
      {"layers",
       {"layer", [] { return describe_all(nn::layer_registry()); },
        [](const std::string& name, const json& options) {
          // Made, not only matched to the schema: the constructor's checks of
          // values (an activation's name, a rate) are reported where the
          // script wrote the layer too.
          const auto& info = entry_named(nn::layer_registry(), name, "layer class");
          Options o(options, "nn." + name, info.about.schema);
          info.make(o, nn::keras_base_name(name));
          o.finish();
        }}},
      {"readers",
       {"data reader", data::describe_readers,
        [](const std::string& name, const json& options) {
          data::check_reader_options(name, options, "data." + name);
        }}},
      {"pipeline_ops",
       {"pipeline op", data::describe_pipeline_ops,
        [](const std::string& name, const json& options) {
          data::check_pipeline_op(name, options, "Dataset:" + name);
        }}},
      {"strategies",
       {"strategy", distributed::describe_strategies,
        [](const std::string& name, const json& options) {
          distributed::parse_strategy({{"name", name}, {"options", options}});
        }}},
      {"optimizers",
       {"optimizer", [] { return describe_all(optim::optimizer_registry()); },
        [](const std::string& name, const json& options) {
          optim::make_optimizer({{"class_name", name}, {"config", options}});
        }}},
      {"schedules",
       {"learning-rate schedule", [] { return describe_all(optim::schedule_registry()); },
        [](const std::string& name, const json& options) {
          optim::make_schedule({{"class_name", name}, {"config", options}});
        }}},
      {"losses",
       {"loss", [] { return describe_all(nn::loss_registry()); },
        [](const std::string& name, const json& options) {
          nn::Loss({{"class_name", name}, {"config", options}});
        }}},
      {"metrics",
       {"metric", [] { return describe_all(nn::metric_registry()); },
        [](const std::string& name, const json& options) {
          const auto& info = entry_named(nn::metric_registry(), name, "metric");
          Options(options, info.about.name(), info.about.schema);
        }}},
      {"hooks",
       {"hook", describe_hooks,
        [](const std::string& name, const json& options) { make_hook(name, options); }}},
      {"callbacks",
       {"callback", describe_callbacks,
        [](const std::string& name, const json& options) { make_callback(name, options); }}},
      // fit's options (train/fit_config): one entry, "fit".
      {"fit",
       {"options",
        [] {
          return json::array(
              {Described{{"fit"}, "Model:fit's options", fit_schema(), {}}.describe()});
        },
        [](const std::string&, const json& options) { Options(options, "fit", fit_schema()); }}},
  };
  return table;
}

const RegistryKind& registry_kind(const std::string& kind) {
  const auto it = registries().find(kind);
  if (it == registries().end()) throw UsageError("no registry '" + kind + "'");
  return it->second;
}

namespace {

std::string names_of(const json& entry) {
  std::string out;
  for (const auto& n : entry["names"]) out += (out.empty() ? "" : ", ") + n.get<std::string>();
  return out;
}

std::string entry_help(const std::string& what, const json& entry) {
  std::string out =
      fmt::format("{} ({}): {}\n", names_of(entry), what, entry["doc"].get<std::string>());
  if (!entry["positional"].empty()) {
    std::string p;
    for (const auto& n : entry["positional"]) p += (p.empty() ? "" : ", ") + n.get<std::string>();
    out += "  positional: " + p + "\n";
  }
  if (entry.contains("presets")) {
    std::string p;
    for (const auto& n : entry["presets"])
      p += (p.empty() ? "" : ", ") + n["name"].get<std::string>();
    out += "  --strategy " + p + "\n";
  }
  for (const auto& o : entry["options"]) {
    const std::string fallback = o["required"].get<bool>() ? "required"
                                 : o["default"].is_null()  ? "no default"
                                                           : "default " + o["default"].dump();
    out += fmt::format("  {:<24} {}, {}: {}\n", o["name"].get<std::string>(),
                       o["type"].get<std::string>(), fallback, o["doc"].get<std::string>());
  }
  return out;
}

}  // namespace

std::string registry_help(const std::string& name) {
  std::string out;
  for (const auto& [kind, k] : registries()) {
    const json entries = k.describe();
    if (name.empty()) {
      std::string names;
      for (const auto& e : entries) names += (names.empty() ? "" : ", ") + names_of(e);
      out += kind + ": " + names + "\n";
    } else if (name == kind) {
      for (const auto& e : entries) out += entry_help(k.what, e);
    } else {
      for (const auto& e : entries)
        for (const auto& n : e["names"])
          if (n == name) out += entry_help(k.what, e);
    }
  }
  if (out.empty())
    throw UsageError("drun help: nothing is called '" + name + "' (drun help lists every name)");
  return out;
}

}  // namespace drun::train
