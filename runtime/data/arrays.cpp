#include "data/arrays.hpp"

#include <algorithm>
#include <functional>
#include <vector>

#include "data/reader_registry.hpp"

namespace drun::data {

namespace {

Tensor tensor_from_json(const json& v, bool labels, const std::string& what) {
  std::vector<int64_t> dims;
  const json* cur = &v;
  while (cur->is_array()) {
    if (cur->empty()) throw UsageError(what + ": empty list");
    dims.push_back(static_cast<int64_t>(cur->size()));
    cur = &(*cur)[0];
  }
  if (dims.empty()) throw UsageError(what + ": expected a list of numbers");
  const bool ints =
      labels && dims.size() == 1 &&
      std::all_of(v.begin(), v.end(), [](const json& e) { return e.is_number_integer(); });
  Tensor t(Shape(dims), ints ? DType::i32 : DType::f32);
  int64_t i = 0;
  std::function<void(const json&, size_t)> fill = [&](const json& node, size_t depth) {
    if (depth == dims.size()) {
      if (!node.is_number()) throw UsageError(what + ": non-numeric value " + node.dump());
      if (ints)
        t.i32()[i++] = node.get<int32_t>();
      else
        t.f32()[i++] = node.get<float>();
      return;
    }
    if (!node.is_array() || static_cast<int64_t>(node.size()) != dims[depth])
      throw UsageError(what + ": ragged nested list (not every row has " +
                       std::to_string(dims[depth]) + " entries)");
    for (const auto& e : node) fill(e, depth + 1);
  };
  fill(v, 0);
  if (!ints && labels && dims.size() == 1) return t.reshaped(Shape{dims[0], 1});
  return t;
}

}  // namespace

Dataset dataset_from_arrays(const json& x, const json& y) {
  Dataset ds;
  ds.x = tensor_from_json(x, false, "data.arrays x");
  ds.y = tensor_from_json(y, true, "data.arrays y");
  check_dataset(ds, "data.arrays");
  return ds;
}

}  // namespace drun::data

namespace drun::data {

const ReaderInfo& arrays_reader() {
  static const ReaderInfo info{
      .about = {.names = {"arrays"},
                .doc = "small data sets from Lua tables",
                .schema = {{"x", OptionType::table, kRequired, "inputs: a table of rows"},
                           {"y", OptionType::table, kRequired,
                            "integer classes, or rows of numbers"}}},
      .open = [](Options& o, const ReaderEnv&) {
        return dataset_from_arrays(o.value("x"), o.value("y"));
      }};
  return info;
}

}  // namespace drun::data
