// The pooling window arithmetic (kernels/pool_window.hpp) that the CPU loops
// and the CUDA kernels share, against the plain definitions: window o covers
// the input coordinates o * stride - pad + k for k in [0, size), those inside
// the image; an input coordinate is covered by the windows that contain it.
#include "kernels/pool_window.hpp"

#include <gtest/gtest.h>

namespace drun::kernels {
namespace {

TEST(PoolWindow, SpansMatchTheDefinitionsForEveryGeometry) {
  for (int64_t extent = 1; extent <= 9; ++extent)
    for (int64_t size = 1; size <= 4; ++size)
      for (int64_t stride = 1; stride <= 3; ++stride)
        for (int64_t pad = 0; pad < size; ++pad) {
          // Keras' output count for this padding, at least one window.
          const int64_t out = (extent + 2 * pad - size) / stride + 1;
          if (out < 1) continue;
          for (int64_t o = 0; o < out; ++o) {
            int64_t begin = -1, end = -1;
            for (int64_t k = 0; k < size; ++k) {
              const int64_t i = o * stride - pad + k;
              if (i < 0 || i >= extent) continue;
              if (begin < 0) begin = i;
              end = i + 1;
            }
            const WindowSpan s = window_inputs(o, stride, pad, size, extent);
            if (begin < 0) {
              EXPECT_LE(s.end, s.begin) << "an empty window";
              continue;
            }
            EXPECT_EQ(s.begin, begin);
            EXPECT_EQ(s.end, end);
          }
          for (int64_t i = 0; i < extent; ++i) {
            int64_t first = -1, last = -2;
            for (int64_t o = 0; o < out; ++o)
              if (o * stride - pad <= i && i < o * stride - pad + size) {
                if (first < 0) first = o;
                last = o;
              }
            const WindowSpan w = windows_over(i, stride, pad, size, out);
            if (first < 0) {
              EXPECT_LE(w.end, w.begin) << "no window covers " << i;
              continue;
            }
            EXPECT_EQ(w.begin, first) << "extent " << extent << " size " << size << " i " << i;
            EXPECT_EQ(w.end, last + 1);
          }
        }
}

TEST(PoolWindow, CountsOnlyThePixelsInsideTheImage) {
  // 5x5 input, 3x3 windows, stride 2, 'same' padding of 1: the corner window
  // holds 2x2 pixels, an inner edge window 2x3.
  const PoolGeometry g = pool_geometry(1, 5, 5, 1, 3, 3, 2, 2, true);
  ASSERT_EQ(g.pad_top, 1);
  EXPECT_EQ(window_count(g, 0, 0), 4);
  EXPECT_EQ(window_count(g, 0, 1), 6);
  EXPECT_EQ(window_count(g, 1, 1), 9);
}

}  // namespace
}  // namespace drun::kernels
