// Keras HDF5 import from well-formed files: the input describes the file
// (tools/fuzz/h5_layout.hpp) — model_config, layer and weight names, each
// string kind, datasets of any type, shape and layout — so the campaign
// reaches drun's reading of a Keras file past HDF5's parser, which stops the
// byte-level fuzz_keras within minutes (docs/testing.md).
#include "h5_layout.hpp"
#include "reader_calls.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const drun::json description = drun::json::parse(data, data + size, nullptr, false);
  const std::string path = (drun::fuzz::scratch_dir() / "model.h5").string();
  if (description.is_discarded() || !drun::fuzz::h5_layout::write(description, path)) return -1;
  drun::fuzz::read_as_keras(path);
  return 0;
}
