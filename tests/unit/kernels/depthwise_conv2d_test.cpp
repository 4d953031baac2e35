// The CPU's depthwise convolution on several threads: they split the batch
// (forward, data gradient) or the channels (filter gradient), and every value
// is summed in the same order either way, so any thread count gives the bits
// of one thread (the layer's finite-difference and definition tests run on one).
#include <gtest/gtest.h>

#include <cstring>
#include <stdexcept>

#include "base/rng.hpp"
#include "kernels/ops.hpp"
#include "tensor/tensor.hpp"

namespace drun::kernels {
namespace {

Tensor uniform(Rng& rng, const Shape& shape) {
  Tensor t(shape);
  for (float& v : t.span_f32()) v = rng.uniform(-1.0f, 1.0f);
  return t;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.numel() == b.numel() && std::memcmp(a.raw(), b.raw(), a.bytes()) == 0;
}

TEST(DepthwiseConvKernels, AnyThreadCountGivesTheBitsOfOne) {
  // 5 channels over 3 threads: unequal shares; 'same' at stride 2 pads 0+1.
  const ConvGeometry g = conv_geometry(4, 9, 8, 5, 3, 3, 10, 2, 2, true);
  Rng rng(7);
  const Tensor x = uniform(rng, Shape{g.n, g.h, g.w, g.c}), w = uniform(rng, Shape{3, 3, 5, 2});
  const Tensor b = uniform(rng, Shape{g.co}), dy = uniform(rng, Shape{g.n, g.oh, g.ow, g.co});
  Tensor y1(dy.shape()), dx1(x.shape()), dw1(w.shape());
  const Exec one{Device::cpu, 1};
  depthwise_conv2d_forward(one, g, x, w, b, y1);
  depthwise_conv2d_backward_data(one, g, dy, w, dx1);
  depthwise_conv2d_backward_filter(one, g, x, dy, dw1);
  for (const int threads : {2, 3, 4}) {
    SCOPED_TRACE(threads);
    const Exec many{Device::cpu, threads};
    Tensor y(dy.shape()), dx(x.shape()), dw(w.shape());
    depthwise_conv2d_forward(many, g, x, w, b, y);
    depthwise_conv2d_backward_data(many, g, dy, w, dx);
    depthwise_conv2d_backward_filter(many, g, x, dy, dw);
    EXPECT_TRUE(same_bits(y, y1));
    EXPECT_TRUE(same_bits(dx, dx1));
    EXPECT_TRUE(same_bits(dw, dw1));
  }
}

TEST(DepthwiseConvKernels, TheOpsRefuseTensorsThatDoNotFitTheGeometry) {
  const ConvGeometry g = conv_geometry(1, 4, 4, 3, 3, 3, 6, 1, 1, false);
  Tensor x(Shape{1, 4, 4, 3}), w(Shape{3, 3, 3, 2}), y(Shape{1, 2, 2, 6});
  const Exec cpu{Device::cpu, 1};
  EXPECT_THROW(depthwise_conv2d_forward(cpu, g, x, Tensor(Shape{3, 3, 3, 1}), Tensor(), y),
               std::logic_error);
  EXPECT_THROW(depthwise_conv2d_forward(cpu, g, x, w, Tensor(Shape{5}), y), std::logic_error);
  ConvGeometry odd = g;
  odd.co = 7;  // not a multiple of the channels
  EXPECT_THROW(depthwise_conv2d_backward_filter(cpu, odd, x, y, w), std::logic_error);
}

}  // namespace
}  // namespace drun::kernels
