#include <regex>

#include "nn/layer_registry.hpp"

namespace drun::nn {

namespace {
// Handled by the model; every layer accepts them.
const Schema& common_options() {
  static const Schema s{
      {"name", OptionType::string, nullptr,
       "the layer's name (default: Keras' class name, _1, _2...)"},
      {"input_shape", OptionType::list, nullptr, "the shape of one example, on the first layer"},
      {"batch_input_shape", OptionType::list, nullptr, "Keras' input shape with the batch first"},
      {"trainable", OptionType::boolean, nullptr, "accepted for Keras; every layer trains"},
      {"dtype", OptionType::string, nullptr, "accepted for Keras; variables are float32"}};
  return s;
}
}  // namespace

const std::vector<const LayerInfo*>& layer_registry() {
  static const std::vector<LayerInfo> infos = with_common_options(
      std::vector<LayerInfo>{
#define DRUN_LAYER(id) id##_layer(),
#include "nn/layer_list.hpp"
#undef DRUN_LAYER
      },
      common_options());
  static const std::vector<const LayerInfo*> pointers = entry_pointers(infos);
  return pointers;
}

const LayerInfo* find_layer(const std::string& class_name) {
  return find_entry(layer_registry(), class_name);
}

std::string keras_base_name(const std::string& class_name) {
  // Keras' to_snake_case, with the canonical class of an alias.
  const LayerInfo* info = find_layer(class_name);
  const std::string& cls = info ? info->about.name() : class_name;
  static const std::regex word("(.)([A-Z][a-z]+)"), hump("([a-z])([A-Z])");
  std::string s = std::regex_replace(std::regex_replace(cls, word, "$1_$2"), hump, "$1_$2");
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::unique_ptr<Layer> make_layer(const std::string& class_name, const json& config,
                                  const std::string& name) {
  const LayerInfo& info = entry_named(layer_registry(), class_name, "layer class");
  Options o(config, class_name + " '" + name + "'", info.about.schema);
  auto layer = info.make(o, name);
  o.finish();
  return layer;
}

}  // namespace drun::nn
