// Near misses: what "did you mean" suggests for a typo, and where it stays quiet.
#include "base/did_you_mean.hpp"

#include <gtest/gtest.h>

#include "base/options.hpp"
#include "usage_error.hpp"

namespace drun {
namespace {

using drun::testing::expect_usage_error;

TEST(DidYouMean, CountsEditsAndSwaps) {
  EXPECT_EQ(edit_distance("activaton", "activation"), 1);
  EXPECT_EQ(edit_distance("learning_rat", "learning_rate"), 1);
  EXPECT_EQ(edit_distance("sede", "seed"), 1);  // a swap of neighbours is one edit
  EXPECT_EQ(edit_distance("adam", "Adam"), 0);
  EXPECT_EQ(edit_distance("", "abc"), 3);
}

TEST(DidYouMean, SuggestsTheNearestWithinTwoEdits) {
  const std::vector<std::string> names = {"Adam", "adam", "AdamW", "sgd", "SGD"};
  EXPECT_EQ(closest_name("adamm", names), "adam");  // the case that matches better
  EXPECT_EQ(closest_name("sdg", names), "sgd");
  EXPECT_EQ(closest_name("rmsprop", names), "");
  EXPECT_EQ(did_you_mean("--thread", std::vector<std::string>{"--threads", "--timeline"}),
            " (did you mean '--threads'?)");
  EXPECT_EQ(did_you_mean_in_list("relux", "linear, relu, sigmoid"), " (did you mean 'relu'?)");
  EXPECT_EQ(did_you_mean_in_list("xy", "ab, cd"), "");  // short names: one edit at most
}

TEST(DidYouMean, UnknownOptionsSuggestTheNearMiss) {
  const Schema schema{{"units", OptionType::integer, kRequired, "outputs"},
                      {"activation", OptionType::string, nullptr, "the activation"}};
  expect_usage_error(
      [&] {
        Options({{"units", 2}, {"activaton", "relu"}}, "nn.Dense", schema);
      },
      {"nn.Dense", "'activaton'", "did you mean 'activation'", "valid options:"});
}

}  // namespace
}  // namespace drun
