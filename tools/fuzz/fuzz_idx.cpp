// The idx reader (MNIST, Fashion-MNIST), raw and gzipped, as every type.
#include "data/idx.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string path = drun::fuzz::as_file("input.idx", data, size);
  drun::fuzz::expect_clean([&] { drun::data::read_idx(path, drun::DType::f32); });
  drun::fuzz::expect_clean([&] { drun::data::read_idx(path, drun::DType::i32); });
  drun::fuzz::expect_clean([&] { drun::data::read_idx_images(path); });
  drun::fuzz::expect_clean([&] { drun::data::read_idx_labels(path); });
  return 0;
}
