// CSV parsing: splitting lines into cells (RFC 4180 quotes on one line), header
// detection, and number parsing with std::from_chars (locale-independent).
#include "data/csv.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <string_view>
#include <vector>

#include "data/reader_registry.hpp"

namespace drun::data {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Splits one line into cells; returns false on an unterminated quote.
bool split_cells(std::string_view line, char delim, std::vector<std::string>& cells) {
  cells.clear();
  std::string cell;
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        cell += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        cell += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == delim) {
      cells.emplace_back(trim(cell));
      cell.clear();
    } else {
      cell += c;
    }
  }
  cells.emplace_back(trim(cell));
  return !quoted;
}

bool parse_float(std::string_view s, float& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

bool parse_double(std::string_view s, double& out) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

// A first row is a header when some cell is text. Empty cells do not count: a
// header may leave a name empty (pandas' index column), data may have a hole.
bool looks_like_header(const std::vector<std::string>& cells) {
  float v;
  for (const auto& c : cells)
    if (!c.empty() && !parse_float(c, v)) return true;
  return false;
}

}  // namespace

CsvOptions parse_csv_options(Options& opts) {
  CsvOptions o;
  const json& header = opts.value("header");
  if (header.is_boolean()) {
    o.header = header.get<bool>() ? CsvHeader::yes : CsvHeader::no;
  } else if (header.is_string()) {
    auto h = header.get<std::string>();
    if (h == "yes")
      o.header = CsvHeader::yes;
    else if (h == "no")
      o.header = CsvHeader::no;
    else if (h == "auto")
      o.header = CsvHeader::automatic;
    else
      throw UsageError(opts.owner() +
                       ": header must be \"yes\", \"no\", \"auto\" or a boolean, got \"" + h +
                       "\"");
  } else {
    throw UsageError(opts.owner() + ": header must be \"yes\", \"no\", \"auto\" or a boolean");
  }
  const json& label = opts.value("label");
  if (label.is_number_integer())
    o.label_index = label.get<int64_t>();
  else if (label.is_string())
    o.label_name = label.get<std::string>();
  else if (!label.is_null())
    throw UsageError(opts.owner() + ": label must be a column index or a column name");
  auto type = opts.get<std::string>("label_type");
  if (type == "int")
    o.label_type = CsvLabelType::int32;
  else if (type == "float")
    o.label_type = CsvLabelType::float32;
  else
    throw UsageError(opts.owner() + ": label_type must be \"int\" or \"float\", got \"" + type +
                     "\"");
  auto delim = opts.get<std::string>("delimiter");
  if (delim.size() != 1 || delim == "\"" || delim == "\n")
    throw UsageError(opts.owner() + ": delimiter must be one character, got \"" + delim + "\"");
  o.delimiter = delim[0];
  return o;
}

Dataset read_csv(const std::string& path, const CsvOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open (no such file, or not readable)");

  std::vector<std::string> names;  // header names, when there is a header
  std::vector<std::string> cells;
  std::vector<float> features;
  std::vector<float> labels;       // label_type float32
  std::vector<int32_t> class_ids;  // label_type int32
  int64_t columns = 0, label_col = 0, rows = 0;
  bool first = true;
  std::string line;
  auto where = [&](int64_t line_no, int64_t col) {
    std::string s = path + ":" + std::to_string(line_no);
    if (col >= 0) {
      s += ": column " + std::to_string(col + 1);
      if (col < static_cast<int64_t>(names.size())) s += " ('" + names[col] + "')";
    }
    return s + ": ";
  };

  for (int64_t line_no = 1; std::getline(in, line); ++line_no) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (trim(line).empty()) continue;
    if (!split_cells(line, options.delimiter, cells))
      throw UsageError(where(line_no, -1) + "unterminated quote");

    if (first) {
      first = false;
      columns = static_cast<int64_t>(cells.size());
      if (columns < 2)
        throw UsageError(where(line_no, -1) + "found 1 column; need features and a label (is the " +
                         "delimiter '" + std::string(1, options.delimiter) + "' right?)");
      bool header = options.header == CsvHeader::yes ||
                    (options.header == CsvHeader::automatic && looks_like_header(cells));
      if (header) names = cells;
      if (!options.label_name.empty()) {
        if (!header)
          throw UsageError(path + ": label '" + options.label_name +
                           "' is a column name, but the file has no header row");
        label_col = -1;
        for (int64_t c = 0; c < columns; ++c)
          if (names[c] == options.label_name) label_col = c;
        if (label_col < 0) {
          std::string valid;
          for (const auto& n : names) valid += (valid.empty() ? "" : ", ") + n;
          throw UsageError(path + ": no column named '" + options.label_name +
                           "'; columns: " + valid);
        }
      } else {
        label_col = options.label_index < 0 ? columns + options.label_index : options.label_index;
        if (label_col < 0 || label_col >= columns)
          throw UsageError(path + ": label column " + std::to_string(options.label_index) +
                           " is outside the " + std::to_string(columns) + " columns");
      }
      if (header) continue;
    }

    if (static_cast<int64_t>(cells.size()) != columns)
      throw UsageError(where(line_no, -1) + "ragged row: " + std::to_string(cells.size()) +
                       " columns, expected " + std::to_string(columns) + " as in the first row");
    for (int64_t c = 0; c < columns; ++c) {
      const std::string& cell = cells[c];
      if (c == label_col && options.label_type == CsvLabelType::int32) {
        double v;
        if (!parse_double(cell, v) || v != std::floor(v) || v < 0 || v > 2147483647.0)
          throw UsageError(where(line_no, c) + "class id '" + cell +
                           "' is not an integer >= 0 (use label_type = \"float\" for targets)");
        class_ids.push_back(static_cast<int32_t>(v));
        continue;
      }
      float v;
      if (!parse_float(cell, v))
        throw UsageError(where(line_no, c) + (cell.empty() ? std::string("empty cell")
                                                           : "'" + cell + "' is not a number"));
      (c == label_col ? labels : features).push_back(v);
    }
    ++rows;
  }
  if (in.bad()) throw UsageError(path + ": read error");
  if (rows == 0) throw UsageError(path + ": no data rows");

  Dataset d;
  d.x = Tensor({rows, columns - 1});
  std::copy(features.begin(), features.end(), d.x.f32());
  if (options.label_type == CsvLabelType::int32) {
    d.y = Tensor({rows}, DType::i32);
    std::copy(class_ids.begin(), class_ids.end(), d.y.i32());
  } else {
    d.y = Tensor({rows, 1});
    std::copy(labels.begin(), labels.end(), d.y.f32());
  }
  return d;
}

}  // namespace drun::data

namespace drun::data {

const ReaderInfo& csv_reader() {
  static const ReaderInfo info{
      .about = {.names = {"csv"},
                .doc = "numbers in columns; the label column becomes y, the others x",
                .schema = {{"path", OptionType::string, kRequired, "the file"},
                           {"label", OptionType::any, nullptr,
                            "label column by header name or 0-based index (default: the last "
                            "column)"},
                           {"label_type", OptionType::string, "int",
                            "'int' (class ids) or 'float' (regression)"},
                           {"header", OptionType::any, "auto",
                            "'yes', 'no', 'auto' (a first row that is not numbers), or a boolean"},
                           {"delimiter", OptionType::string, ",", "one character"}}},
      .open = [](Options& o, const ReaderEnv&) {
        const CsvOptions options = parse_csv_options(o);
        return read_csv(o.get<std::string>("path"), options);
      }};
  return info;
}

}  // namespace drun::data
