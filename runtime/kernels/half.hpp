// float16 and bfloat16 conversions for the kernels: tensor/half.hpp's, under
// the kernels' namespace (kernels::float_to_half, ...), so that the CPU's
// cast op and the data readers round alike from one definition.
#pragma once
#include "tensor/half.hpp"

namespace drun::kernels {

using drun::bfloat16_to_float;
using drun::float_to_bfloat16;
using drun::float_to_half;
using drun::half_to_float;

}  // namespace drun::kernels
