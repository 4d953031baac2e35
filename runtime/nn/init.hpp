// Keras' weight initialisers, by name: glorot_uniform (Keras' default for
// kernels), glorot_normal, he_normal, he_uniform, lecun_normal, orthogonal
// (Keras' default for recurrent kernels), zeros, ones, uniform (Keras'
// RandomUniform in [-0.05, 0.05], Embedding's default).
#pragma once
#include <string>

#include "base/rng.hpp"
#include "tensor/tensor.hpp"

namespace drun::nn {

// fan_in/fan_out as Keras computes them (kernel: receptive field x in/out).
void initialize(Tensor& t, const std::string& initializer, int64_t fan_in, int64_t fan_out,
                Rng& rng, const std::string& owner);

}  // namespace drun::nn
