#include "kernels/cast.hpp"

#include <cstring>

#include "kernels/half.hpp"

namespace drun::kernels::cpu {

namespace {

// Each element through float32, which holds every float16 and bfloat16 value exactly.
float widen(const void* x, DType from, int64_t i) {
  switch (from) {
    case DType::f16:
      return half_to_float(static_cast<const uint16_t*>(x)[i]);
    case DType::bf16:
      return bfloat16_to_float(static_cast<const uint16_t*>(x)[i]);
    default:
      return static_cast<const float*>(x)[i];
  }
}

template <class Narrow>
void narrow_all(const void* x, DType from, uint16_t* y, int64_t n, Narrow narrow) {
  if (from == DType::f32) {
    const float* xf = static_cast<const float*>(x);
    for (int64_t i = 0; i < n; ++i) y[i] = narrow(xf[i]);
    return;
  }
  for (int64_t i = 0; i < n; ++i) y[i] = narrow(widen(x, from, i));
}

}  // namespace

void cast(const void* x, DType from, void* y, DType to, int64_t n) {
  if (from == to) {
    std::memmove(y, x, static_cast<size_t>(n) * dtype_size(to));
    return;
  }
  switch (to) {
    case DType::f16:
      narrow_all(x, from, static_cast<uint16_t*>(y), n, float_to_half);
      return;
    case DType::bf16:
      narrow_all(x, from, static_cast<uint16_t*>(y), n, float_to_bfloat16);
      return;
    default: {
      float* yf = static_cast<float*>(y);
      for (int64_t i = 0; i < n; ++i) yf[i] = widen(x, from, i);
    }
  }
}

}  // namespace drun::kernels::cpu
