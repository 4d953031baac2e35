// Every optimizer against its closed-form update, computed here in double
// precision, over several steps with changing gradients.
#include "optim/optimizer.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>

namespace drun::optim {
namespace {

constexpr int kSlots = 3;
using Slots = std::array<double, kSlots>;
// One element's update: step t (iterations() before the update), learning rate,
// the weight (weight decay already applied), the gradient (clipped) and the
// element's slots.
using Rule = std::function<void(int64_t t, double lr, double& w, double g, Slots& s)>;

struct Var {
  Param p;
  std::vector<double> w;
  std::vector<Slots> s;
};

// A kernel (2x3), a bias (3), a second kernel-like name with ":0", and a
// non-trainable batch-norm statistic that has a gradient buffer all the same.
std::vector<Var> make_vars(double slot_init) {
  std::vector<Var> vars;
  auto add = [&](std::string name, Shape shape, bool trainable) {
    Var v;
    v.p.name = std::move(name);
    v.p.value = Tensor(shape);
    v.p.grad = Tensor(shape);
    v.p.trainable = trainable;
    for (int64_t i = 0; i < v.p.value.numel(); ++i) {
      float x = 0.3f * static_cast<float>(i) - 0.7f + 0.05f * static_cast<float>(vars.size());
      v.p.value.f32()[i] = x;
      v.w.push_back(x);
      Slots s;
      s.fill(slot_init);
      v.s.push_back(s);
    }
    vars.push_back(std::move(v));
  };
  add("dense/kernel", {2, 3}, true);
  add("dense/bias", {3}, true);
  add("conv2d/kernel:0", {2, 2}, true);
  add("batch_normalization/moving_mean", {3}, false);
  return vars;
}

void set_grads(std::vector<Var>& vars, int step) {
  for (size_t k = 0; k < vars.size(); ++k)
    for (int64_t i = 0; i < vars[k].p.grad.numel(); ++i)
      vars[k].p.grad.f32()[i] = static_cast<float>(
          0.8 * std::sin(1.7 * static_cast<double>(i) + 0.9 * step + static_cast<double>(k)) +
          0.1 * step);
}

// Keras' clipping of the trainable variables' gradients, in place.
using Clip = std::function<void(std::vector<std::vector<double>>& grads)>;

struct Case {
  json spec;
  double slot_init;
  Rule rule;
  double weight_decay = 0;
  int steps = 4;
  Clip clip = nullptr;
};

// Runs the optimizer and the reference side by side; checks weights and slots.
void check(const Case& c) {
  SCOPED_TRACE(c.spec.dump());
  auto opt = make_optimizer(c.spec);
  auto vars = make_vars(c.slot_init);
  std::vector<Param*> params;
  for (auto& v : vars) params.push_back(&v.p);
  for (int step = 0; step < c.steps; ++step) {
    set_grads(vars, step);
    const int64_t t = opt->iterations();
    const double lr = opt->current_lr();
    std::vector<std::vector<double>> grads;
    for (auto& v : vars)
      if (v.p.trainable) grads.emplace_back(v.p.grad.f32(), v.p.grad.f32() + v.p.grad.numel());
    if (c.clip) c.clip(grads);
    size_t k = 0;
    for (auto& v : vars) {
      if (!v.p.trainable) continue;
      // Keras 3's decoupled decay, of every trainable variable, before the rule.
      for (size_t i = 0; i < v.w.size(); ++i) {
        v.w[i] -= v.w[i] * c.weight_decay * lr;
        c.rule(t, lr, v.w[i], grads[k][i], v.s[i]);
      }
      ++k;
    }
    opt->apply(params);
    EXPECT_EQ(opt->iterations(), step + 1);
    for (auto& v : vars) {
      for (size_t i = 0; i < v.w.size(); ++i) {
        const double want = v.w[i];
        EXPECT_NEAR(v.p.value.f32()[i], want, 2e-6 * std::max(1.0, std::abs(want)))
            << v.p.name << "[" << i << "] after step " << step;
      }
    }
  }
  // Slots: state() lists slot k of every trainable variable, for k = 0, 1, ...
  auto state = opt->state();
  const size_t active = 3;
  ASSERT_EQ(state.size() % active, 0u);
  for (size_t k = 0; k < state.size() / active; ++k) {
    size_t a = 0;
    for (auto& v : vars) {
      if (!v.p.trainable) continue;
      const Tensor& t = *state[k * active + a++].second;
      for (size_t i = 0; i < v.w.size(); ++i)
        EXPECT_NEAR(t.f32()[i], v.s[i][k], 2e-6 * std::max(1.0, std::abs(v.s[i][k])))
            << state[k * active + a - 1].first << "[" << i << "]";
    }
  }
}

json sgd(json config) {
  return {{"class_name", "SGD"}, {"config", config}};
}

TEST(SGD, Plain) {
  check({sgd({{"learning_rate", 0.1}}), 0,
         [](int64_t, double lr, double& w, double g, Slots&) { w -= lr * g; }});
}

TEST(SGD, DefaultLearningRateIs001) {
  check({json("sgd"), 0, [](int64_t, double lr, double& w, double g, Slots&) {
           EXPECT_NEAR(lr, 0.01, 1e-9);
           w -= lr * g;
         }});
}

TEST(SGD, Momentum) {
  check({sgd({{"learning_rate", 0.1}, {"momentum", 0.9}}), 0,
         [](int64_t, double lr, double& w, double g, Slots& s) {
           s[0] = 0.9 * s[0] - lr * g;
           w += s[0];
         }});
}

TEST(SGD, Nesterov) {
  check({sgd({{"learning_rate", 0.1}, {"momentum", 0.9}, {"nesterov", true}}), 0,
         [](int64_t, double lr, double& w, double g, Slots& s) {
           s[0] = 0.9 * s[0] - lr * g;
           w += 0.9 * s[0] - lr * g;
         }});
}

TEST(SGD, WeightDecayIsDecoupledOnEveryTrainableVariable) {
  check({sgd({{"learning_rate", 0.1}, {"momentum", 0.5}, {"weight_decay", 0.05}}), 0,
         [](int64_t, double lr, double& w, double g, Slots& s) {
           s[0] = 0.5 * s[0] - lr * g;
           w += s[0];
         },
         0.05});
}

TEST(SGD, LegacyDecay) {
  check({sgd({{"learning_rate", 0.1}, {"decay", 0.5}}), 0,
         [](int64_t t, double lr, double& w, double g, Slots&) {
           EXPECT_NEAR(lr, 0.1 / (1 + 0.5 * static_cast<double>(t)), 1e-8);
           w -= lr * g;
         }});
}

TEST(SGD, FollowsItsSchedule) {
  json pw = {{"class_name", "PiecewiseConstantDecay"},
             {"config", {{"boundaries", {0, 2}}, {"values", {0.3, 0.2, 0.1}}}}};
  check({sgd({{"learning_rate", pw}}), 0, [](int64_t t, double lr, double& w, double g, Slots&) {
           const double want = t <= 0 ? 0.3 : t <= 2 ? 0.2 : 0.1;
           EXPECT_NEAR(lr, want, 1e-7) << "step " << t;
           w -= want * g;
         }});
}

json adagrad(json config) {
  return {{"class_name", "Adagrad"}, {"config", config}};
}

TEST(Adagrad, Defaults) {
  check({adagrad(json::object()), 0.1, [](int64_t, double lr, double& w, double g, Slots& s) {
           EXPECT_NEAR(lr, 0.001, 1e-9);
           s[0] += g * g;
           w -= lr * g / (std::sqrt(s[0]) + 1e-7);
         }});
}

TEST(Adagrad, OptionsAndWeightDecay) {
  check({adagrad({{"learning_rate", 0.5},
                  {"initial_accumulator_value", 0.3},
                  {"epsilon", 0.01},
                  {"weight_decay", 0.1}}),
         0.3,
         [](int64_t, double lr, double& w, double g, Slots& s) {
           s[0] += g * g;
           w -= lr * g / (std::sqrt(s[0]) + 0.01);
         },
         0.1});
}

json adam(json config) {
  return {{"class_name", "Adam"}, {"config", config}};
}

Rule adam_rule(double b1, double b2, double eps, bool amsgrad) {
  return [=](int64_t t, double lr, double& w, double g, Slots& s) {
    const double step = static_cast<double>(t + 1);
    const double lr_t = lr * std::sqrt(1 - std::pow(b2, step)) / (1 - std::pow(b1, step));
    s[0] = b1 * s[0] + (1 - b1) * g;
    s[1] = b2 * s[1] + (1 - b2) * g * g;
    double v = s[1];
    if (amsgrad) {
      s[2] = std::max(s[2], s[1]);
      v = s[2];
    }
    w -= lr_t * s[0] / (std::sqrt(v) + eps);
  };
}

TEST(Adam, Defaults) {
  check({json("adam"), 0, adam_rule(0.9, 0.999, 1e-7, false)});
}

TEST(Adam, Options) {
  check({adam({{"learning_rate", 0.05}, {"beta_1", 0.8}, {"beta_2", 0.95}, {"epsilon", 1e-3}}), 0,
         adam_rule(0.8, 0.95, 1e-3, false), 0, 5});
}

TEST(Adam, Amsgrad) {
  // Gradients shrink in magnitude over these steps for some elements, so vhat > v matters.
  check({adam({{"learning_rate", 0.05}, {"beta_2", 0.5}, {"amsgrad", true}}), 0,
         adam_rule(0.9, 0.5, 1e-7, true), 0, 6});
}

TEST(Adam, WeightDecay) {
  check({adam({{"learning_rate", 0.05}, {"weight_decay", 0.2}}), 0,
         adam_rule(0.9, 0.999, 1e-7, false), 0.2});
}

TEST(AdamW, DecaysByItsDefaultBeforeAdamsStep) {
  check({json{{"class_name", "AdamW"}, {"config", {{"learning_rate", 0.05}}}}, 0,
         adam_rule(0.9, 0.999, 1e-7, false), 0.004});
}

TEST(AdamW, TakesAdamsOptionsAndItsOwnDecay) {
  check({json{{"class_name", "AdamW"},
              {"config", {{"learning_rate", 0.05}, {"weight_decay", 0.3}, {"amsgrad", true}}}},
         0, adam_rule(0.9, 0.999, 1e-7, true), 0.3, 5});
}

// --- Keras' gradient clipping --------------------------------------------

double sum_squares(const std::vector<double>& g) {
  double s = 0;
  for (double x : g) s += x * x;
  return s;
}

// Keras' _clip_by_norm: each gradient by its own norm.
Clip clip_by_norm(double c) {
  return [=](std::vector<std::vector<double>>& grads) {
    for (auto& g : grads) {
      const double norm = std::sqrt(sum_squares(g));
      for (double& x : g) x = x * c / std::max(norm, c);
    }
  };
}

// Keras' clip_by_global_norm.
Clip clip_by_global_norm(double c) {
  return [=](std::vector<std::vector<double>>& grads) {
    double total = 0;
    for (auto& g : grads) total += sum_squares(g);
    const double norm = std::sqrt(total);
    const double scale = c * std::min(1 / norm, 1 / c);
    for (auto& g : grads)
      for (double& x : g) x *= scale;
  };
}

Clip clip_by_value(double v) {
  return [=](std::vector<std::vector<double>>& grads) {
    for (auto& g : grads)
      for (double& x : g) x = std::clamp(x, -v, v);
  };
}

Rule sgd_rule() {
  return [](int64_t, double lr, double& w, double g, Slots&) { w -= lr * g; };
}

// The test's gradients have norms of about 1 to 1.5 per variable and about
// 2 together: each limit below clips some of them on some steps.
TEST(Clip, ClipnormClipsEachVariableByItsOwnNorm) {
  check({sgd({{"learning_rate", 0.1}, {"clipnorm", 1.0}}), 0, sgd_rule(), 0, 4, clip_by_norm(1.0)});
}

TEST(Clip, GlobalClipnormClipsEveryVariableByTheirNormTogether) {
  check({sgd({{"learning_rate", 0.1}, {"global_clipnorm", 1.5}}), 0, sgd_rule(), 0, 4,
         clip_by_global_norm(1.5)});
  check({json{{"class_name", "Adam"},
              {"config", {{"learning_rate", 0.05}, {"global_clipnorm", 1.5}}}},
         0, adam_rule(0.9, 0.999, 1e-7, false), 0, 4, clip_by_global_norm(1.5)});
}

TEST(Clip, ClipvalueClipsEveryValue) {
  check({sgd({{"learning_rate", 0.1}, {"momentum", 0.9}, {"clipvalue", 0.3}}), 0,
         [](int64_t, double lr, double& w, double g, Slots& s) {
           s[0] = 0.9 * s[0] - lr * g;
           w += s[0];
         },
         0, 4, clip_by_value(0.3)});
}

TEST(Clip, ClipsBeforeTheDecayedUpdate) {
  check({json{{"class_name", "AdamW"}, {"config", {{"learning_rate", 0.05}, {"clipnorm", 0.5}}}}, 0,
         adam_rule(0.9, 0.999, 1e-7, false), 0.004, 4, clip_by_norm(0.5)});
}

TEST(Clip, ALimitOfZeroClipsNothing) {
  check({sgd({{"learning_rate", 0.1}, {"clipnorm", 0.0}}), 0, sgd_rule()});
}

// Under a loss scale the gradient the optimizer gets is S times Keras'; the
// clip must give Keras' clipped gradient all the same, bit for bit.
TEST(Clip, AScaledGradientIsClippedAsTheUnscaledOne) {
  for (const char* clip : {"clipnorm", "global_clipnorm", "clipvalue"}) {
    SCOPED_TRACE(clip);
    const json inner = sgd({{"learning_rate", 0.1}, {clip, 0.7}});
    auto plain = make_optimizer(inner);
    auto scaled =
        make_optimizer(json{{"class_name", "LossScaleOptimizer"},
                            {"config", {{"inner_optimizer", inner}, {"initial_scale", 1024}}}});
    auto a = make_vars(0), b = make_vars(0);
    std::vector<Param*> pa, pb;
    for (auto& v : a) pa.push_back(&v.p);
    for (auto& v : b) pb.push_back(&v.p);
    for (int step = 0; step < 3; ++step) {
      set_grads(a, step);
      set_grads(b, step);
      for (auto& v : b)
        for (float& x : v.p.grad.span_f32()) x *= scaled->loss_scale();
      plain->apply(pa);
      scaled->apply(pb);
    }
    for (size_t k = 0; k < a.size(); ++k)
      for (int64_t i = 0; i < a[k].p.value.numel(); ++i)
        EXPECT_EQ(a[k].p.value.f32()[i], b[k].p.value.f32()[i]) << a[k].p.name << "[" << i << "]";
  }
}

TEST(Clip, AtMostOneClipAndNoNegativeLimit) {
  EXPECT_THROW(make_optimizer(sgd({{"clipnorm", 1.0}, {"clipvalue", 1.0}})), UsageError);
  EXPECT_THROW(make_optimizer(sgd({{"clipnorm", 1.0}, {"global_clipnorm", 1.0}})), UsageError);
  EXPECT_THROW(make_optimizer(sgd({{"clipvalue", -1.0}})), UsageError);
  // Keras writes the ones it does not use as null.
  auto opt = make_optimizer(sgd({{"clipnorm", nullptr},
                                 {"clipvalue", 0.5},
                                 {"global_clipnorm", nullptr},
                                 {"weight_decay", nullptr}}));
  EXPECT_EQ(opt->clip(), (std::pair<std::string, float>{"clipvalue", 0.5f}));
  EXPECT_EQ(opt->weight_decay(), 0.f);
}

TEST(Adam, BiasCorrectionFollowsSetIterations) {
  Param p{"dense/kernel", Tensor({1}), Tensor({1}), true};
  p.value.f32()[0] = 1.f;
  p.grad.f32()[0] = 0.5f;
  Adam opt(json{{"learning_rate", 0.1}});
  opt.set_iterations(9);  // the update uses t = 10
  Param* ps[] = {&p};
  opt.apply(ps);
  const double t = 10, g = 0.5;
  const double m = 0.1 * g, v = 0.001 * g * g;
  const double lr_t = 0.1 * std::sqrt(1 - std::pow(0.999, t)) / (1 - std::pow(0.9, t));
  EXPECT_NEAR(p.value.f32()[0], 1.0 - lr_t * m / (std::sqrt(v) + 1e-7), 1e-6);
  EXPECT_EQ(opt.iterations(), 10);
}

json rmsprop(json config) {
  return {{"class_name", "RMSprop"}, {"config", config}};
}

// tf.keras RMSprop; slots in order rms, momentum (if any), mg (if centered).
Rule rmsprop_rule(double rho, double momentum, double eps, bool centered) {
  return [=](int64_t, double lr, double& w, double g, Slots& s) {
    double& rms = s[0];
    double& mom = s[1];
    double& mg = momentum > 0 ? s[2] : s[1];
    rms = rho * rms + (1 - rho) * g * g;
    double denom = rms;
    if (centered) {
      mg = rho * mg + (1 - rho) * g;
      denom = rms - mg * mg;
    }
    if (momentum > 0) {
      mom = momentum * mom + lr * g / std::sqrt(denom + eps);
      w -= mom;
    } else {
      w -= lr * g / (std::sqrt(denom) + eps);
    }
  };
}

TEST(RMSprop, Defaults) {
  check({json("rmsprop"), 0, rmsprop_rule(0.9, 0, 1e-7, false)});
}

TEST(RMSprop, Centered) {
  check({rmsprop({{"learning_rate", 0.01}, {"rho", 0.8}, {"centered", true}}), 0,
         rmsprop_rule(0.8, 0, 1e-7, true)});
}

TEST(RMSprop, Momentum) {
  check({rmsprop({{"learning_rate", 0.01}, {"momentum", 0.7}, {"epsilon", 0.1}}), 0,
         rmsprop_rule(0.9, 0.7, 0.1, false)});
}

TEST(RMSprop, CenteredMomentumAndWeightDecay) {
  check({json{{"class_name", "RMSProp"},
              {"config",
               {{"learning_rate", 0.01},
                {"momentum", 0.5},
                {"centered", true},
                {"epsilon", 1e-3},
                {"weight_decay", 0.03}}}},
         0, rmsprop_rule(0.9, 0.5, 1e-3, true), 0.03});
}

// --- state, trainability, bookkeeping ----------------------------------------

std::vector<std::string> names(Optimizer& opt) {
  std::vector<std::string> out;
  for (auto& [name, t] : opt.state()) out.push_back(name);
  return out;
}

struct Net {
  std::vector<Var> vars = make_vars(0);
  std::vector<Param*> params;
  Net() {
    for (auto& v : vars) params.push_back(&v.p);
    set_grads(vars, 0);
  }
};

TEST(State, NamesAndOrderFollowKeras) {
  Net net;
  auto adam = make_optimizer(json{{"class_name", "Adam"}, {"config", {{"amsgrad", true}}}});
  EXPECT_TRUE(adam->state().empty());
  adam->build(net.params);
  EXPECT_EQ(names(*adam), (std::vector<std::string>{
                              "dense/kernel/m", "dense/bias/m", "conv2d/kernel/m", "dense/kernel/v",
                              "dense/bias/v", "conv2d/kernel/v", "dense/kernel/vhat",
                              "dense/bias/vhat", "conv2d/kernel/vhat"}));
  for (auto& [name, t] : adam->state()) {
    EXPECT_EQ(t->dtype(), DType::f32);
    for (float x : t->span_f32()) EXPECT_EQ(x, 0.f) << name;
  }
  EXPECT_EQ(adam->state()[0].second->shape(), Shape({2, 3}));

  auto rms = make_optimizer(
      json{{"class_name", "RMSprop"}, {"config", {{"momentum", 0.5}, {"centered", true}}}});
  rms->apply(net.params);
  auto n = names(*rms);
  ASSERT_EQ(n.size(), 9u);
  EXPECT_EQ(n[0], "dense/kernel/rms");
  EXPECT_EQ(n[3], "dense/kernel/momentum");
  EXPECT_EQ(n[8], "conv2d/kernel/mg");

  auto sgd = make_optimizer(json("sgd"));
  sgd->apply(net.params);
  EXPECT_TRUE(sgd->state().empty());
  auto msgd = make_optimizer(json{{"class_name", "SGD"}, {"config", {{"momentum", 0.9}}}});
  msgd->apply(net.params);
  EXPECT_EQ(names(*msgd), (std::vector<std::string>{"dense/kernel/momentum", "dense/bias/momentum",
                                                    "conv2d/kernel/momentum"}));

  auto ada = make_optimizer(json{{"class_name", "Adagrad"}, {"config", json::object()}});
  ada->build(net.params);
  ASSERT_EQ(ada->state().size(), 3u);
  EXPECT_EQ(ada->state()[0].first, "dense/kernel/accumulator");
  for (float x : ada->state()[1].second->span_f32()) EXPECT_FLOAT_EQ(x, 0.1f);
}

TEST(State, NonTrainableAndGradlessVariablesAreLeftAlone) {
  Net net;
  net.vars[1].p.grad = Tensor();  // a trainable bias without a gradient this step
  std::vector<float> bn(net.vars[3].p.value.span_f32().begin(),
                        net.vars[3].p.value.span_f32().end());
  std::vector<float> bias(net.vars[1].p.value.span_f32().begin(),
                          net.vars[1].p.value.span_f32().end());
  auto opt = make_optimizer(json{{"class_name", "SGD"}, {"config", {{"momentum", 0.9}}}});
  opt->apply(net.params);
  opt->apply(net.params);
  for (size_t i = 0; i < bn.size(); ++i) EXPECT_EQ(net.vars[3].p.value.f32()[i], bn[i]);
  for (size_t i = 0; i < bias.size(); ++i) EXPECT_EQ(net.vars[1].p.value.f32()[i], bias[i]);
  EXPECT_NE(net.vars[0].p.value.f32()[1], net.vars[0].w[1]);  // its gradient is not 0
  EXPECT_EQ(opt->state().size(), 3u);  // the bias still has its slot, the statistic none
}

TEST(State, UnfrozenVariableGetsSlots) {
  Net net;
  auto opt = make_optimizer(json("adam"));
  opt->apply(net.params);
  EXPECT_EQ(opt->state().size(), 6u);
  net.vars[3].p.trainable = true;
  opt->apply(net.params);
  EXPECT_EQ(opt->state().size(), 8u);
  EXPECT_NE(net.vars[3].p.value.f32()[0], static_cast<float>(net.vars[3].w[0]));
}

TEST(State, OtherVariablesAfterBuildAreAnError) {
  Net net;
  auto opt = make_optimizer(json("adam"));
  opt->apply(net.params);
  std::vector<Param*> fewer(net.params.begin(), net.params.end() - 1);
  EXPECT_THROW(opt->apply(fewer), std::invalid_argument);
  std::swap(net.params[0], net.params[1]);
  EXPECT_THROW(opt->apply(net.params), std::invalid_argument);
}

TEST(State, GradientOfTheWrongSizeIsAnError) {
  Net net;
  net.vars[0].p.grad = Tensor({5});
  auto opt = make_optimizer(json("sgd"));
  EXPECT_THROW(opt->apply(net.params), std::invalid_argument);
}

TEST(Optimizer, CloneFreshHasTheConfigAndNoState) {
  Net net;
  auto opt = make_optimizer(
      json{{"class_name", "Adam"},
           {"config", {{"learning_rate", 0.02}, {"amsgrad", true}, {"weight_decay", 0.1}}}});
  opt->apply(net.params);
  opt->apply(net.params);
  auto copy = opt->clone_fresh();
  EXPECT_EQ(copy->config(), opt->config());
  EXPECT_EQ(copy->iterations(), 0);
  EXPECT_FALSE(copy->built());
  EXPECT_TRUE(copy->state().empty());
  EXPECT_EQ(copy->class_name(), "Adam");
  EXPECT_FLOAT_EQ(copy->weight_decay(), 0.1f);
}

// Keras' keys: AdamW always writes its weight_decay (its default is not 0),
// the others only where set, and a clip only where given; each reads back.
TEST(Optimizer, ConfigWritesWeightDecayAndClipsAsKerasReadsThem) {
  const json adamw = make_optimizer(json("adamw"))->config();
  EXPECT_EQ(adamw["class_name"], "AdamW");
  EXPECT_EQ(adamw["config"]["weight_decay"].dump(), "0.004");
  EXPECT_FALSE(adamw["config"].contains("clipnorm"));
  const json no_decay =
      make_optimizer(json{{"class_name", "AdamW"}, {"config", {{"weight_decay", 0}}}})->config();
  EXPECT_EQ(no_decay["config"]["weight_decay"].dump(), "0.0");
  EXPECT_EQ(make_optimizer(no_decay)->weight_decay(), 0.f);
  for (const char* clip : {"clipnorm", "clipvalue", "global_clipnorm"}) {
    const json spec = sgd({{clip, 0.25}, {"weight_decay", 0.01}});
    const json config = make_optimizer(spec)->config();
    EXPECT_EQ(config["config"][clip].dump(), "0.25") << clip;
    EXPECT_EQ(config["config"]["weight_decay"].dump(), "0.01") << clip;
    EXPECT_EQ(make_optimizer(config)->config(), config) << clip;
    EXPECT_EQ(make_optimizer(config)->clip().first, clip);
  }
  EXPECT_FALSE(make_optimizer(json("sgd"))->config()["config"].contains("weight_decay"));
}

// A variable large enough to be split over threads: with 4 threads every
// optimizer gives the same bits as with one (the update is elementwise).
TEST(Optimizer, ThreadedUpdatesEqualOneThreadBitForBit) {
  const int64_t n = (int64_t{1} << 16) + 37;  // ranges of unequal, unaligned lengths
  for (const char* spec :
       {R"({"class_name": "SGD", "config": {"learning_rate": 0.1}})",
        R"({"class_name": "SGD", "config": {"momentum": 0.9, "nesterov": true}})",
        R"({"class_name": "Adagrad", "config": {}})",
        R"({"class_name": "Adam", "config": {"amsgrad": true}})",
        R"({"class_name": "RMSprop", "config": {"centered": true}})",
        R"({"class_name": "RMSprop", "config": {"momentum": 0.5}})"}) {
    SCOPED_TRACE(spec);
    std::array<Param, 2> p;
    std::array<std::unique_ptr<Optimizer>, 2> opt;
    for (int k = 0; k < 2; ++k) {
      p[k].name = "dense/kernel";
      p[k].value = Tensor(Shape{n});
      p[k].grad = Tensor(Shape{n});
      for (int64_t i = 0; i < n; ++i) p[k].value.f32()[i] = std::sin(0.01 * static_cast<double>(i));
      opt[k] = make_optimizer(json::parse(spec));
    }
    opt[1]->set_cpu_threads(4);
    for (int step = 0; step < 3; ++step) {
      for (int k = 0; k < 2; ++k) {
        for (int64_t i = 0; i < n; ++i)
          p[k].grad.f32()[i] = static_cast<float>(std::cos(0.37 * static_cast<double>(i) + step));
        Param* one[] = {&p[k]};
        opt[k]->apply(one);
      }
    }
    EXPECT_EQ(std::memcmp(p[0].value.f32(), p[1].value.f32(), sizeof(float) * n), 0);
    auto a = opt[0]->state(), b = opt[1]->state();
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k)
      EXPECT_EQ(std::memcmp(a[k].second->f32(), b[k].second->f32(), sizeof(float) * n), 0)
          << a[k].first;
  }
}

TEST(Optimizer, CurrentLrIsTheScheduleAtIterations) {
  auto opt = make_optimizer(json::parse(R"({"class_name": "SGD", "config": {"learning_rate": {
      "class_name": "ExponentialDecay",
      "config": {"initial_learning_rate": 1.0, "decay_steps": 1, "decay_rate": 0.5}}}})"));
  EXPECT_FLOAT_EQ(opt->current_lr(), 1.0f);
  opt->set_iterations(3);
  EXPECT_FLOAT_EQ(opt->current_lr(), 0.125f);
  EXPECT_FLOAT_EQ(opt->learning_rate().at(1), 0.5f);
}

}  // namespace
}  // namespace drun::optim
