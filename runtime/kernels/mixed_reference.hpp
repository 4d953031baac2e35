// The CPU side of the mixed-precision ops (op_list.hpp: GEMMs and
// convolutions whose operands are float16 or bfloat16): what the GPU computes,
// written with the float32 ops. Operands are rounded to the compute type,
// products summed in float32, and where cuDNN writes its result in the
// compute type (the convolutions) the result is rounded to it too. The CPU
// trains in float32 (mixed precision is refused there); these serve the
// emulated GPU of the tests and the backend harness as the GPU's reference.
// They allocate their float32 copies each call.
#pragma once
#include "kernels/ops.hpp"

namespace drun::kernels::mixed_reference {

// Whether an op with these operands takes the mixed path.
inline bool mixed(const Tensor& a, const Tensor& b) {
  return a.dtype() != DType::f32 || b.dtype() != DType::f32;
}
// The compute type of a mixed op (both backends): the first operand's that is not float32.
inline DType compute_type(const Tensor& a, const Tensor& b) {
  return a.dtype() != DType::f32 ? a.dtype() : b.dtype();
}

void matmul(const Exec& ex, bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha,
            const Tensor& a, const Tensor& b, float beta, Tensor& y);
void conv2d_forward(const Exec& ex, const ConvGeometry& g, const Tensor& x, const Tensor& w,
                    const Tensor& b, Tensor& y, bool relu, Tensor& ws);
void conv2d_backward_filter(const Exec& ex, const ConvGeometry& g, const Tensor& x,
                            const Tensor& dy, const Tensor* relu_y, Tensor& dw, Tensor& db,
                            Tensor& ws);
void conv2d_backward_data(const Exec& ex, const ConvGeometry& g, const Tensor& dy, const Tensor& w,
                          Tensor& dx, Tensor& ws);

}  // namespace drun::kernels::mixed_reference
