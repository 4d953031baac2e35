// Constructors of the concrete layers, each defined in its own file; make_layer
// (registry.cpp) maps Keras class names onto them.
#pragma once
#include <memory>
#include <string>

#include "nn/layer.hpp"

namespace drun::nn {

// The activation a Keras name means (kernels/activation_list.hpp); unknown
// names are a UsageError listing the valid ones. Its Keras name back is
// kernels::activation_name.
kernels::Activation parse_activation(const std::string& name, const std::string& owner);

std::unique_ptr<Layer> make_dense(Options& o, const std::string& name);
std::unique_ptr<Layer> make_conv2d(Options& o, const std::string& name);
std::unique_ptr<Layer> make_max_pool2d(Options& o, const std::string& name);
std::unique_ptr<Layer> make_avg_pool2d(Options& o, const std::string& name);
std::unique_ptr<Layer> make_global_avg_pool2d(Options& o, const std::string& name);
std::unique_ptr<Layer> make_flatten(Options& o, const std::string& name);
std::unique_ptr<Layer> make_dropout(Options& o, const std::string& name);
std::unique_ptr<Layer> make_activation(Options& o, const std::string& name, const char* fixed);
std::unique_ptr<Layer> make_batch_norm(Options& o, const std::string& name);
std::unique_ptr<Layer> make_add(Options& o, const std::string& name);

}  // namespace drun::nn
