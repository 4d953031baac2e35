#include "train/fit_result.hpp"

#include "base/peak_memory.hpp"
#include "kernels/platform.hpp"

namespace drun::train {

json FitResult::to_json() const {
  json t = {{"loss", train.loss}, {"images_per_sec", images_per_sec}};
  for (const auto& [k, v] : train.metrics) t[k] = v;
  json j = {{"global_step", global_step}, {"epochs", epochs}, {"workers", workers},
            {"device", device},           {"train", t},       {"wall_seconds", wall_seconds}};
  // What the numbers were measured on: CPU, kernel variant, BLAS core.
  j["platform"] = kernels::describe_platform();
  if (const auto mib = peak_resident_mib()) j["peak_rss_mib"] = *mib;
  if (!strategy.empty()) j["strategy"] = strategy;
  if (!scaling.empty()) j["scaling"] = scaling;
  if (!loss_scale.empty()) j["loss_scale"] = loss_scale;
  if (!cuda_graphs.empty()) j["cuda_graphs"] = cuda_graphs;
  if (!resizes.empty()) j["resizes"] = resizes;
  if (preempted) j["preempted"] = true;
  if (stopped_by_hook) j["stopped_by_hook"] = true;
  if (eval) j["eval"] = eval->to_json();
  return j;
}

}  // namespace drun::train
