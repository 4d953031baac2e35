// The CIFAR-10 binary reader: the input is test_batch.bin, read whole and as
// the second of three shards.
#include "data/cifar10.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  drun::fuzz::as_file("test_batch.bin", data, size);
  const std::string dir = drun::fuzz::scratch_dir().string();
  drun::fuzz::expect_clean([&] { drun::data::load_cifar10("test", dir); });
  drun::fuzz::expect_clean([&] { drun::data::load_cifar10("test", dir, 3, 1); });
  return 0;
}
