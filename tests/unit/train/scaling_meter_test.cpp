// summary.json's "scaling" block from each worker's step parts: means over
// workers, the slowest worker and its lag, the overlap of the exchange.
#include "train/scaling_meter.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace drun::train {
namespace {

// Worker `w`'s contribution as the collective would see it (nothing summed yet).
std::vector<double> contribution(const ScalingMeter& m, int w, int workers,
                                 const ExchangeCounters& x) {
  std::vector<double> v;
  m.combine(w, workers, x, [&](double* values, int64_t n) { v.assign(values, values + n); });
  return v;
}

// Two workers: worker 1 spends 10 ms a step more in a hook; worker 0 waits
// that long on the exchange.
TEST(ScalingMeter, TheSlowestWorkerIsTheBusiestAndTheOthersWaitForIt) {
  ScalingMeter fast, slow;
  for (int i = 0; i < 4; ++i) {
    fast.add({0.001, 0.020, 0.012, 0.001, 0.034});
    slow.add({0.001, 0.020, 0.002, 0.011, 0.034});
  }
  const ExchangeCounters x{0.04, 0.01, 65536};
  const auto from_slow = contribution(slow, 1, 2, x);
  const json s = fast.combine(0, 2, x, [&](double* v, int64_t n) {
    for (int64_t i = 0; i < n; ++i) v[i] += from_slow[static_cast<size_t>(i)];
  });
  EXPECT_EQ(s["workers"], 2);
  EXPECT_EQ(s["steps"], 4);
  EXPECT_NEAR(s["step_ms"].get<double>(), 34.0, 1e-9);
  EXPECT_NEAR(s["compute_ms"].get<double>(), 20.0, 1e-9);
  EXPECT_NEAR(s["exchange_ms"].get<double>(), 7.0, 1e-9);
  EXPECT_NEAR(s["other_ms"].get<double>(), 6.0, 1e-9);
  EXPECT_EQ(s["slowest_rank"], 1);
  EXPECT_NEAR(s["slowest_rank_lag_ms"].get<double>(), 10.0, 1e-9);
  EXPECT_NEAR(s["slowest_rank_wait_ms"].get<double>(), 5.0, 1e-9);  // worker 0's 10, worker 1's 0
  EXPECT_NEAR(s["overlap"].get<double>(), 0.25, 1e-12);             // 0.02 of 0.08 s
  EXPECT_EQ(s["bucket_bytes"], 65536);
  ASSERT_EQ(s["per_worker"].size(), 2u);
  EXPECT_NEAR(s["per_worker"][1]["other_ms"].get<double>(), 11.0, 1e-9);
  const double parts = s["compute_ms"].get<double>() + s["exchange_ms"].get<double>() +
                       s["input_ms"].get<double>() + s["other_ms"].get<double>();
  EXPECT_NEAR(parts, s["step_ms"].get<double>(), 1e-9);
  EXPECT_NE(scaling_line(s).find("slowest worker 1, 10.0 ms"), std::string::npos)
      << scaling_line(s);
  EXPECT_NE(scaling_line(s).find("25% of it hidden"), std::string::npos) << scaling_line(s);
}

TEST(ScalingMeter, NoOverlapOrBucketsWhereTheStrategyMeasuresNone) {
  ScalingMeter m;
  m.add({0.0, 0.01, 0.0, 0.0, 0.01});
  const json s = m.combine(0, 1, {}, [](double*, int64_t) {});
  EXPECT_FALSE(s.contains("overlap"));
  EXPECT_FALSE(s.contains("bucket_bytes"));
  EXPECT_EQ(scaling_line(s).find("hidden"), std::string::npos);
}

}  // namespace
}  // namespace drun::train
