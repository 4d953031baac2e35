// Text reader for sequence models: the bytes of one or more files as windows
// of token ids, each with the window one step later as its next-token targets.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace drun::data {

// Which part of the text a data set holds: the validation part is the last
// validation_split of the bytes, so that no window crosses into it.
enum class TextSubset { all, training, validation };

struct TextOptions {
  // Files, or folders whose regular files (not links, not binary: a file with
  // a NUL byte, such as strfile's .dat indexes) are read in name order.
  std::vector<std::string> paths;
  int64_t sequence_length = 0;  // T, > 0
  int64_t stride = 0;           // bytes between window starts; 0: T
  bool chars = false;           // ids of the text's distinct bytes, else the byte values
  double validation_split = 0;  // [0, 1)
  TextSubset subset = TextSubset::all;
};

// x uint8 (N, T) ids (the pipeline makes them float32), y int32 (N, T): x's
// ids one step later. info: vocabulary_size, vocabulary (chars: the byte of
// each id, as a string), bytes (of the part read) and files.
Dataset read_text(const TextOptions& options, const std::string& who);

}  // namespace drun::data
