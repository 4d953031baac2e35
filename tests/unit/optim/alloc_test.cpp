// The steady-state step allocates nothing: every form of global operator new is
// replaced here (for this test executable) by one that counts while asked to.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include "optim/optimizer.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocs{0};

void* allocate(std::size_t n, std::size_t align) {
  if (g_counting.load(std::memory_order_relaxed)) g_allocs.fetch_add(1, std::memory_order_relaxed);
  if (n == 0) n = 1;
  void* p = nullptr;
  if (align <= alignof(std::max_align_t)) {
    p = std::malloc(n);
  } else {
    p = std::aligned_alloc(align, (n + align - 1) / align * align);
  }
  return p;
}
void* allocate_or_throw(std::size_t n, std::size_t align) {
  void* p = allocate(n, align);
  if (!p) throw std::bad_alloc();
  return p;
}
constexpr std::size_t kDefault = alignof(std::max_align_t);
}  // namespace

void* operator new(std::size_t n) {
  return allocate_or_throw(n, kDefault);
}
void* operator new[](std::size_t n) {
  return allocate_or_throw(n, kDefault);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n, kDefault);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n, kDefault);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}

namespace drun::optim {
namespace {

TEST(Allocation, CounterSeesAlignedAndPlainNew) {
  g_allocs = 0;
  g_counting = true;
  {
    Tensor t({16});        // aligned new inside Storage, plus the shared_ptr block
    auto* i = new int(3);  // plain new
    delete i;
  }
  g_counting = false;
  EXPECT_GE(g_allocs.load(), 3);
}

class SteadyState : public ::testing::TestWithParam<const char*> {};

TEST_P(SteadyState, SecondApplyAllocatesNothing) {
  std::vector<Param> vars = {
      {"conv2d/kernel", Tensor::zeros({3, 3, 1, 8}), Tensor::zeros({3, 3, 1, 8}), true},
      {"conv2d/bias", Tensor::zeros({8}), Tensor::zeros({8}), true},
      {"batch_normalization/moving_mean", Tensor::zeros({8}), Tensor(), false},
      {"dense/kernel", Tensor::zeros({72, 10}), Tensor::zeros({72, 10}), true},
  };
  for (auto& v : vars)
    if (v.grad.defined()) v.grad.fill(0.25f);
  std::vector<Param*> params;
  for (auto& v : vars) params.push_back(&v);

  json spec = json::parse(GetParam());
  auto opt = make_optimizer(spec);
  opt->apply(params);  // builds the slots
  std::vector<const void*> before;
  for (auto& [name, t] : opt->state()) before.push_back(t->raw());

  g_allocs = 0;
  g_counting = true;
  opt->apply(params);
  opt->apply(params);
  (void)opt->current_lr();
  g_counting = false;
  EXPECT_EQ(g_allocs.load(), 0) << spec.dump();

  auto state = opt->state();
  ASSERT_EQ(state.size(), before.size());
  for (size_t i = 0; i < state.size(); ++i) EXPECT_EQ(state[i].second->raw(), before[i]);
  EXPECT_EQ(opt->iterations(), 3);
}

INSTANTIATE_TEST_SUITE_P(
    Optimizers, SteadyState,
    ::testing::Values(
        R"({"class_name": "SGD", "config": {"learning_rate": 0.1}})",
        R"({"class_name": "SGD", "config": {"momentum": 0.9, "nesterov": true, "weight_decay": 1e-4}})",
        R"({"class_name": "Adagrad", "config": {}})",
        R"({"class_name": "Adam", "config": {"amsgrad": true, "decay": 0.01}})",
        R"({"class_name": "RMSprop", "config": {"momentum": 0.9, "centered": true}})",
        R"({"class_name": "RMSprop", "config": {"learning_rate": {"class_name": "LinearWarmup",
            "config": {"warmup_steps": 2, "after_warmup_lr_sched": {"class_name": "PiecewiseConstantDecay",
            "config": {"boundaries": [1], "values": [0.1, 0.01]}}}}}})"));

}  // namespace
}  // namespace drun::optim
