// CSV reader for small tabular data sets: every column is a number, one of them
// is the label. Errors name the file, the line and the column.
#pragma once
#include <cstdint>
#include <string>

#include "base/options.hpp"
#include "data/dataset.hpp"

namespace drun::data {

// automatic: the first row is a header when a non-empty cell of it is not a number.
enum class CsvHeader { yes, no, automatic };
enum class CsvLabelType { int32, float32 };

struct CsvOptions {
  CsvHeader header = CsvHeader::automatic;
  int64_t label_index = -1;  // 0-based; negative counts from the end, -1 = the last column
  std::string label_name;    // when set, the header column of that name (needs a header)
  CsvLabelType label_type = CsvLabelType::int32;  // int32 -> y (N) class ids; float32 -> y (N, 1)
  char delimiter = ',';
};

// Reads the CSV keys of `opts`, checked against data.csv's schema
// (csv_reader() in data/reader_registry.hpp, which holds the defaults):
// header = "yes"|"no"|"auto" or a boolean; label = a 0-based index or a
// column name; label_type = "int"|"float"; delimiter = one character. Leaves
// the path and finish() to the caller.
CsvOptions parse_csv_options(Options& opts);

// x float32 (N, F) of the other columns in file order; y as label_type says.
// Cells may be quoted ("..."), but a quoted cell may not span lines.
Dataset read_csv(const std::string& path, const CsvOptions& options = {});

}  // namespace drun::data
