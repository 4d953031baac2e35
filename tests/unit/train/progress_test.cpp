// Progress's log lines (no terminal): labels, throughput units and the pace
// of step lines.
#include "train/progress.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

namespace drun::train {
namespace {

// Progress reads the steady clock itself and prints a log line at most every
// 2 s. What a case expects of "too soon" holds only if its calls came within
// 2 s of each other: a loaded machine that stalls the test longer has each
// case say so instead of failing.
class Stopwatch {
 public:
  bool within_2_s() const {
    return std::chrono::steady_clock::now() - start_ < std::chrono::seconds(2);
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

// What a Progress printed, read back from a temporary file.
class Captured {
 public:
  Captured() : file_(std::tmpfile(), &std::fclose) {}
  std::FILE* file() const { return file_.get(); }
  std::string text() const {
    std::fflush(file_.get());
    std::rewind(file_.get());
    std::string s;
    for (int c; (c = std::fgetc(file_.get())) != EOF;) s += static_cast<char>(c);
    return s;
  }

 private:
  std::unique_ptr<std::FILE, decltype(&std::fclose)> file_;
};

TEST(FormatValues, FourDecimalsWithAPrefix) {
  EXPECT_EQ(format_values({{"loss", 0.123456}, {"accuracy", 1}}, "val_"),
            "val_loss 0.1235 - val_accuracy 1.0000");
}

TEST(Progress, ARunBoundedByStepsShowsStepsOfTheRunAndNoEpochCount) {
  Captured out;
  Progress p(false, false, out.file());
  p.set_plan({0, 300, 1, false});
  const Stopwatch since_first_line;
  p.begin_epoch(0, 32, 0);
  p.end_epoch(0.5, {}, 100, {}, false);  // a short epoch within 2 s of the last line: silent
  const bool quick = since_first_line.within_2_s();
  p.begin_epoch(1, 32, 32);
  p.end_epoch(0.25, {{"mse", 0.25}}, 100, {{"loss", 0.3}}, true);
  const std::string text = out.text();
  EXPECT_NE(text.find("training to step 300"), std::string::npos) << text;
  if (quick) {
    EXPECT_EQ(text.find("epoch 1 done"), std::string::npos) << text;
  } else {
    std::printf("the first epoch ended 2 s or more after the first line: its line was due\n");
  }
  EXPECT_NE(text.find("epoch 2 done"), std::string::npos) << text;
  EXPECT_NE(text.find("loss 0.2500 - mse 0.2500 - 100 examples/s - val_loss 0.3000"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("epoch 2/"), std::string::npos) << text;
}

TEST(Progress, ImagesOfSeveralWorkersAreCountedInAll) {
  Captured out;
  Progress p(false, false, out.file());
  p.set_plan({3, -1, 2, true});
  p.begin_epoch(0, 100, 0);
  p.end_epoch(1.0, {}, 500, {});
  const std::string text = out.text();
  EXPECT_NE(text.find("epoch 1/3: 100 steps"), std::string::npos) << text;
  EXPECT_NE(text.find("1000 img/s in all (2 workers)"), std::string::npos) << text;
}

TEST(Progress, NoStepLineWithinTwoSecondsOfTheLast) {
  Progress quiet(false, true);
  quiet.begin_epoch(0, 100, 0);
  EXPECT_FALSE(quiet.due(10));
  Captured out;
  Progress p(false, false, out.file());
  p.set_plan({1, -1, 1, true});
  const Stopwatch since_first_line;
  p.begin_epoch(0, 100, 0);    // prints the epoch's first line
  const bool due = p.due(10);  // a tenth of the epoch, but too soon
  if (!since_first_line.within_2_s())
    GTEST_SKIP() << "this test was stalled for 2 s or more: no longer too soon";
  EXPECT_FALSE(due);
}

}  // namespace
}  // namespace drun::train
