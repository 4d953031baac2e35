#include "train/callbacks/callback.hpp"
#include "train/hooks.hpp"

namespace drun::train {

std::optional<double> Logs::get(const std::string& name) const {
  for (const auto& [k, v] : values)
    if (k == name) return v;
  return std::nullopt;
}

std::string Logs::names() const {
  std::string out;
  for (const auto& kv : values) out += (out.empty() ? "" : ", ") + kv.first;
  return out.empty() ? "none" : out;
}

double BatchLogs::loss() const {
  return step_.loss();
}

MetricValues BatchLogs::running() const {
  return step_.running();
}

}  // namespace drun::train
