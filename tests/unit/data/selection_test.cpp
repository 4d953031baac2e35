// select_examples and count_selected: takes, skips and splits in order.
#include "data/selection.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "data_test_util.hpp"

namespace drun::data {
namespace {

using namespace drun::data::testing;
using Steps = std::vector<SelectStep>;

TEST(Selection, StepsApplyInOrder) {
  EXPECT_EQ(select_examples(Steps{SelectStep::skip(3), SelectStep::take(2)}, 10),
            (std::vector<int64_t>{3, 4}));
  EXPECT_TRUE(select_examples(Steps{SelectStep::take(2), SelectStep::skip(3)}, 10).empty());
  EXPECT_EQ(select_examples(Steps{SelectStep::split(0.5, false), SelectStep::skip(1)}, 6),
            (std::vector<int64_t>{4, 5}));
  EXPECT_EQ(select_examples(Steps{}, 3), (std::vector<int64_t>{0, 1, 2}));
}

TEST(Selection, SeededSplitPartsAreDisjointAndCoverTheExamples) {
  const Steps first{SelectStep::skip(5), SelectStep::split(0.7, true, 9)};
  const Steps rest{SelectStep::skip(5), SelectStep::split(0.7, false, 9)};
  std::vector<int64_t> all = select_examples(first, 105);
  const std::vector<int64_t> b = select_examples(rest, 105);
  EXPECT_EQ(all.size(), 70u);
  EXPECT_EQ(b.size(), 30u);
  all.insert(all.end(), b.begin(), b.end());
  std::sort(all.begin(), all.end());
  std::vector<int64_t> expected(100);
  for (int64_t i = 0; i < 100; ++i) expected[static_cast<size_t>(i)] = i + 5;
  EXPECT_EQ(all, expected);
}

TEST(Selection, CountMatchesTheList) {
  const std::vector<Steps> cases = {
      {},
      {SelectStep::take(7)},
      {SelectStep::skip(200)},
      {SelectStep::skip(3), SelectStep::split(0.8, true), SelectStep::take(50)},
      {SelectStep::split(0.33, false, 1), SelectStep::split(0.5, true)},
  };
  for (const Steps& steps : cases)
    for (int64_t n : {0, 1, 10, 151})
      EXPECT_EQ(count_selected(steps, n), static_cast<int64_t>(select_examples(steps, n).size()))
          << steps.size() << " steps, n = " << n;
}

TEST(Selection, BadStepsNameWhatIsWrong) {
  EXPECT_TRUE(contains(usage_error([] { count_selected(Steps{SelectStep::take(-1)}, 5); }),
                       "take needs a count >= 0, got -1"));
  EXPECT_TRUE(contains(usage_error([] { select_examples(Steps{SelectStep::split(0.0, true)}, 5); }),
                       "split fraction must be between 0 and 1"));
}

}  // namespace
}  // namespace drun::data
