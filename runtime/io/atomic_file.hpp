// Small files written atomically: a temporary file, fsync, rename. A crash
// leaves the old file or the new one, never half of one (summary.json,
// eval_results.json, the checkpoint index).
#pragma once
#include <string>

#include "base/options.hpp"

namespace drun::io {

// UsageError naming the path when it cannot be written.
void write_text_atomically(const std::string& path, const std::string& text);
// Indented JSON and a final newline.
void write_json_atomically(const std::string& path, const json& value);

}  // namespace drun::io
