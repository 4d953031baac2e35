// float16 and bfloat16 conversions (kernels/half.hpp) and the cast op on the
// CPU: every 16-bit pattern round trip, the rounding cases written out, and
// the op's thread split. numpy's and ml_dtypes' conversions are compared in
// tests/interop/half_reference_test.py, the GPU's in the backend harness.
#include "kernels/half.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "base/rng.hpp"
#include "kernels/ops.hpp"

namespace drun::kernels {
namespace {

bool half_is_nan(uint16_t h) {
  return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0;
}
bool bfloat16_is_nan(uint16_t b) {
  return (b & 0x7f80u) == 0x7f80u && (b & 0x7fu) != 0;
}

TEST(Half, EveryFloat16RoundTripsThroughFloat32) {
  for (uint32_t h = 0; h <= 0xffffu; ++h) {
    const auto bits = static_cast<uint16_t>(h);
    const float f = half_to_float(bits);
    if (half_is_nan(bits)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
      EXPECT_TRUE(half_is_nan(float_to_half(f))) << std::hex << h;
    } else {
      EXPECT_EQ(float_to_half(f), bits) << std::hex << h;
    }
  }
}

TEST(Half, EveryBfloat16RoundTripsThroughFloat32) {
  for (uint32_t b = 0; b <= 0xffffu; ++b) {
    const auto bits = static_cast<uint16_t>(b);
    const float f = bfloat16_to_float(bits);
    if (bfloat16_is_nan(bits)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << b;
      EXPECT_TRUE(bfloat16_is_nan(float_to_bfloat16(f))) << std::hex << b;
    } else {
      EXPECT_EQ(float_to_bfloat16(f), bits) << std::hex << b;
    }
  }
}

TEST(Half, Float16RoundsToNearestEven) {
  const float inf = std::numeric_limits<float>::infinity();
  struct Case {
    float in;
    uint16_t want;
  };
  const Case cases[] = {
      {1.0f, 0x3c00},
      {-2.0f, 0xc000},
      {-0.0f, 0x8000},
      {65504.0f, 0x7bff},   // the largest float16
      {65519.99f, 0x7bff},  // just under the midpoint to infinity
      {65520.0f, 0x7c00},   // the midpoint: rounds to even, infinity
      {1e10f, 0x7c00},      // overflow
      {-inf, 0xfc00},
      {1.0f + 0x1p-11f, 0x3c00},             // a tie between 1 and its successor: even (1)
      {1.0f + 0x1p-10f + 0x1p-11f, 0x3c02},  // a tie above an odd mantissa: up
      {1.0f + 0x1p-11f + 0x1p-20f, 0x3c01},  // just above the tie: up
      {0x1p-14f, 0x0400},                    // the smallest normal
      {0x1p-24f, 0x0001},                    // the smallest subnormal
      {0x1p-25f, 0x0000},                    // half of it: a tie, to even (zero)
      {0x1p-25f + 0x1p-40f, 0x0001},         // just above: up
      {3.0f * 0x1p-25f, 0x0002},             // 1.5 subnormal steps: a tie, to even (2)
      {0x1p-14f - 0x1p-25f, 0x0400},  // the largest subnormal's tie upward: the smallest normal
  };
  for (const Case& c : cases) EXPECT_EQ(float_to_half(c.in), c.want) << c.in;
  EXPECT_TRUE(half_is_nan(float_to_half(std::numeric_limits<float>::quiet_NaN())));
  // A signalling NaN whose payload lies below the bits float16 keeps stays a NaN.
  EXPECT_TRUE(half_is_nan(float_to_half(std::bit_cast<float>(0x7f800001u))));
}

TEST(Half, Bfloat16RoundsToNearestEven) {
  struct Case {
    float in;
    uint16_t want;
  };
  const Case cases[] = {
      {1.0f, 0x3f80},
      {-0.0f, 0x8000},
      {1.0f + 0x1p-8f, 0x3f80},                     // a tie: to even (1)
      {1.0f + 0x1p-7f + 0x1p-8f, 0x3f82},           // a tie above an odd mantissa: up
      {1.0f + 0x1p-8f + 0x1p-20f, 0x3f81},          // just above the tie: up
      {std::numeric_limits<float>::max(), 0x7f80},  // rounds up to infinity
      {std::numeric_limits<float>::denorm_min(), 0x0000},
      {0x1p-126f, 0x0080},
  };
  for (const Case& c : cases) EXPECT_EQ(float_to_bfloat16(c.in), c.want) << c.in;
  EXPECT_TRUE(bfloat16_is_nan(float_to_bfloat16(std::bit_cast<float>(0x7f800001u))));
}

// The op over threads gives what one thread gives, in every direction.
TEST(Half, CastOpSplitsOverThreadsAndConvertsBothWays) {
  const int64_t n = 100003;
  Tensor x(Shape{n});
  Rng rng(7);
  for (float& v : x.span_f32())
    v = rng.uniform(-70000.0f, 70000.0f) * std::pow(2.0f, rng.uniform(-30.0f, 0.0f));
  for (DType narrow : {DType::f16, DType::bf16}) {
    Tensor one(Shape{n}, narrow), four(Shape{n}, narrow), back(Shape{n}), twice(Shape{n}, narrow);
    cast(Exec{Device::cpu, 1}, x, one);
    cast(Exec{Device::cpu, 4}, x, four);
    cast(Exec{Device::cpu, 4}, four, back);
    cast(Exec{Device::cpu, 2}, back, twice);  // float32 -> narrow -> float32 -> narrow: unchanged
    for (int64_t i = 0; i < n; ++i) {
      ASSERT_EQ(one.bits16()[i], four.bits16()[i]) << dtype_name(narrow) << " element " << i;
      ASSERT_EQ(twice.bits16()[i], one.bits16()[i]) << dtype_name(narrow) << " element " << i;
      const float want = narrow == DType::f16 ? half_to_float(one.bits16()[i])
                                              : bfloat16_to_float(one.bits16()[i]);
      ASSERT_EQ(std::bit_cast<uint32_t>(back.f32()[i]), std::bit_cast<uint32_t>(want)) << i;
    }
  }
  // float16 -> bfloat16 goes through float32: 1 + 2^-10 needs 10 mantissa bits, bfloat16 has 7.
  Tensor h(Shape{1}, DType::f16), b(Shape{1}, DType::bf16);
  h.bits16()[0] = float_to_half(1.0f + 0x1p-10f);
  cast(Exec{Device::cpu, 1}, h, b);
  EXPECT_EQ(b.bits16()[0], 0x3f80);
}

TEST(Half, CastOpRefusesOtherTypesAndSizes) {
  Tensor f(Shape{4}), i(Shape{4}, DType::i32), h(Shape{5}, DType::f16);
  EXPECT_THROW(cast(Exec{}, f, i), std::logic_error);
  EXPECT_THROW(cast(Exec{}, f, h), std::logic_error);
}

// The mixed ops' CPU side (kernels/mixed_reference.hpp): a convolution of
// float16 operands is the float32 convolution of their values with its
// output rounded to float16, then the bias; a GEMM with one float32 operand
// rounds it first and keeps a float32 result.
TEST(Half, MixedOpsAreFloat32OpsOfTheRoundedOperands) {
  const Exec ex{Device::cpu, 1};
  Rng rng(3);
  const ConvGeometry g = conv_geometry(2, 9, 9, 4, 3, 3, 8, 1, 1, true);
  Tensor x(Shape{g.n, g.h, g.w, g.c}), w(Shape{g.kh, g.kw, g.c, g.co}), b(Shape{g.co});
  for (Tensor* t : {&x, &w, &b})
    for (float& v : t->span_f32()) v = rng.uniform(-1.0f, 1.0f);
  Tensor xh(x.shape(), DType::f16), wh(w.shape(), DType::f16), xr(x.shape()), wr(w.shape());
  cast(ex, x, xh);
  cast(ex, w, wh);
  cast(ex, xh, xr);
  cast(ex, wh, wr);
  Tensor ws(Shape{std::max<int64_t>(1, conv2d_workspace_floats(ex, g))});
  Tensor mixed_y(Shape{g.n, g.oh, g.ow, g.co}), plain_y(mixed_y.shape());
  const Tensor zero = Tensor::zeros(b.shape());
  EXPECT_FALSE(conv2d_forward(ex, g, xh, wh, b, mixed_y, false, ws, nullptr));
  conv2d_forward(ex, g, xr, wr, zero, plain_y, false, ws, nullptr);
  for (int64_t i = 0; i < plain_y.numel(); ++i) {
    const float want = half_to_float(float_to_half(plain_y.f32()[i])) + b.f32()[i % g.co];
    ASSERT_EQ(mixed_y.f32()[i], want) << i;
  }
  // Dense's input gradient: a float32 gradient times the float16 kernel.
  Tensor dy(Shape{5, 8}), dx(Shape{5, 36}), dyr(dy.shape()), dyh(dy.shape(), DType::f16),
      plain_dx(dx.shape()), kernel(Shape{36, 8}), kernel_h(kernel.shape(), DType::f16),
      kernel_r(kernel.shape());
  for (Tensor* t : {&dy, &kernel})
    for (float& v : t->span_f32()) v = rng.uniform(-1.0f, 1.0f);
  cast(ex, kernel, kernel_h);
  cast(ex, kernel_h, kernel_r);
  cast(ex, dy, dyh);
  cast(ex, dyh, dyr);
  matmul(ex, false, true, 5, 36, 8, 1.0f, dy, kernel_h, 0.0f, dx);
  matmul(ex, false, true, 5, 36, 8, 1.0f, dyr, kernel_r, 0.0f, plain_dx);
  for (int64_t i = 0; i < dx.numel(); ++i) ASSERT_EQ(dx.f32()[i], plain_dx.f32()[i]) << i;
}

}  // namespace
}  // namespace drun::kernels
