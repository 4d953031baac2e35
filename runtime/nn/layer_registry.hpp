// The layer registry: one LayerInfo per layer, listed in nn/layer_list.hpp.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/registry.hpp"
#include "nn/layer.hpp"

namespace drun::nn {

struct LayerInfo {
  Described about;  // names: the Keras class first, then aliases (MaxPool2D)
  using Maker = std::function<std::unique_ptr<Layer>(Options&, const std::string& name)>;
  Maker make;
  // Keras config keys of this class that mean something else in drun
  // (LeakyReLU's Keras 2 `alpha`), rewritten before the generic import rules;
  // may be empty.
  std::function<void(json& keras_config, const std::string& who)> from_keras;
  bool in_keras = true;  // whether Keras has this class (export, import)
  // Its input is integer token ids (Embedding): a Keras input of an integer
  // dtype may feed it, and drun's export gives such an input int32.
  bool takes_ids = false;
};

#define DRUN_LAYER(id) const LayerInfo& id##_layer();
#include "nn/layer_list.hpp"
#undef DRUN_LAYER

// Every layer, in the list's order, its schema with the options every layer
// takes (name, input_shape, trainable...).
const std::vector<const LayerInfo*>& layer_registry();
// The layer called `class_name` or an alias of it; nullptr if none.
const LayerInfo* find_layer(const std::string& class_name);

// The name Keras gives a layer of this class, before its _1, _2...:
// Conv2D -> conv2d, MaxPooling2D -> max_pooling2d, ReLU -> re_lu.
std::string keras_base_name(const std::string& class_name);

}  // namespace drun::nn
