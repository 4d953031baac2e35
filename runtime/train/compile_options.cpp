#include "train/compile_options.hpp"

#include <cmath>

namespace drun::train {

const Schema& compile_schema() {
  static const Schema s = [] {
    const CompileOptions d;
    return Schema{
        {"loss", OptionType::any, kRequired,
         "a loss description (drun.losses) or a name such as 'mse'"},
        {"optimizer", OptionType::any, d.optimizer,
         "an optimizer description (drun.optim) or a name such as 'sgd' (SGD's defaults)"},
        {"metrics", OptionType::list, d.metrics,
         "the metrics to report: names or descriptions (drun.metrics)"},
        {"precision", OptionType::string, d.precision,
         "Keras' dtype policy: float32, mixed_float16 or mixed_bfloat16"},
        {"cuda_graphs", OptionType::boolean, d.cuda_graphs,
         "on a GPU, launch each step as one CUDA graph where it can be captured"}};
  }();
  return s;
}

CompileOptions parse_compile_options(const json& options) {
  Options o(options, "compile", compile_schema());
  CompileOptions c;
  c.loss = o.value("loss");
  c.optimizer = o.value("optimizer");
  c.metrics = o.value("metrics");
  c.precision = o.get<std::string>("precision");
  c.cuda_graphs = o.get<bool>("cuda_graphs");
  if (c.precision != "float32" && c.precision != "mixed_float16" && c.precision != "mixed_bfloat16")
    throw UsageError("compile: precision '" + c.precision +
                     "' is not one drun has; valid: float32, mixed_bfloat16, mixed_float16" +
                     (c.precision == "float16" || c.precision == "bfloat16"
                          ? " (variables stay float32: use the mixed_ policy)"
                          : ""));
  return c;
}

json Evaluation::to_json() const {
  json j = {{"loss", loss}, {"examples", examples}};
  for (const auto& [k, v] : metrics) j[k] = v;
  if (per_character) j["bits_per_char"] = loss / std::log(2.0);
  return j;
}

}  // namespace drun::train
