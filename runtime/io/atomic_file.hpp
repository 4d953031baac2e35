// Files written atomically: a temporary file, fsync, rename. A crash
// leaves the old file or the new one, never half of one (summary.json,
// eval_results.json, the checkpoint index, and the HDF5 files drun writes:
// checkpoints and Keras models, made in memory first).
#pragma once
#include <string>

#include "base/options.hpp"

namespace drun::io {

// UsageError naming the path and the reason ("File too large", "No space
// left on device") when it cannot be written; then the temporary file is
// removed and `path` is as it was. `text` may be any bytes (HDF5 images too).
void write_text_atomically(const std::string& path, const std::string& text);
// Indented JSON and a final newline.
void write_json_atomically(const std::string& path, const json& value);

}  // namespace drun::io
