// The optimizer's steady-state apply() allocates nothing (allocation_counter.cpp
// counts every global operator new).
#include <gtest/gtest.h>

#include "allocation_counter.hpp"
#include "optim/optimizer.hpp"

namespace drun::optim {
namespace {

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

  testing::AllocationCounter counter;
  opt->apply(params);
  opt->apply(params);
  (void)opt->current_lr();
  EXPECT_EQ(counter.stop(), 0) << spec.dump();

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
