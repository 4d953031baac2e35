#include "train/compile_options.hpp"

namespace drun::train {

CompileOptions parse_compile_options(const json& options) {
  Options o(options, "compile");
  CompileOptions c;
  c.loss = o.require<json>("loss");
  c.optimizer = o.get<json>("optimizer", c.optimizer);
  c.metrics = o.get<std::vector<std::string>>("metrics", {});
  c.precision = o.get<std::string>("precision", c.precision);
  c.cuda_graphs = o.get<bool>("cuda_graphs", c.cuda_graphs);
  o.finish();
  if (c.precision != "float32" && c.precision != "mixed_float16" && c.precision != "mixed_bfloat16")
    throw UsageError("compile: precision '" + c.precision +
                     "' is not one drun has; valid: float32, mixed_bfloat16, mixed_float16" +
                     (c.precision == "float16" || c.precision == "bfloat16"
                          ? " (variables stay float32: use the mixed_ policy)"
                          : ""));
  return c;
}

}  // namespace drun::train
