#include "data/task_pool.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <stdexcept>
#include <vector>

namespace drun::data {
namespace {

TEST(TaskPool, RunsEveryTaskOnceOnAnyNumberOfThreads) {
  for (int threads : {1, 2, 5}) {
    TaskPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t count : {0, 1, 7, 100}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(count));
      pool.run(count, [&](int64_t i) { hits[static_cast<size_t>(i)]++; });
      for (const auto& h : hits) EXPECT_EQ(h.load(), 1) << threads << " threads, " << count;
    }
  }
}

TEST(TaskPool, RethrowsATasksErrorAndStaysUsable) {
  TaskPool pool(3);
  EXPECT_THROW(pool.run(50,
                        [](int64_t i) {
                          if (i == 17) throw std::runtime_error("task 17");
                        }),
               std::runtime_error);
  std::atomic<int64_t> sum = 0;
  pool.run(10, [&](int64_t i) { sum += i; });
  EXPECT_EQ(sum.load(), 45);
}

TEST(TaskPool, RefusesNoThreads) {
  EXPECT_THROW(TaskPool(0), std::invalid_argument);
}

}  // namespace
}  // namespace drun::data
