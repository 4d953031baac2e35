// libdrun's public API (include/drun) as a program that embeds drun sees it:
// only the public headers, errors as drun::Error naming what was wrong, and a
// model that trains, predicts, saves and loads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <drun/drun.hpp>
#include <filesystem>
#include <string>
#include <type_traits>

namespace {

// The tests' toy problem (tests/lua/toy_points.lua): 64 points on a grid in
// [-1, 1]^2, labelled by the side of a line they fall on.
drun::Dataset toy_points() {
  std::vector<float> x;
  std::vector<int> y;
  for (int i = 1; i <= 64; ++i) {
    const float a = static_cast<float>(i % 8) / 4 - 1, b = static_cast<float>(i / 8) / 4 - 1;
    x.insert(x.end(), {a, b});
    y.push_back(a + 0.5f * b > 0.1f ? 1 : 0);
  }
  return drun::Dataset::arrays(x, {2}, y);
}

drun::Model small_classifier(const drun::Runtime& runtime) {
  return drun::Model::sequential(
      runtime,
      {{"Dense", {{"units", 16}, {"activation", "relu"}, {"input_shape", {2}}}},
       {"Dense", {{"units", 2}}}},
      1);
}

drun::Loss logits_loss() {
  return {"SparseCategoricalCrossentropy", {{"from_logits", true}}};
}

// The message of the drun::Error that f throws ("" when it throws none).
template <class F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const drun::Error& e) {
    return e.what();
  }
  return "";
}

drun::RuntimeSettings quiet() {
  drun::RuntimeSettings s;
  s.quiet = true;
  s.threads = 1;
  return s;
}

TEST(Api, OneProcessIsTheChiefOfOneWorker) {
  drun::Runtime runtime(quiet());
  EXPECT_EQ(runtime.rank(), 0);
  EXPECT_EQ(runtime.workers(), 1);
  EXPECT_EQ(runtime.role(), "chief");
  EXPECT_TRUE(runtime.is_chief());
  EXPECT_EQ(runtime.threads(), 1);
  EXPECT_STRNE(drun::kVersion, "");
}

// The device is chosen as drun chooses it; an unknown one is refused.
TEST(Api, TheRuntimeComputesOnTheDeviceItIsGiven) {
  auto s = quiet();
  EXPECT_EQ(s.device, "cpu");
  s.device = "tpu";
  EXPECT_NE(error_of([&] { drun::Runtime runtime(s); }).find("device 'tpu'"), std::string::npos);
}

// A preempted fit is a drun::Error that carries the exit code to end with.
static_assert(std::is_base_of_v<drun::Error, drun::Preempted>);
TEST(Api, APreemptedFitCarriesItsExitCode) {
  const drun::Preempted preempted("preempted at step 3", 75);
  EXPECT_EQ(preempted.exit_code(), 75);
  EXPECT_STREQ(preempted.what(), "preempted at step 3");
}

TEST(Api, TrainsPredictsSavesAndLoads) {
  drun::Runtime runtime(quiet());
  auto model = small_classifier(runtime);
  EXPECT_EQ(model.param_count(), 2 * 16 + 16 + 16 * 2 + 2);
  model.compile({"Adam", {{"learning_rate", 0.05}}}, logits_loss(), {"accuracy"});
  const auto data = toy_points();
  EXPECT_EQ(data.size(), 64);
  EXPECT_EQ(data.example_shape(), std::vector<int64_t>{2});
  const auto before = model.evaluate(data.batch(64));
  drun::FitOptions fit;
  fit.epochs = 40;
  const auto result = model.fit(data.shuffle(3).batch(16), fit);
  EXPECT_EQ(result.global_step, 160);
  EXPECT_NE(result.summary_json.find("\"global_step\": 160"), std::string::npos);
  const auto after = model.evaluate(data.batch(64));
  EXPECT_EQ(after.examples, 64);
  EXPECT_LT(after.metrics.at("loss"), before.metrics.at("loss") / 2);
  EXPECT_GE(after.metrics.at("accuracy"), 0.9);

  const auto predicted = model.predict(data.batch(64));
  ASSERT_EQ(predicted.shape, (std::vector<int64_t>{64, 2}));
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("drun_api_test_" + std::to_string(getpid()) + ".h5"))
                               .string();
  model.save(path);
  auto loaded = drun::Model::load(runtime, path);  // uncompiled: predict only
  const auto again = loaded.predict(data.batch(64));
  std::remove(path.c_str());
  ASSERT_EQ(again.values.size(), predicted.values.size());
  for (size_t i = 0; i < again.values.size(); ++i)
    EXPECT_FLOAT_EQ(again.values[i], predicted.values[i]) << "output " << i;
}

TEST(Api, BadInputIsAnErrorThatNamesIt) {
  drun::Runtime runtime(quiet());
  EXPECT_NE(error_of([&] {
              drun::Model::sequential(
                  runtime, {{"Dense", {{"units", 3}, {"unitz", 3}, {"input_shape", {2}}}}});
            }).find("unitz"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              drun::Model::sequential(
                  runtime, {{"Dense", {{"units", 3}, {"units", 4}, {"input_shape", {2}}}}});
            }).find("'units' given twice"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              drun::Model::sequential(runtime, {{"Dense3D", {{"input_shape", {2}}}}});
            }).find("Dense3D"),
            std::string::npos);

  auto model = small_classifier(runtime);
  const auto data = toy_points().batch(8);
  EXPECT_NE(error_of([&] { model.fit(data); }).find("compile the model first"), std::string::npos);
  EXPECT_NE(error_of([&] { model.compile({"Adamm"}, logits_loss()); }).find("Adamm"),
            std::string::npos);
  model.compile({"SGD"}, logits_loss());
  drun::FitOptions bad_strategy;
  bad_strategy.strategy.name = "AllReduceX";
  EXPECT_NE(error_of([&] { model.fit(data, bad_strategy); }).find("AllReduceX"), std::string::npos);
  drun::FitOptions epochs_twice;
  epochs_twice.more = {{"epochs", 2}};
  EXPECT_NE(error_of([&] { model.fit(data, epochs_twice); }).find("FitOptions"), std::string::npos);

  EXPECT_NE(error_of([] {
              drun::Dataset::arrays({1, 2, 3}, {2}, {0, 1});
            }).find("need 4 values"),
            std::string::npos);
  EXPECT_NE(error_of([] { drun::Dataset::arrays({1, 2}, {2}, {-1}); }), "");
  EXPECT_NE(error_of([] { toy_points().batch(0); }), "");
  EXPECT_NE(error_of([] { drun::Dataset::csv("x.csv", "{label"); }).find("JSON object"),
            std::string::npos);
  EXPECT_NE(error_of([] { drun::Dataset::fashion_mnist("validation"); }).find("validation"),
            std::string::npos);
  EXPECT_NE(
      error_of([&] { drun::Model::load(runtime, "/nonexistent/m.h5"); }).find("/nonexistent/m.h5"),
      std::string::npos);
}

}  // namespace
