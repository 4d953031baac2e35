// A process's start-up (train/job): the one rule for its thread count (the
// flag, DRUN_THREADS, the launcher's placement, the node's cores shared by
// its ranks), the same wherever the process starts, and the start-up of a
// process outside an MPI job: threads, evaluator role, device.
#include "train/job.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "launch/placement.hpp"
#include "usage_error.hpp"

namespace drun::train {
namespace {

using testing::expect_usage_error;

// Sets an environment variable for the life of the object, then restores it.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(ThreadCount, TheFlagComesFirstThenDrunThreadsThenThePlacementThenTheCores) {
  EXPECT_EQ(thread_count(3, "5", 7, 16, 2), 3);
  EXPECT_EQ(thread_count(0, "5", 7, 16, 2), 5);
  EXPECT_EQ(thread_count(0, nullptr, 7, 16, 2), 7);
  EXPECT_EQ(thread_count(0, nullptr, 0, 16, 2), 8);
}

TEST(ThreadCount, UnsetEmptyOrZeroDrunThreadsAsksForNothing) {
  for (const char* env : {static_cast<const char*>(nullptr), "", "0", "000"}) {
    EXPECT_EQ(requested_threads(0, env), 0) << (env ? env : "(unset)");
    EXPECT_EQ(thread_count(0, env, 0, 12, 3), 4) << (env ? env : "(unset)");
  }
  EXPECT_EQ(requested_threads(-1, nullptr), 0);  // a negative flag is no request either
}

TEST(ThreadCount, OneProcessAndEveryRankOfANodeReadFlagAndDrunThreadsAlike) {
  // Alone, or one of 4 ranks on the node, with or without a placement: the
  // same flag and the same DRUN_THREADS give the same count.
  for (int ranks_on_node : {1, 2, 4}) {
    for (int placed : {0, 1, 6}) {
      EXPECT_EQ(thread_count(2, nullptr, placed, 8, ranks_on_node), 2);
      EXPECT_EQ(thread_count(0, "3", placed, 8, ranks_on_node), 3);
    }
  }
}

TEST(ThreadCount, TheCoresOfANodeAreSharedByItsRanksAtLeastOneEach) {
  EXPECT_EQ(thread_count(0, nullptr, 0, 8, 1), 8);
  EXPECT_EQ(thread_count(0, nullptr, 0, 8, 3), 2);
  EXPECT_EQ(thread_count(0, nullptr, 0, 2, 4), 1);
  EXPECT_EQ(thread_count(0, nullptr, 0, 2, 0), 2);
  EXPECT_EQ(thread_count(0, nullptr, 0, 0, 1), 1);
}

TEST(ThreadCount, ThePlacementSharesCoresByTheSameRule) {
  for (int cores : {1, 2, 7, 16}) {
    for (int ranks : {1, 2, 3, 5}) {
      launch::PlacementOptions o;
      o.total_workers = ranks;
      const auto placed = launch::place({"local", {launch::Node{"box", 0, cores, cores}}}, o);
      for (const auto& r : placed)
        EXPECT_EQ(r.threads, thread_count(0, nullptr, 0, cores, ranks))
            << cores << " cores, " << ranks << " ranks";
    }
  }
}

TEST(ThreadCount, ABadDrunThreadsIsAnErrorNamingIt) {
  for (const char* env : {"many", "-1", "1.5", " 2", "99999999999"})
    expect_usage_error([&] { requested_threads(0, env); }, {"DRUN_THREADS", env});
  // The flag wins before DRUN_THREADS is read.
  EXPECT_EQ(requested_threads(4, "many"), 4);
}

Process::Settings on_cpu() {
  Process::Settings s;
  s.device = "cpu";
  s.join_mpi = false;
  return s;
}

TEST(Process, OneProcessTakesTheFlagElseDrunThreads) {
  {
    ScopedEnv env("DRUN_THREADS", "5");
    auto s = on_cpu();
    s.threads = 3;
    EXPECT_EQ(Process(nullptr, nullptr, s).context().exec.threads, 3);
    s.threads = 0;
    EXPECT_EQ(Process(nullptr, nullptr, s).context().exec.threads, 5);
  }
  ScopedEnv env("DRUN_THREADS", nullptr);
  Process alone(nullptr, nullptr, on_cpu());
  EXPECT_GE(alone.context().exec.threads, 1);
  EXPECT_EQ(alone.context().role, "chief");
  EXPECT_EQ(alone.context().comm, nullptr);
  EXPECT_EQ(alone.finish(3), 3);  // alone: nothing to abort
}

TEST(Process, TheEvaluatorRunsBesideTheJobOnOneThreadUnlessAsked) {
  ScopedEnv env("DRUN_THREADS", nullptr);
  ScopedEnv tf_config("TF_CONFIG", nullptr);
  ScopedEnv role("DRUN_ROLE", nullptr);
  auto s = on_cpu();
  s.evaluator = true;
  Process evaluator(nullptr, nullptr, s);
  const auto& ctx = evaluator.context();
  EXPECT_EQ(ctx.role, "evaluator");
  EXPECT_EQ(ctx.exec.threads, 1);
  EXPECT_EQ(ctx.tf_config["task"]["type"], "evaluator");
  EXPECT_STREQ(std::getenv("DRUN_ROLE"), "evaluator");
  s.threads = 2;
  EXPECT_EQ(Process(nullptr, nullptr, s).context().exec.threads, 2);
}

TEST(Process, DataDirAndQuietComeFromTheSettingsElseTheEnvironment) {
  ScopedEnv env("DRUN_DATA_DIR", "/from/env");
  auto s = on_cpu();
  EXPECT_EQ(Process(nullptr, nullptr, s).context().data_dir, "/from/env");
  s.data_dir = "/given";
  s.quiet = true;
  Process p(nullptr, nullptr, s);
  EXPECT_EQ(p.context().data_dir, "/given");
  EXPECT_TRUE(p.context().quiet);
}

// jsrun (and Slurm's --gpus-per-task) leave a rank one visible GPU: device 0.
TEST(VisibleGpu, ARankLeftOneVisibleGpuOpensDeviceZero) {
  EXPECT_EQ(visible_gpu(4, "4"), 0);
  EXPECT_EQ(visible_gpu(4, nullptr), 4);
  EXPECT_EQ(visible_gpu(4, "0,1,2,3,4,5"), 4);
  EXPECT_EQ(visible_gpu(-1, "3"), -1);  // a parameter server: no GPU
  EXPECT_EQ(visible_gpu(1, ""), 1);     // none visible: choose_device finds none and says so
}

TEST(Process, TheDeviceIsChosenAtStartUp) {
  auto s = on_cpu();
  EXPECT_EQ(Process(nullptr, nullptr, s).context().exec.device, Device::cpu);
  s.device = "tpu";
  expect_usage_error([&] { Process(nullptr, nullptr, s); }, {"tpu", "auto, cpu or cuda"});
  if (kernels::cuda_device_count() == 0) {
    s.device = "cuda";
    expect_usage_error([&] { Process(nullptr, nullptr, s); }, {"--device cuda: "});
    s.device = "auto";
    EXPECT_EQ(Process(nullptr, nullptr, s).context().exec.device, Device::cpu);
  }
}

}  // namespace
}  // namespace drun::train
