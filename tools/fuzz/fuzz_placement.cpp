// The role table every rank reads (DRUN_PLACEMENT) and the TF_CONFIG it
// makes of it for each rank.
#include "fuzz_input.hpp"
#include "launch/placement.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace drun::launch;
  const std::string text(reinterpret_cast<const char*>(data), size);
  drun::fuzz::expect_clean([&] {
    const auto ranks = placement_from_text(text);
    placement_table(ranks);
    for (size_t r = 0; r < ranks.size(); ++r) tf_config(ranks, static_cast<int>(r)).dump();
  });
  return 0;
}
