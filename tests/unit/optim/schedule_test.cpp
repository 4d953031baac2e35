#include "optim/schedule.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

namespace drun::optim {
namespace {

json spec(const char* class_name, json config) {
  return json{{"class_name", class_name}, {"config", std::move(config)}};
}

TEST(Schedule, NumberIsConstant) {
  auto s = make_schedule(0.25);
  EXPECT_FLOAT_EQ(s->at(0), 0.25f);
  EXPECT_FLOAT_EQ(s->at(123456), 0.25f);
  EXPECT_EQ(s->config(), json(0.25));
  EXPECT_EQ(make_schedule(0.01)->config().dump(), "0.01");
}

TEST(Schedule, PiecewiseConstantFollowsKerasBoundaries) {
  // Keras: values[0] for step <= b[0], values[1] for b[0] < step <= b[1], values[2] after.
  auto s = make_schedule(
      spec("PiecewiseConstantDecay", {{"boundaries", {100, 110}}, {"values", {1.0, 0.5, 0.1}}}));
  EXPECT_FLOAT_EQ(s->at(0), 1.0f);
  EXPECT_FLOAT_EQ(s->at(99), 1.0f);
  EXPECT_FLOAT_EQ(s->at(100), 1.0f);
  EXPECT_FLOAT_EQ(s->at(101), 0.5f);
  EXPECT_FLOAT_EQ(s->at(110), 0.5f);
  EXPECT_FLOAT_EQ(s->at(111), 0.1f);
  EXPECT_FLOAT_EQ(s->at(1000000), 0.1f);
}

TEST(Schedule, PiecewiseConstantChecksLengthsAndOrder) {
  try {
    make_schedule(spec("PiecewiseConstantDecay", {{"boundaries", {10}}, {"values", {1.0}}}));
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("one more than"), std::string::npos) << e.what();
  }
  EXPECT_THROW(PiecewiseConstantDecay({20, 10}, {1.f, 2.f, 3.f}), UsageError);
}

TEST(Schedule, ExponentialDecay) {
  auto s = make_schedule(
      spec("ExponentialDecay",
           {{"initial_learning_rate", 0.1}, {"decay_steps", 10}, {"decay_rate", 0.5}}));
  EXPECT_FLOAT_EQ(s->at(0), 0.1f);
  EXPECT_FLOAT_EQ(s->at(5), static_cast<float>(0.1 * std::pow(0.5, 0.5)));
  EXPECT_FLOAT_EQ(s->at(10), 0.05f);
  EXPECT_FLOAT_EQ(s->at(25), static_cast<float>(0.1 * std::pow(0.5, 2.5)));
}

TEST(Schedule, ExponentialDecayStaircase) {
  ExponentialDecay s(0.1f, 10, 0.5f, /*staircase=*/true);
  EXPECT_FLOAT_EQ(s.at(0), 0.1f);
  EXPECT_FLOAT_EQ(s.at(9), 0.1f);
  EXPECT_FLOAT_EQ(s.at(10), 0.05f);
  EXPECT_FLOAT_EQ(s.at(19), 0.05f);
  EXPECT_FLOAT_EQ(s.at(20), 0.025f);
}

TEST(Schedule, CosineDecay) {
  auto s = make_schedule(
      spec("CosineDecay", {{"initial_learning_rate", 2.0}, {"decay_steps", 100}, {"alpha", 0.1}}));
  auto want = [](double step) {
    double c = 0.5 * (1 + std::cos(std::numbers::pi * std::min(step, 100.0) / 100.0));
    return static_cast<float>(2.0 * (0.9 * c + 0.1));
  };
  EXPECT_FLOAT_EQ(s->at(0), 2.0f);
  EXPECT_FLOAT_EQ(s->at(50), 2.0f * 0.55f);
  EXPECT_FLOAT_EQ(s->at(30), want(30));
  EXPECT_FLOAT_EQ(s->at(100), 0.2f);
  EXPECT_FLOAT_EQ(s->at(500), 0.2f);  // stays at alpha * initial
}

TEST(Schedule, CosineDecayWithKerasWarmup) {
  auto s = make_schedule(spec("CosineDecay", {{"initial_learning_rate", 0.0},
                                              {"decay_steps", 100},
                                              {"warmup_target", 1.0},
                                              {"warmup_steps", 10}}));
  EXPECT_FLOAT_EQ(s->at(0), 0.0f);
  EXPECT_FLOAT_EQ(s->at(5), 0.5f);
  EXPECT_FLOAT_EQ(s->at(10), 1.0f);
  EXPECT_FLOAT_EQ(s->at(60), 0.5f);
  EXPECT_NEAR(s->at(110), 0.0f, 1e-7);
  EXPECT_NEAR(s->at(1000), 0.0f, 1e-7);
}

TEST(Schedule, LinearWarmupRampsToTheWrappedScheduleThenFollowsIt) {
  auto s = make_schedule(
      spec("LinearWarmup",
           {{"warmup_steps", 10},
            {"after_warmup_lr_sched",
             spec("ExponentialDecay",
                  {{"initial_learning_rate", 0.1}, {"decay_steps", 10}, {"decay_rate", 0.5}})}}));
  // after(10) = 0.05: the ramp goes from 0 to 0.05 over steps 0..10, then after(step).
  EXPECT_FLOAT_EQ(s->at(0), 0.0f);
  EXPECT_FLOAT_EQ(s->at(5), 0.025f);
  EXPECT_FLOAT_EQ(s->at(9), 0.045f);
  EXPECT_FLOAT_EQ(s->at(10), 0.05f);
  EXPECT_FLOAT_EQ(s->at(20), 0.025f);

  LinearWarmup from(std::make_shared<Constant>(1.0f), 4, 0.2f);
  EXPECT_FLOAT_EQ(from.at(0), 0.2f);
  EXPECT_FLOAT_EQ(from.at(2), 0.6f);
  EXPECT_FLOAT_EQ(from.at(4), 1.0f);
  EXPECT_FLOAT_EQ(from.at(7), 1.0f);
}

TEST(Schedule, LinearWarmupOfZeroStepsIsTheWrappedSchedule) {
  LinearWarmup s(std::make_shared<Constant>(0.3f), 0);
  EXPECT_FLOAT_EQ(s.at(0), 0.3f);
}

TEST(Schedule, ConfigRoundTrips) {
  std::vector<json> specs = {
      json(0.5),
      spec("PiecewiseConstantDecay",
           {{"boundaries", {3, 7}}, {"values", {0.3, 0.2, 0.1}}, {"name", "pw"}}),
      spec("ExponentialDecay", {{"initial_learning_rate", 0.1},
                                {"decay_steps", 4},
                                {"decay_rate", 0.9},
                                {"staircase", true}}),
      spec("CosineDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", 9}, {"alpha", 0.01}}),
      spec("CosineDecay", {{"initial_learning_rate", 0.0},
                           {"decay_steps", 9},
                           {"warmup_target", 0.1},
                           {"warmup_steps", 3}}),
      spec("LinearWarmup",
           {{"warmup_steps", 3}, {"warmup_learning_rate", 0.01}, {"after_warmup_lr_sched", 0.1}}),
  };
  for (const json& sp : specs) {
    auto a = make_schedule(sp);
    json c = a->config();
    auto b = make_schedule(c);
    EXPECT_EQ(b->config(), c);
    for (int64_t step = 0; step < 20; ++step) EXPECT_EQ(a->at(step), b->at(step)) << c.dump();
  }
  auto e = make_schedule(specs[2])->config();
  EXPECT_EQ(e["class_name"], "ExponentialDecay");
  EXPECT_EQ(e["config"]["initial_learning_rate"].dump(), "0.1");
  EXPECT_EQ(e["config"]["decay_steps"], 4);
  EXPECT_EQ(e["config"]["staircase"], true);
  EXPECT_TRUE(e["config"]["name"].is_null());
}

TEST(Schedule, AcceptsKeras3Envelope) {
  json sp = spec("ExponentialDecay",
                 {{"initial_learning_rate", 0.1}, {"decay_steps", 10}, {"decay_rate", 0.5}});
  sp["module"] = "keras.optimizers.schedules";
  sp["registered_name"] = nullptr;
  EXPECT_FLOAT_EQ(make_schedule(sp)->at(10), 0.05f);
}

std::string error_of(const json& sp) {
  try {
    make_schedule(sp);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Schedule, Errors) {
  std::string e = error_of(spec("StepDecay", json::object()));
  EXPECT_NE(e.find("unknown learning-rate schedule class 'StepDecay'"), std::string::npos) << e;
  EXPECT_NE(e.find("CosineDecay, ExponentialDecay, LinearWarmup, PiecewiseConstantDecay"),
            std::string::npos)
      << e;

  e = error_of(spec("ExponentialDecay",
                    {{"initial_learning_rate", 0.1}, {"decay_step", 10}, {"decay_rate", 0.5}}));
  EXPECT_NE(e.find("unknown option 'decay_step'"), std::string::npos) << e;
  EXPECT_NE(e.find("decay_steps"), std::string::npos) << e;
  EXPECT_NE(e.find("staircase"), std::string::npos) << e;

  e = error_of(spec("ExponentialDecay", {{"initial_learning_rate", 0.1}, {"decay_rate", 0.5}}));
  EXPECT_NE(e.find("'decay_steps' is required"), std::string::npos) << e;

  e = error_of(spec("ExponentialDecay",
                    {{"initial_learning_rate", "fast"}, {"decay_steps", 10}, {"decay_rate", 0.5}}));
  EXPECT_NE(e.find("'initial_learning_rate' has the wrong type"), std::string::npos) << e;

  e = error_of(spec("CosineDecay", {{"initial_learning_rate", 0.1}, {"decay_steps", 0}}));
  EXPECT_NE(e.find("decay_steps must be positive"), std::string::npos) << e;

  e = error_of("fast");
  EXPECT_NE(e.find("expected a number"), std::string::npos) << e;
  e = error_of(json{{"config", json::object()}});
  EXPECT_NE(e.find("'class_name' is required"), std::string::npos) << e;
  e = error_of(json{{"class_name", "CosineDecay"}, {"configs", json::object()}});
  EXPECT_NE(e.find("unknown option 'configs'"), std::string::npos) << e;
  e = error_of(spec("LinearWarmup", {{"warmup_steps", 3}}));
  EXPECT_NE(e.find("after_warmup_lr_sched"), std::string::npos) << e;
}

}  // namespace
}  // namespace drun::optim
