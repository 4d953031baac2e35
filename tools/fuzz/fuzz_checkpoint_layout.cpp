// Checkpoint restore from well-formed files: the input describes ckpt-2.h5
// (tools/fuzz/h5_layout.hpp) — the drun attribute's JSON, variable names,
// dataset types, shapes and layouts — past HDF5's parser, which stops the
// byte-level fuzz_checkpoint within minutes (docs/testing.md).
#include "h5_layout.hpp"
#include "reader_calls.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const drun::json description = drun::json::parse(data, data + size, nullptr, false);
  const auto dir = drun::fuzz::scratch_dir() / "model_dir";
  std::filesystem::create_directories(dir);
  if (description.is_discarded() ||
      !drun::fuzz::h5_layout::write(description, (dir / "ckpt-2.h5").string()))
    return -1;
  drun::fuzz::read_as_checkpoint(dir);
  return 0;
}
