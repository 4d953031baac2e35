#include "data/hdf5_dataset.hpp"

#include <cstring>
#include <memory>

#include "base/options.hpp"
#include "data/hdf5_rows.hpp"
#include "data/reader_registry.hpp"

namespace drun::data {
namespace {

namespace h5 = io::h5;

// Reads a y dataset whole: int32 for an integer one where `integers`, else float32.
Tensor read_y(const h5::File& f, const std::string& name, bool integers) {
  const Hdf5Set set = open_hdf5_set(f, name);
  const Shape shape(std::vector<int64_t>(set.dims.begin(), set.dims.end()));
  Tensor t(shape, integers ? DType::i32 : DType::f32);
  const hid_t memory = integers ? H5T_NATIVE_INT32 : H5T_NATIVE_FLOAT;
  if (H5Dread(set.data.id(), memory, H5S_ALL, H5S_ALL, H5P_DEFAULT, t.raw()) < 0)
    throw UsageError(set.where + " cannot be read (truncated or corrupt?)");
  return t;
}

// y of every file, one after the other, each checked against its file's x.
Tensor read_all_y(const Hdf5Rows& rows, const std::string& x, const std::string& y) {
  bool integers = true;
  for (size_t i = 0; i < rows.files(); ++i)
    integers = integers && open_hdf5_set(rows.file(i), y).integer;
  std::vector<Tensor> parts;
  for (size_t i = 0; i < rows.files(); ++i) {
    parts.push_back(read_y(rows.file(i), y, integers));
    const int64_t x_rows =
        (i + 1 < rows.files() ? rows.first_row(i + 1) : rows.size()) - rows.first_row(i);
    if (parts.back().dim(0) != x_rows)
      throw UsageError("data.hdf5: " + rows.file(i).path() + ": dataset '" + x + "' holds " +
                       std::to_string(x_rows) + " examples but '" + y + "' holds " +
                       std::to_string(parts.back().dim(0)));
    if (parts.back().shape().drop_batch() != parts.front().shape().drop_batch())
      throw UsageError("data.hdf5: " + rows.file(i).path() + " dataset '" + y + "' has shape " +
                       parts.back().shape().str() + " but " + rows.file(0).path() + "'s has " +
                       parts.front().shape().str());
  }
  if (parts.size() == 1) return parts.front();
  Tensor all(parts.front().shape().drop_batch().with_batch(rows.size()), parts.front().dtype());
  auto* to = static_cast<char*>(all.raw());
  for (const Tensor& p : parts) {
    std::memcpy(to, p.raw(), p.bytes());
    to += p.bytes();
  }
  return all;
}

bool streams(const Hdf5Source& s, const Hdf5Rows& rows) {
  if (s.stream != Hdf5Source::Stream::automatic) return s.stream == Hdf5Source::Stream::yes;
  return static_cast<double>(rows.size()) * static_cast<double>(rows.row_bytes()) >
         static_cast<double>(kStreamAboveBytes);
}

}  // namespace

Dataset load_hdf5(const Hdf5Source& s) {
  auto rows = std::make_shared<const Hdf5Rows>(s.paths, s.x);
  Dataset d;
  d.y = labels_or_targets(read_all_y(*rows, s.x, s.y),
                          "data.hdf5: " + rows->file(0).path() + " dataset '" + s.y + "'");
  if (streams(s, *rows)) {
    d.rows = rows;
    return d;
  }
  d.x = Tensor(rows->example_shape().with_batch(rows->size()), rows->dtype());
  auto* to = static_cast<char*>(d.x.raw());
  for (size_t i = 0; i < rows->files(); ++i) {
    const int64_t end = i + 1 < rows->files() ? rows->first_row(i + 1) : rows->size();
    rows->read(rows->first_row(i), end, to + rows->first_row(i) * rows->row_bytes());
  }
  return d;
}

}  // namespace drun::data

namespace drun::data {

const ReaderInfo& hdf5_reader() {
  static const ReaderInfo info{
      .about = {.names = {"hdf5"},
                .doc = "two datasets of an HDF5 file, or of a list of files whose examples follow "
                       "one another",
                .schema = {{"path", OptionType::any, kRequired,
                            "the file, or the files in order (a string or a list of strings)"},
                           {"x", OptionType::string, kRequired,
                            "the inputs' dataset, e.g. 'images' or 'train/x'"},
                           {"y", OptionType::string, kRequired, "the targets' dataset"},
                           {"stream", OptionType::boolean, nullptr,
                            "stream x from the files (true) or read it whole (false); left out: "
                            "stream above 1 GiB"}}},
      .open = [](Options& o, const ReaderEnv&) {
        Hdf5Source source;
        const json& path = o.value("path");
        const auto bad_path = [&] {
          return UsageError(o.owner() + ": path must be a file name or a list of them, got " +
                            path.dump());
        };
        if (path.is_string()) {
          source.paths.push_back(path.get<std::string>());
        } else if (path.is_array() && !path.empty()) {
          for (const json& p : path) {
            if (!p.is_string()) throw bad_path();
            source.paths.push_back(p.get<std::string>());
          }
        } else {
          throw bad_path();
        }
        source.x = o.get<std::string>("x");
        source.y = o.get<std::string>("y");
        if (const auto stream = o.maybe<bool>("stream"))
          source.stream = *stream ? Hdf5Source::Stream::yes : Hdf5Source::Stream::no;
        return load_hdf5(source);
      }};
  return info;
}

}  // namespace drun::data
