// IEEE 754 binary16 ("float16") and bfloat16 from and to float32, on the
// bits. Narrowing rounds to nearest, ties to even, as the hardware converts
// (F16C's vcvtps2ph, CUDA's __float2half_rn and __float2bfloat16_rn) and as
// numpy and ml_dtypes do (tests/interop/half_reference_test.py compares all
// of them); overflow gives infinity, a NaN stays a NaN (quiet). Widening is
// exact. Here, beside DType's f16 and bf16, so that every layer that meets
// those types converts them alike: the CPU's cast op (kernels/cpu/cast.cpp,
// through kernels/half.hpp), the NumPy reader's float16 (data/numpy_file.cpp)
// and the tests; the CUDA kernels use the device's own conversions.
#pragma once
#include <bit>
#include <cstdint>

namespace drun {

constexpr uint16_t float_to_half(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t ax = x & 0x7fffffffu;
  if (ax > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
  if (ax >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520: infinity
  if (ax < 0x38800000u) {
    // Below 2^-14, a subnormal half: adding 0.5f lines the half's last bit up
    // with the float's, and the float addition rounds to nearest even.
    const float shifted = std::bit_cast<float>(ax) + 0.5f;
    return static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(shifted) - 0x3f000000u));
  }
  // Rebias the exponent (127 -> 15) and round the 13 dropped bits to nearest
  // even; a carry into the exponent is the right result (up to infinity).
  ax += 0xc8000fffu + ((ax >> 13) & 1u);
  return static_cast<uint16_t>(sign | (ax >> 13));
}

constexpr float half_to_float(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu;
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<uint32_t>(magnitude));
  }
  if (exponent == 31) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

constexpr uint16_t float_to_bfloat16(float f) {
  const uint32_t x = std::bit_cast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  return static_cast<uint16_t>((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

constexpr float bfloat16_to_float(uint16_t b) {
  return std::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

}  // namespace drun
