// Checkpoint restore from the raw bytes of a model_dir's newest checkpoint
// (ckpt-2.h5; tools/fuzz/reader_calls.hpp).
#include "reader_calls.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto dir = drun::fuzz::scratch_dir() / "model_dir";
  std::filesystem::create_directories(dir);
  drun::fuzz::as_file("model_dir/ckpt-2.h5", data, size);
  drun::fuzz::read_as_checkpoint(dir);
  return 0;
}
