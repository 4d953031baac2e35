#include "train/scaling_meter.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

namespace drun::train {

namespace {

// Per worker in the summed vector: steps, then the parts' seconds, then the
// exchange window and its hidden part.
enum Field { kSteps, kInput, kCompute, kExchange, kOther, kStep, kWindow, kHidden, kFields };

double ms(double seconds) {
  return seconds * 1e3;
}

}  // namespace

void ScalingMeter::add(const StepParts& s) {
  totals_.input += s.input;
  totals_.compute += s.compute;
  totals_.exchange += s.exchange;
  totals_.other += s.other;
  totals_.step += s.step;
  ++steps_;
}

json ScalingMeter::combine(int worker, int workers, const ExchangeCounters& exchange,
                           const std::function<void(double*, int64_t)>& sum) const {
  std::vector<double> all(static_cast<size_t>(workers) * kFields, 0.0);
  double* mine = all.data() + static_cast<size_t>(worker) * kFields;
  mine[kSteps] = static_cast<double>(steps_);
  mine[kInput] = totals_.input;
  mine[kCompute] = totals_.compute;
  mine[kExchange] = totals_.exchange;
  mine[kOther] = totals_.other;
  mine[kStep] = totals_.step;
  mine[kWindow] = exchange.window;
  mine[kHidden] = exchange.hidden;
  sum(all.data(), static_cast<int64_t>(all.size()));

  // Per-step means of each worker.
  const auto per_step = [&](int w, Field f) {
    const double* v = all.data() + static_cast<size_t>(w) * kFields;
    return v[kSteps] > 0 ? v[f] / v[kSteps] : 0.0;
  };
  std::vector<double> busy(static_cast<size_t>(workers));
  json per_worker = json::array();
  double mean[kFields] = {};
  double window = 0.0, hidden = 0.0;
  for (int w = 0; w < workers; ++w) {
    json one;
    for (const auto& [f, name] : {std::pair{kStep, "step_ms"},
                                  {kCompute, "compute_ms"},
                                  {kExchange, "exchange_ms"},
                                  {kInput, "input_ms"},
                                  {kOther, "other_ms"}}) {
      one[name] = ms(per_step(w, f));
      mean[f] += per_step(w, f) / workers;
    }
    per_worker.push_back(one);
    busy[static_cast<size_t>(w)] = per_step(w, kStep) - per_step(w, kExchange);
    window += all[static_cast<size_t>(w) * kFields + kWindow];
    hidden += all[static_cast<size_t>(w) * kFields + kHidden];
  }
  const auto slowest = std::max_element(busy.begin(), busy.end()) - busy.begin();
  double others = 0.0, wait = 0.0;
  for (int w = 0; w < workers; ++w) {
    if (w != slowest) others += busy[static_cast<size_t>(w)] / (workers - 1);
    wait += (busy[static_cast<size_t>(slowest)] - busy[static_cast<size_t>(w)]) / workers;
  }
  json j = {{"workers", workers},
            {"steps", steps_},
            {"step_ms", ms(mean[kStep])},
            {"compute_ms", ms(mean[kCompute])},
            {"exchange_ms", ms(mean[kExchange])},
            {"input_ms", ms(mean[kInput])},
            {"other_ms", ms(mean[kOther])},
            {"slowest_rank", slowest},
            {"slowest_rank_lag_ms", ms(busy[static_cast<size_t>(slowest)] - others)},
            {"slowest_rank_wait_ms", ms(wait)},
            {"per_worker", per_worker}};
  if (window > 0) j["overlap"] = hidden / window;
  if (exchange.bucket_bytes > 0) j["bucket_bytes"] = exchange.bucket_bytes;
  return j;
}

std::string scaling_line(const json& s) {
  const auto v = [&](const char* k) { return s.value(k, 0.0); };
  char hidden[64] = "";
  if (s.contains("overlap"))
    std::snprintf(hidden, sizeof hidden, " (%.0f%% of it hidden behind backward)",
                  100.0 * v("overlap"));
  char line[400];
  std::snprintf(line, sizeof line,
                "step %.1f ms = compute %.1f + exchange %.1f%s + input %.1f + other %.1f; "
                "slowest worker %lld, %.1f ms a step busier than the others",
                v("step_ms"), v("compute_ms"), v("exchange_ms"), hidden, v("input_ms"),
                v("other_ms"), static_cast<long long>(s.value("slowest_rank", int64_t{0})),
                v("slowest_rank_lag_ms"));
  return line;
}

}  // namespace drun::train
