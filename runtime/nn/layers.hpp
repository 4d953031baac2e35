// What the layers' files share: the registry entry type and the readers of
// options that several layers take.
#pragma once
#include <memory>
#include <string>
#include <utility>

#include "nn/layer.hpp"
#include "nn/layer_registry.hpp"

namespace drun::nn {

// The activation a Keras name means (kernels/activation_list.hpp); unknown
// names are a UsageError listing the valid ones. Its Keras name back is
// kernels::activation_name.
kernels::Activation parse_activation(const std::string& name, const std::string& owner);

// Keras accepts an int or a pair for kernel_size, strides and pool_size;
// `fallback` where the option is absent and has no default.
std::pair<int64_t, int64_t> read_pair(Options& o, const std::string& key,
                                      std::pair<int64_t, int64_t> fallback);
// Keras' 1-D layers' kernel_size, strides and pool_size: an int or a list of one.
int64_t read_single(Options& o, const std::string& key, int64_t fallback);
// padding: 'same' (true) or 'valid'.
bool read_padding(Options& o);
// data_format: only 'channels_last'.
void require_channels_last(Options& o);

// The options of layers over images (Conv2D, the pooling layers).
inline Schema::Entry padding_option() {
  return {"padding", OptionType::string, "valid", "'valid' (no padding) or 'same'"};
}
inline Schema::Entry data_format_option() {
  return {"data_format", OptionType::string, "channels_last", "only 'channels_last' (NHWC)"};
}

}  // namespace drun::nn
