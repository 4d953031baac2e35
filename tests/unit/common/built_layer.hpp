// A layer made from its registry entry and built for one input shape: the
// first step of every test that looks at a layer's weights or refusals.
#pragma once
#include <memory>
#include <string>

#include "base/rng.hpp"
#include "nn/layer.hpp"

namespace drun::testing {

inline std::unique_ptr<nn::Layer> built_layer(const std::string& cls, const json& config,
                                              const Shape& in, Rng& rng, const std::string& name) {
  auto layer = nn::make_layer(cls, config, name);
  const Shape shapes[1] = {in};
  layer->build(shapes, rng);
  return layer;
}

}  // namespace drun::testing
