#include "train/compile_options.hpp"

namespace drun::train {

CompileOptions parse_compile_options(const json& options) {
  Options o(options, "compile");
  CompileOptions c;
  c.loss = o.require<json>("loss");
  c.optimizer = o.get<json>("optimizer", c.optimizer);
  c.metrics = o.get<std::vector<std::string>>("metrics", {});
  o.finish();
  return c;
}

}  // namespace drun::train
