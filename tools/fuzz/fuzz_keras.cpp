// Keras HDF5 import from a file's raw bytes (tools/fuzz/reader_calls.hpp).
// HDF5 itself is not the target; how drun uses it is.
#include "reader_calls.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  drun::fuzz::read_as_keras(drun::fuzz::as_file("model.h5", data, size));
  return 0;
}
