// Shape: inline dimensions, negative indices from the end, batch helpers, and
// the errors for shapes that cannot exist.
#include "tensor/shape.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <vector>

namespace drun {
namespace {

TEST(Shape, DimsRankAndCounts) {
  const Shape s{64, 26, 26, 32};
  EXPECT_EQ(s.rank(), 4);
  EXPECT_EQ(s[0], 64);
  EXPECT_EQ(s[3], 32);
  EXPECT_EQ(s[-1], 32);  // from the end, as in Python
  EXPECT_EQ(s[-4], 64);
  EXPECT_EQ(s.numel(), 64 * 26 * 26 * 32);
  EXPECT_EQ(s.inner(), 26 * 26 * 32);
  EXPECT_EQ(s.dims(), (std::vector<int64_t>{64, 26, 26, 32}));
}

TEST(Shape, ScalarAndZeroSized) {
  const Shape scalar;
  EXPECT_EQ(scalar.rank(), 0);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.str(), "()");
  const Shape empty{0, 10};
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.inner(), 10);
}

TEST(Shape, FromVectorEqualsFromList) {
  EXPECT_EQ(Shape(std::vector<int64_t>{2, 3}), (Shape{2, 3}));
  EXPECT_NE((Shape{2, 3}), (Shape{3, 2}));
  EXPECT_NE((Shape{6}), (Shape{6, 1}));
}

TEST(Shape, WritableThroughIndex) {
  Shape s{4, 5};
  s[0] = 7;
  s[-1] = 9;
  EXPECT_EQ(s, (Shape{7, 9}));
}

TEST(Shape, BatchHelpers) {
  const Shape image{28, 28, 1};
  EXPECT_EQ(image.with_batch(64), (Shape{64, 28, 28, 1}));
  EXPECT_EQ(image.with_batch(64).drop_batch(), image);
  EXPECT_EQ(Shape{}.drop_batch(), Shape{});
  EXPECT_EQ((Shape{5}).drop_batch().rank(), 0);
  const Shape full{1, 2, 3, 4, 5, 6};
  EXPECT_THROW(full.with_batch(1), std::invalid_argument);
}

TEST(Shape, PrintsAsKerasAndPython) {
  EXPECT_EQ((Shape{64, 10}).str(), "(64, 10)");
  EXPECT_EQ((Shape{64, 10}).str(true), "(None, 10)");
  EXPECT_EQ((Shape{3}).str(), "(3,)");  // a 1-tuple, as Python prints it
}

TEST(Shape, RefusesImpossibleShapes) {
  EXPECT_THROW((Shape{1, 2, 3, 4, 5, 6, 7}), std::invalid_argument);
  EXPECT_THROW((Shape{2, -1}), std::invalid_argument);
  EXPECT_THROW(Shape(std::vector<int64_t>(Shape::kMaxRank + 1, 1)), std::invalid_argument);
}

}  // namespace
}  // namespace drun
