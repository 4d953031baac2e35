#include <functional>
#include <map>

#include "nn/layers.hpp"

namespace drun::nn {

namespace {
using Factory = std::function<std::unique_ptr<Layer>(Options&, const std::string&)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> table = {
      {"Dense", make_dense},
      {"Conv2D", make_conv2d},
      {"MaxPooling2D", make_max_pool2d},
      {"MaxPool2D", make_max_pool2d},
      {"AveragePooling2D", make_avg_pool2d},
      {"AvgPool2D", make_avg_pool2d},
      {"GlobalAveragePooling2D", make_global_avg_pool2d},
      {"Flatten", make_flatten},
      {"Dropout", make_dropout},
      {"Activation",
       [](Options& o, const std::string& n) { return make_activation(o, n, nullptr); }},
      {"ReLU", [](Options& o, const std::string& n) { return make_activation(o, n, "relu"); }},
      {"Softmax",
       [](Options& o, const std::string& n) { return make_activation(o, n, "softmax"); }},
      {"LeakyReLU",
       [](Options& o, const std::string& n) { return make_activation(o, n, "leaky_relu"); }},
      {"BatchNormalization", make_batch_norm},
      {"Add", make_add},
  };
  return table;
}
}  // namespace

const std::vector<std::string>& layer_classes() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& [k, f] : factories()) v.push_back(k);
    return v;
  }();
  return names;
}

std::unique_ptr<Layer> make_layer(const std::string& class_name, const json& config,
                                  const std::string& name) {
  auto it = factories().find(class_name);
  if (it == factories().end()) {
    std::string valid;
    for (const auto& k : layer_classes()) valid += (valid.empty() ? "" : ", ") + k;
    throw UsageError("unknown layer class '" + class_name + "'; valid: " + valid);
  }
  Options o(config, class_name + " '" + name + "'");
  // Handled by the model, accepted here so that finish() does not refuse them.
  o.maybe<std::string>("name");
  o.raw("input_shape");
  o.raw("batch_input_shape");
  o.maybe<bool>("trainable");
  o.maybe<std::string>("dtype");
  auto layer = it->second(o, name);
  o.finish();
  return layer;
}

}  // namespace drun::nn
