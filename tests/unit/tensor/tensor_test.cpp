// Tensor: aligned storage shared by copies, ensure() that reuses what it has,
// views (reshaped, rows) over the same memory, deep copies, and the errors a
// caller's mistake gets.
#include "tensor/tensor.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace drun {
namespace {

TEST(Tensor, AllocatesAlignedAndTyped) {
  Tensor t(Shape{3, 5});
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.numel(), 15);
  EXPECT_EQ(t.bytes(), 15 * sizeof(float));
  EXPECT_EQ(t.dtype(), DType::f32);
  EXPECT_EQ(t.device(), Device::cpu);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t.raw()) % Storage::kAlign, 0u);
  Tensor labels(Shape{7}, DType::i32);
  EXPECT_EQ(labels.bytes(), 7 * sizeof(int32_t));
  EXPECT_EQ(std::string(dtype_name(labels.dtype())), "int32");
}

TEST(Tensor, ZerosAndFill) {
  Tensor z = Tensor::zeros(Shape{4, 4});
  for (float v : z.span_f32()) EXPECT_EQ(v, 0.0f);
  z.fill(2.5f);
  for (float v : z.span_f32()) EXPECT_EQ(v, 2.5f);
  z.zero();
  for (float v : z.span_f32()) EXPECT_EQ(v, 0.0f);
}

TEST(Tensor, CopiesShareStorageCloneDoesNot) {
  Tensor a = Tensor::zeros(Shape{4});
  Tensor shared = a;
  Tensor deep = a.clone();
  a.f32()[2] = 9.0f;
  EXPECT_EQ(shared.f32()[2], 9.0f);
  EXPECT_EQ(deep.f32()[2], 0.0f);
  EXPECT_NE(deep.raw(), a.raw());
}

TEST(Tensor, EnsureReusesStorageUntilItMustGrow) {
  Tensor t(Shape{8, 8});
  const void* first = t.raw();
  t.ensure(Shape{4, 8});  // smaller: same memory
  EXPECT_EQ(t.raw(), first);
  EXPECT_EQ(t.shape(), (Shape{4, 8}));
  t.ensure(Shape{8, 8});  // back to the capacity it has: still the same memory
  EXPECT_EQ(t.raw(), first);
  t.ensure(Shape{16, 8});  // larger: new memory
  EXPECT_EQ(t.shape(), (Shape{16, 8}));
  EXPECT_GE(t.capacity_bytes(), 16 * 8 * sizeof(float));
  Tensor fresh;
  EXPECT_FALSE(fresh.defined());
  fresh.ensure(Shape{3}, DType::i32);
  EXPECT_TRUE(fresh.defined());
  EXPECT_EQ(fresh.dtype(), DType::i32);
}

TEST(Tensor, ReshapedAndRowsAreViews) {
  Tensor t(Shape{4, 3});
  for (int i = 0; i < 12; ++i) t.f32()[i] = static_cast<float>(i);
  Tensor flat = t.reshaped(Shape{12});
  EXPECT_EQ(flat.raw(), t.raw());
  Tensor middle = t.rows(1, 3);
  EXPECT_EQ(middle.shape(), (Shape{2, 3}));
  EXPECT_EQ(middle.f32()[0], 3.0f);
  EXPECT_EQ(middle.f32()[5], 8.0f);
  middle.f32()[0] = -1.0f;
  EXPECT_EQ(t.f32()[3], -1.0f);
  EXPECT_EQ(t.rows(4, 4).numel(), 0);
}

TEST(Tensor, CopyFromChecksSizeAndType) {
  Tensor a(Shape{2, 3}), b(Shape{6});
  for (int i = 0; i < 6; ++i) b.f32()[i] = static_cast<float>(i);
  a.copy_from(b);  // same count, another shape: allowed
  EXPECT_EQ(a.f32()[5], 5.0f);
  Tensor c(Shape{5});
  EXPECT_THROW(a.copy_from(c), std::invalid_argument);
  Tensor ints(Shape{6}, DType::i32);
  EXPECT_THROW(a.copy_from(ints), std::invalid_argument);
}

TEST(Tensor, BorrowedMemoryIsNotOwned) {
  alignas(64) float buffer[6] = {1, 2, 3, 4, 5, 6};
  {
    Tensor view = Tensor::borrowed(buffer, Shape{2, 3});
    EXPECT_EQ(view.raw(), buffer);
    view.f32()[0] = 10.0f;
  }  // the view's end must leave the buffer alone
  EXPECT_EQ(buffer[0], 10.0f);
}

TEST(Tensor, ToTheSameDeviceIsTheSameTensor) {
  Tensor a(Shape{3});
  EXPECT_EQ(a.to(Device::cpu).raw(), a.raw());
}

TEST(Tensor, MisuseIsAnError) {
  Tensor undefined;
  EXPECT_THROW(undefined.f32(), std::logic_error);
  Tensor floats(Shape{2});
  EXPECT_THROW(floats.i32(), std::logic_error);
  EXPECT_THROW(floats.reshaped(Shape{3}), std::invalid_argument);
  Tensor rows(Shape{4, 2});
  EXPECT_THROW(rows.rows(2, 5), std::out_of_range);
  EXPECT_THROW(rows.rows(3, 2), std::out_of_range);
  EXPECT_THROW(rows.rows(-1, 1), std::out_of_range);
}

}  // namespace
}  // namespace drun
