// Keras' callbacks in C++: EarlyStopping and ReduceLROnPlateau fed a fixed
// sequence of val_loss give Keras 3's stopping epochs and learning rates (the
// expected values are Keras' own on the same sequence; tests/interop's
// keras_callbacks_test.py checks a real fit's sequence against Keras too);
// ModelCheckpoint with save_best_only keeps exactly the best epochs' files;
// a real fit stops where EarlyStopping says and restores the best epoch's
// weights bit for bit; a fit killed in the middle and resumed ends as the
// uninterrupted one; bad options are UsageErrors naming the callback.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "data/arrays.hpp"
#include "temp_file.hpp"
#include "toy_fit.hpp"
#include "train/callbacks/callback_registry.hpp"
#include "train/callbacks/model_checkpoint.hpp"
#include "train/trainer.hpp"

namespace drun::train {
namespace {

namespace fs = std::filesystem;

const std::vector<double> kValLoss = {1.0,  0.9,    0.95, 0.8999, 0.91, 0.92, 0.85,
                                      0.86, 0.8501, 0.87, 0.88,   0.89, 0.9,  0.91};

// A control without a model: it records what the callbacks do.
class FakeControl final : public CallbackControl {
 public:
  bool chief() const override { return true; }
  double learning_rate() const override { return lr; }
  void set_learning_rate(double v) override { lr = static_cast<float>(v); }
  void stop_training() override { stopped = true; }
  std::vector<Tensor> weights() const override { return {}; }
  void set_weights(const std::vector<Tensor>&) override {}
  void save_model(const std::string& path, bool) override { saved.push_back(path); }
  float lr = 0.1f;
  bool stopped = false;
  std::vector<std::string> saved;
};

std::unique_ptr<Callback> make(const std::string& name, const json& options) {
  return make_callback(name, options);
}

// The epoch (from 0) at which the callback stops on kValLoss; -1: never.
int64_t stop_epoch(const json& options) {
  auto cb = make("EarlyStopping", options);
  FakeControl c;
  cb->train_begin(c);
  for (size_t e = 0; e < kValLoss.size(); ++e) {
    cb->epoch_end(static_cast<int64_t>(e), Logs{{{"val_loss", kValLoss[e]}}}, c);
    if (c.stopped) return static_cast<int64_t>(e);
  }
  return -1;
}

TEST(EarlyStopping, StopsAtKerasEpoch) {
  // keras.callbacks.EarlyStopping on the same sequence stops at these epochs.
  EXPECT_EQ(stop_epoch({{"patience", 2}}), 5);
  EXPECT_EQ(stop_epoch({{"patience", 2}, {"min_delta", 0.01}}), 3);
  EXPECT_EQ(stop_epoch({{"patience", 3}, {"baseline", 0.86}}), 2);
  EXPECT_EQ(stop_epoch({{"patience", 1}, {"start_from_epoch", 3}}), 4);
}

TEST(ReduceLROnPlateau, FollowsKerasRates) {
  const auto rates = [](const json& options) {
    auto cb = make("ReduceLROnPlateau", options);
    FakeControl c;
    std::vector<float> out;
    for (size_t e = 0; e < kValLoss.size(); ++e) {
      cb->epoch_end(static_cast<int64_t>(e), Logs{{{"val_loss", kValLoss[e]}}}, c);
      out.push_back(c.lr);
    }
    return out;
  };
  // keras.callbacks.ReduceLROnPlateau's optimizer.learning_rate after each epoch.
  const std::vector<float> halved = {0.1f,          0.1f,          0.05f,        0.025f,
                                     0.0125f,       0.00625f,      0.00625f,     0.003125f,
                                     0.0015625f,    0.00078125f,   0.000390625f, 0.0001953125f,
                                     9.765625e-05f, 4.8828125e-05f};
  EXPECT_EQ(rates({{"patience", 1}, {"factor", 0.5}}), halved);
  const std::vector<float> cooled = {0.1f,   0.1f,  0.1f,  0.05f, 0.05f, 0.025f, 0.025f,
                                     0.025f, 0.02f, 0.02f, 0.02f, 0.02f, 0.02f,  0.02f};
  EXPECT_EQ(rates({{"patience", 2},
                   {"factor", 0.5},
                   {"cooldown", 1},
                   {"min_lr", 0.02},
                   {"min_delta", 0.01}}),
            cooled);
}

TEST(ModelCheckpoint, SaveBestOnlyKeepsTheBestEpochs) {
  auto cb = make("ModelCheckpoint",
                 {{"filepath", "m-{epoch:02d}-{val_loss:.4f}.h5"}, {"save_best_only", true}});
  FakeControl c;
  for (size_t e = 0; e < 8; ++e)
    cb->epoch_end(static_cast<int64_t>(e), Logs{{{"val_loss", kValLoss[e]}}}, c);
  EXPECT_EQ(c.saved, (std::vector<std::string>{"m-01-1.0000.h5", "m-02-0.9000.h5", "m-04-0.8999.h5",
                                               "m-07-0.8500.h5"}));
}

TEST(Callbacks, BadOptionsNameTheCallback) {
  const auto message = [](const std::string& name, const json& options) {
    try {
      make(name, options);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("ReduceLROnPlateau", {{"factor", 1.5}}).find("factor"), std::string::npos);
  EXPECT_NE(message("EarlyStopping", {{"mode", "up"}}).find("EarlyStopping"), std::string::npos);
  EXPECT_NE(message("EarlyStopping", {{"monitor", "val_thing"}}).find("val_thing"),
            std::string::npos);
  EXPECT_NE(message("ModelCheckpoint", json::object()).find("filepath"), std::string::npos);
  EXPECT_NE(message("NoSuchCallback", json::object()).find("EarlyStopping"), std::string::npos);
  const auto field = [] {
    Options o({{"filepath", "{val_acc:.2f}.h5"}}, "ModelCheckpoint",
              model_checkpoint_callback().about.schema);
    return ModelCheckpoint(o).path_for(0, Logs{{{"val_loss", 1.0}}});
  };
  EXPECT_THROW(field(), UsageError);
}

using testing::TempDir;

// SGD at 0.05 on the toy fit (toy_fit.hpp).
struct Fixture : testing::ToyFit {
  Fixture() : ToyFit({{"class_name", "SGD"}, {"config", {{"learning_rate", 0.05}}}}) {}
};

// Keeps each epoch's weights and learning rate.
class Recorder final : public Callback {
 public:
  std::string name() const override { return "Recorder"; }
  void epoch_end(int64_t, const Logs& logs, CallbackControl& c) override {
    weights.push_back(c.weights());
    rates.push_back(*logs.get("learning_rate"));
    EXPECT_TRUE(logs.get("val_loss").has_value());
  }
  std::vector<std::vector<Tensor>> weights;
  std::vector<double> rates;
};

std::vector<float> values(const std::vector<Tensor>& ts) {
  std::vector<float> out;
  for (const Tensor& t : ts)
    for (float v : t.span_f32()) out.push_back(v);
  return out;
}

std::vector<float> model_values(nn::Model& m) {
  std::vector<float> out;
  for (const Param* p : m.params())
    for (float v : p->value.span_f32()) out.push_back(v);
  return out;
}

// No epoch improves val_loss by 1000 on the first: EarlyStopping(patience 2)
// stops after epoch 2 and restores epoch 0's weights.
TEST(Callbacks, RealFitStopsAndRestoresTheBestWeights) {
  Fixture f;
  Recorder recorder;
  auto early = make("EarlyStopping",
                    {{"patience", 2}, {"min_delta", 1000.0}, {"restore_best_weights", true}});
  FitConfig config;
  config.epochs = 10;
  config.callbacks = {&recorder, early.get()};
  const FitResult r = f.trainer.fit(f.train, &f.eval, config, f.progress);
  EXPECT_EQ(r.epochs, 3);
  EXPECT_EQ(r.global_step, 12);
  EXPECT_TRUE(r.stopped_by_hook);
  ASSERT_EQ(recorder.weights.size(), 3u);
  EXPECT_NE(values(recorder.weights[0]), values(recorder.weights[2]));
  EXPECT_EQ(model_values(f.model), values(recorder.weights[0]));
}

// A run EarlyStopping ended is done: its rerun takes no step.
TEST(Callbacks, RerunOfAStoppedRunTrainsNoFurther) {
  TempDir dir;
  FitConfig config;
  config.epochs = 10;
  config.model_dir = dir.path();
  config.save_checkpoints_steps = 4;
  for (int run = 0; run < 2; ++run) {
    Fixture f;
    auto early = make("EarlyStopping", {{"patience", 1}, {"min_delta", 1000.0}});
    config.callbacks = {early.get()};
    const bool resumed = f.trainer.restore(dir.path(), [](const std::string&) {}).has_value();
    const FitResult r = f.trainer.fit(f.train, &f.eval, config, f.progress);
    EXPECT_EQ(resumed, run == 1);
    EXPECT_EQ(r.global_step, 8);
    EXPECT_EQ(r.already_done, run == 1);
  }
}

// Uninterrupted; killed after the checkpoint at the end of epoch 1 (step 8)
// and resumed; and 2 epochs, then rerun for 10: the same epochs, rates and
// weights, bit for bit.
TEST(Callbacks, ResumedRunEndsAsUninterrupted) {
  const auto run = [](const std::string& dir, int64_t kill_at, Recorder& recorder,
                      int64_t epochs = 10) {
    Fixture f;
    auto early = make("EarlyStopping",
                      {{"patience", 4}, {"min_delta", 1000.0}, {"restore_best_weights", true}});
    auto plateau =
        make("ReduceLROnPlateau", {{"patience", 1}, {"factor", 0.5}, {"min_delta", 1000.0}});
    // Throws before step kill_at + 1, as a killed process stops there.
    struct Killer final : Hook {
      int64_t at = 0;
      std::string name() const override { return "Killer"; }
      void before_step(int64_t step) override {
        if (at > 0 && step == at) throw std::runtime_error("killed");
      }
    } killer;
    killer.at = kill_at;
    FitConfig config;
    config.epochs = epochs;
    config.model_dir = dir;
    config.save_checkpoints_steps = 4;
    config.callbacks = {&recorder, early.get(), plateau.get()};
    config.hooks = {&killer};
    f.trainer.restore(dir, [](const std::string&) {});
    try {
      const FitResult r = f.trainer.fit(f.train, &f.eval, config, f.progress);
      return std::make_pair(r.epochs, model_values(f.model));
    } catch (const std::runtime_error&) {
      return std::make_pair(int64_t{-1}, std::vector<float>{});
    }
  };
  TempDir whole, parts;
  Recorder all, first, second;
  const auto uninterrupted = run(whole.path(), 0, all);
  EXPECT_EQ(uninterrupted.first, 5);
  EXPECT_EQ(run(parts.path(), 10, first).first, -1);
  const auto resumed = run(parts.path(), 0, second);
  EXPECT_EQ(resumed.first, uninterrupted.first);
  EXPECT_EQ(resumed.second, uninterrupted.second);  // epoch 0's, restored from the checkpoint
  ASSERT_EQ(second.weights.size(), 3u);             // epochs 2, 3, 4
  EXPECT_EQ(values(second.weights.back()), values(all.weights.back()));
  EXPECT_EQ(second.rates, std::vector<double>(all.rates.begin() + 2, all.rates.end()));
  EXPECT_EQ(all.rates[4], 0.05f * 0.125f);  // reduced after epochs 1, 2, 3

  TempDir longer;
  Recorder two, more;
  EXPECT_EQ(run(longer.path(), 0, two, 2).first, 2);
  const auto continued = run(longer.path(), 0, more);
  EXPECT_EQ(continued.first, uninterrupted.first);
  EXPECT_EQ(continued.second, uninterrupted.second);
  EXPECT_EQ(more.rates, std::vector<double>(all.rates.begin() + 2, all.rates.end()));
}

}  // namespace
}  // namespace drun::train
