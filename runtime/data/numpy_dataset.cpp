#include "data/numpy_dataset.hpp"

#include "base/options.hpp"
#include "data/numpy_file.hpp"
#include "data/reader_registry.hpp"

namespace drun::data {
namespace {

std::string name_of(const NumpySource& s, const std::string& array) {
  return s.npz.empty() ? array : s.npz + " member '" + array + "'";
}

Tensor read(const NumpySource& s, const std::string& array, NumpyAs as) {
  return s.npz.empty() ? read_numpy_array(array, "", as) : read_numpy_array(s.npz, array, as);
}

}  // namespace

Dataset load_numpy(const NumpySource& s) {
  Dataset d;
  d.x = read(s, s.x, NumpyAs::pixels);
  if (d.x.rank() == 0)
    throw UsageError("data.numpy: " + name_of(s, s.x) + " is a single number, not one per example");
  if (d.x.rank() == 1) d.x = d.x.reshaped({d.x.dim(0), 1});
  // y's type decides: a float file of whole numbers stays a float target.
  d.y = labels_or_targets(read(s, s.y, NumpyAs::class_ids), "data.numpy: " + name_of(s, s.y));
  if (d.x.dim(0) != d.y.dim(0))
    throw UsageError("data.numpy: " + name_of(s, s.x) + " holds " + std::to_string(d.x.dim(0)) +
                     " examples but " + name_of(s, s.y) + " holds " + std::to_string(d.y.dim(0)));
  return d;
}

}  // namespace drun::data

namespace drun::data {

const ReaderInfo& numpy_reader() {
  static const ReaderInfo info{
      .about = {.names = {"numpy"},
                .doc = "NumPy arrays: two .npy files, or two members of one .npz file",
                .schema = {{"x", OptionType::string, kRequired,
                            "the inputs: a .npy file, or a member name with path"},
                           {"y", OptionType::string, kRequired, "the targets, likewise"},
                           {"path", OptionType::string, nullptr, "an .npz file holding both"}}},
      .open = [](Options& o, const ReaderEnv&) {
        NumpySource source;
        source.npz = o.maybe<std::string>("path").value_or("");
        source.x = o.get<std::string>("x");
        source.y = o.get<std::string>("y");
        return load_numpy(source);
      }};
  return info;
}

}  // namespace drun::data
