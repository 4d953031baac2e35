// The CSV reader. The first byte picks the options (header yes/no/auto,
// label column, label type, delimiter); the rest is the file.
#include "data/csv.hpp"
#include "fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t pick = data[0];
  drun::data::CsvOptions options;
  options.header = static_cast<drun::data::CsvHeader>(pick % 3);
  options.label_index = static_cast<int64_t>((pick >> 2) % 5) - 2;  // -2 .. 2
  options.label_type =
      (pick & 0x20) ? drun::data::CsvLabelType::float32 : drun::data::CsvLabelType::int32;
  options.delimiter = (pick & 0x40) ? ';' : ',';
  if (pick & 0x80) options.label_name = "label";
  const std::string path = drun::fuzz::as_file("input.csv", data + 1, size - 1);
  drun::fuzz::expect_clean([&] { drun::data::read_csv(path, options); });
  return 0;
}
