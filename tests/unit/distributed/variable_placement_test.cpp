// Which parameter server holds which variable (greedy by bytes, round robin),
// the layout workers and servers share, and the strategy descriptions.
#include "distributed/variable_placement.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "distributed/ps_protocol.hpp"
#include "distributed/strategy_spec.hpp"
#include "nn/model.hpp"
#include "seed_cnn.hpp"
#include "usage_error.hpp"

namespace drun::distributed {
namespace {

using drun::testing::expect_usage_error;

TEST(VariablePlacement, GreedyGivesEachVariableToTheLeastLoadedServer) {
  // Loads: [100,0] [100,10] [100,30] [100,80] [100,85]; then 40 joins the 85
  // (less than 100) and 7 the 100.
  const std::vector<int64_t> bytes = {100, 10, 20, 50, 5, 40, 7};
  EXPECT_EQ(place_variables(bytes, 2, "greedy"), (std::vector<int>{0, 1, 1, 1, 1, 1, 0}));
  EXPECT_EQ(server_loads(bytes, place_variables(bytes, 2, "greedy"), 2),
            (std::vector<int64_t>{107, 125}));
}

TEST(VariablePlacement, RoundRobinIsTensorFlowsDefault) {
  const std::vector<int64_t> bytes = {100, 10, 20, 50, 5};
  EXPECT_EQ(place_variables(bytes, 3, "round_robin"), (std::vector<int>{0, 1, 2, 0, 1}));
  EXPECT_EQ(place_variables(bytes, 1, "round_robin"), (std::vector<int>{0, 0, 0, 0, 0}));
}

TEST(VariablePlacement, GreedyKeepsTheImbalanceWithinTheLargestVariable) {
  const std::vector<int64_t> bytes = {7, 300, 12, 12, 90, 4, 64, 64, 1, 250, 33};
  for (int servers = 1; servers <= 5; ++servers) {
    const auto loads = server_loads(bytes, place_variables(bytes, servers, "greedy"), servers);
    const auto [lo, hi] = std::minmax_element(loads.begin(), loads.end());
    EXPECT_LE(*hi - *lo, *std::max_element(bytes.begin(), bytes.end())) << servers << " servers";
  }
}

TEST(VariablePlacement, TwoServersSplitTheSeedCnnWithinItsLargestVariable) {
  nn::Model model(drun::testing::seed_cnn_spec(), 1);
  const auto params = model.params();
  const ps::Layout layout(params, 2, "greedy");
  ASSERT_EQ(layout.slots.size(), 6u);  // 2 conv, 2 dense, 2 dense_1
  int64_t largest = 0;
  for (const Param* p : params) largest = std::max(largest, p->value.numel());
  const int64_t imbalance = std::abs(layout.server_floats[0] - layout.server_floats[1]);
  EXPECT_LE(imbalance, largest);
  EXPECT_EQ(layout.server_floats[0] + layout.server_floats[1], model.param_count());
  // Offsets are dense within each server.
  std::vector<int64_t> next(2, 0);
  for (const auto& s : layout.slots) {
    EXPECT_EQ(s.offset, next[static_cast<size_t>(s.server)]);
    next[static_cast<size_t>(s.server)] += s.numel;
  }
}

TEST(VariablePlacement, RefusesNoServersAndUnknownPolicies) {
  expect_usage_error(
      [] {
        place_variables({4, 4}, 0, "greedy");
      },
      {"at least one parameter server"});
  expect_usage_error([] { place_variables({4, 4}, 2, "random"); }, {"unknown variable placement"});
}

TEST(StrategySpec, NamesMapToExchanges) {
  const auto spec = [](const std::string& name, json options = json::object()) {
    return parse_strategy({{"name", name}, {"options", options}});
  };
  EXPECT_EQ(spec("AllReduce").exchange, Exchange::all_reduce);
  EXPECT_FALSE(spec("MultiWorkerMirrored").uses_servers());
  EXPECT_FALSE(spec("ParameterServer").sync);
  EXPECT_TRUE(spec("ParameterServer", {{"mode", "sync"}, {"backup_workers", 1}}).sync);
  EXPECT_EQ(spec("ParameterServer", {{"mode", "sync"}, {"backup_workers", 1}}).backup_workers, 1);
  EXPECT_TRUE(spec("DynSGD").staleness_lr);
  const auto downpour = spec("Downpour", {{"n_push", 3}, {"n_fetch", 5}});
  EXPECT_EQ(downpour.exchange, Exchange::gradients);
  EXPECT_TRUE(downpour.local_update);
  EXPECT_EQ(downpour.push_every, 3);
  EXPECT_EQ(downpour.fetch_every, 5);
  EXPECT_EQ(downpour.server_optimizer["class_name"], "Adagrad");
  EXPECT_TRUE(spec("DownpourEasy").server_optimizer.is_null());
  EXPECT_EQ(spec("Hogwild").exchange, Exchange::shared);
  EXPECT_EQ(spec("AGN", {{"lambda", 6}}).push_every, 6);
  EXPECT_TRUE(spec("SAGN").sync);
  EXPECT_EQ(spec("EASGD").exchange, Exchange::elastic);
  EXPECT_TRUE(spec("EASGD").sync);
  EXPECT_FALSE(spec("AEASGD").sync);
  EXPECT_FLOAT_EQ(spec("AEAMSGD").worker_momentum, 0.9);
  EXPECT_EQ(spec("SyncSGD", {{"learning_rates", {0.1, 0.2}}}).learning_rates.size(), 2u);
  EXPECT_EQ(spec("AGN", {{"placement", "round_robin"}}).variable_placement, "round_robin");
  // beta = p * alpha = 0.9 when alpha is not given.
  EXPECT_FLOAT_EQ(elastic_alpha(spec("EASGD"), 3), 0.3f);
  EXPECT_FLOAT_EQ(elastic_alpha(spec("EASGD", {{"alpha", 0.2}}), 3), 0.2f);
}

TEST(StrategySpec, BadDescriptionsNameWhatIsWrong) {
  const auto spec = [](const std::string& name, json options) {
    parse_strategy({{"name", name}, {"options", options}});
  };
  expect_usage_error([&] { spec("Sparkle", json::object()); }, {"unknown strategy 'Sparkle'"});
  expect_usage_error([&] { spec("ParameterServer", {{"mode", "lazy"}}); }, {"mode must be"});
  expect_usage_error([&] { spec("Downpour", {{"n_push", 0}}); }, {"n_push must be at least 1"});
  expect_usage_error([&] { spec("EASGD", {{"alpha", 1.5}}); }, {"alpha must lie in (0, 1)"});
  expect_usage_error([&] { spec("AGN", {{"tau", 3}}); }, {"tau"});
  expect_usage_error([&] { spec("SyncSGD", {{"learning_rates", {0.1, -1}}}); }, {"positive"});
  expect_usage_error([&] { spec("AEASGD", {{"placement", "random"}}); }, {"placement must be"});
}

}  // namespace
}  // namespace drun::distributed
