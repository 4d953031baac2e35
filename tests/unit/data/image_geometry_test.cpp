// The crop boxes (torchvision's RandomResizedCrop and Resize + CenterCrop) and
// the resampler's exact cases; tests/images checks the pixels against Pillow.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "data/image_crop.hpp"
#include "data/image_resample.hpp"

namespace drun::data {
namespace {

TEST(RandomResizedCrop, BoxesLieInsideWithAreaAndRatioInRange) {
  Rng rng(5);
  int fallbacks = 0;
  for (int i = 0; i < 2000; ++i) {
    const Box b = random_resized_crop(500, 375, rng, {0.08, 1.0}, {3.0 / 4.0, 4.0 / 3.0});
    ASSERT_GE(b.x0, 0);
    ASSERT_GE(b.y0, 0);
    ASSERT_LE(b.x1, 500);
    ASSERT_LE(b.y1, 375);
    EXPECT_EQ(b.x0, std::floor(b.x0));  // whole pixels, as torchvision's
    const double area = b.width() * b.height() / (500.0 * 375.0);
    const double ratio = b.width() / b.height();
    // Rounding to whole pixels moves area and ratio a little.
    EXPECT_GT(area, 0.07);
    EXPECT_LE(area, 1.0);
    EXPECT_GT(ratio, 0.7);
    EXPECT_LT(ratio, 1.4);
    if (b.width() == 500 || b.height() == 375) ++fallbacks;
  }
  EXPECT_LT(fallbacks, 400);
}

TEST(RandomResizedCrop, SameGeneratorSameBox) {
  Rng a(9), b(9);
  for (int i = 0; i < 20; ++i) {
    const Box x = random_resized_crop(320, 240, a, {0.08, 1.0}, {0.75, 4.0 / 3.0});
    const Box y = random_resized_crop(320, 240, b, {0.08, 1.0}, {0.75, 4.0 / 3.0});
    EXPECT_EQ(x.x0, y.x0);
    EXPECT_EQ(x.y1, y.y1);
  }
}

TEST(RandomResizedCrop, FallsBackToTheCentreOfAnAllowedRatio) {
  Rng rng(1);
  // A 1000 x 10 strip: no draw fits, so the centre 13 x 10 (ratio 4/3 rounded).
  const Box b = random_resized_crop(1000, 10, rng, {0.9, 1.0}, {0.75, 4.0 / 3.0});
  EXPECT_EQ(b.width(), 13);
  EXPECT_EQ(b.height(), 10);
  EXPECT_EQ(b.x0, (1000 - 13) / 2);
}

TEST(CentreCrop, MatchesTorchvisionResize256CenterCrop224) {
  // 500 x 375 -> Resize(256) gives 341 x 256; CenterCrop(224) starts at
  // round(58.5) = 58 (half to even) and round(16) = 16.
  const Box b = centre_crop(500, 375, 224, 224, 0.875);
  const double sx = 500.0 / 341, sy = 375.0 / 256;
  EXPECT_NEAR(b.x0, 58 * sx, 1e-9);
  EXPECT_NEAR(b.x1, 282 * sx, 1e-9);
  EXPECT_NEAR(b.y0, 16 * sy, 1e-9);
  EXPECT_NEAR(b.y1, 240 * sy, 1e-9);
}

TEST(CentreCrop, FractionOneAtTheImagesSizeIsTheWholeImage) {
  const Box b = centre_crop(8, 6, 6, 8, 1.0);
  EXPECT_EQ(b.x0, 0);
  EXPECT_EQ(b.y0, 0);
  EXPECT_EQ(b.x1, 8);
  EXPECT_EQ(b.y1, 6);
}

TEST(Resample, SameSizeCopiesAndFlipMirrors) {
  std::vector<uint8_t> px(4 * 3 * 3);
  for (size_t i = 0; i < px.size(); ++i) px[i] = static_cast<uint8_t>(i * 7);
  const RgbView v{px.data(), 4, 3, 12};
  std::vector<float> out(px.size()), flipped(px.size());
  resample_bilinear(v, Box{0, 0, 4, 3}, 3, 4, false, out.data());
  resample_bilinear(v, Box{0, 0, 4, 3}, 3, 4, true, flipped.data());
  for (size_t i = 0; i < px.size(); ++i) EXPECT_EQ(out[i], px[i]);
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 4; ++x)
      for (int c = 0; c < 3; ++c)
        EXPECT_EQ(flipped[(y * 4 + x) * 3 + c], px[(y * 4 + 3 - x) * 3 + c]);
}

TEST(Resample, HalvingAveragesNeighbours) {
  // Halving widens PIL's triangle to support 2 around each output's centre.
  std::vector<uint8_t> px = {0, 0, 0, 80, 80, 80, 160, 160, 160, 240, 240, 240};
  const RgbView v{px.data(), 4, 1, 12};
  std::vector<float> out(6);
  resample_bilinear(v, Box{0, 0, 4, 1}, 1, 2, false, out.data());
  // Output 0: centre 1.0, taps x=0,1,2 weights 0.75, 0.75, 0.25 (normalised).
  EXPECT_NEAR(out[0], (0.75 * 0 + 0.75 * 80 + 0.25 * 160) / 1.75, 1e-4);
  EXPECT_NEAR(out[3], (0.25 * 80 + 0.75 * 160 + 0.75 * 240) / 1.75, 1e-4);
}

}  // namespace
}  // namespace drun::data
