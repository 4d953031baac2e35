#include "data/hdf5_rows.hpp"

#include <algorithm>
#include <stdexcept>

#include "base/options.hpp"

namespace drun::data {
namespace {

namespace h5 = io::h5;

// Rows per block: whole chunks along the first dimension (1 for a contiguous
// dataset), enough of them to make about kBlockBytes.
int64_t block_rows(const Hdf5Set& set, size_t row_bytes) {
  int64_t unit = 1;
  const h5::Handle plist{H5Dget_create_plist(set.data.id()), H5Pclose};
  if (plist.valid() && H5Pget_layout(plist.id()) == H5D_CHUNKED) {
    std::vector<hsize_t> chunk(set.dims.size());
    if (H5Pget_chunk(plist.id(), static_cast<int>(chunk.size()), chunk.data()) > 0)
      unit = std::max<int64_t>(1, static_cast<int64_t>(chunk[0]));
  }
  const auto unit_bytes = static_cast<int64_t>(std::max<size_t>(1, row_bytes)) * unit;
  return unit * std::max<int64_t>(1, Hdf5Rows::kBlockBytes / unit_bytes);
}

}  // namespace

Hdf5Rows::Hdf5Rows(const std::vector<std::string>& paths, const std::string& x) {
  if (paths.empty()) throw UsageError("data.hdf5: no file given (path = 'file.h5' or a list)");
  bool all_bytes = true;
  for (const std::string& path : paths) {
    h5::File file = h5::File::open(path);
    Hdf5Set set = open_hdf5_set(file, x);
    std::vector<int64_t> inner(set.dims.begin() + 1, set.dims.end());
    if (inner.empty()) inner.push_back(1);  // a number per example: (N, 1)
    const Shape example(inner);
    if (files_.empty()) {
      example_ = example;
    } else if (example != example_) {
      throw UsageError(set.where + " holds examples of shape " + example.str() + " but " +
                       files_.front().file.path() + " holds " + example_.str() +
                       " (the files of one data set must agree)");
    }
    all_bytes = all_bytes && set.bytes;
    const auto first = rows_;
    rows_ += static_cast<int64_t>(set.dims[0]);
    files_.push_back({std::move(file), std::move(set), first});
  }
  dtype_ = all_bytes ? DType::u8 : DType::f32;
  for (const Part& p : files_) {
    const int64_t end = p.first + static_cast<int64_t>(p.set.dims[0]);
    const int64_t step = block_rows(p.set, row_bytes());
    for (int64_t b = p.first; b < end; b += step) blocks_.push_back({b, std::min(end, b + step)});
  }
}

void Hdf5Rows::read(int64_t begin, int64_t end, void* dst) const {
  if (begin >= end) return;
  // The file holding `begin`: the last whose first row is <= begin.
  auto part = std::upper_bound(files_.begin(), files_.end(), begin,
                               [](int64_t row, const Part& p) { return row < p.first; });
  const Part& p = *(part - 1);
  const auto rows = static_cast<int64_t>(p.set.dims[0]);
  if (begin < p.first || end > p.first + rows)
    throw std::logic_error("Hdf5Rows::read: rows across files");
  std::vector<hsize_t> start(p.set.dims.size(), 0), count(p.set.dims);
  start[0] = static_cast<hsize_t>(begin - p.first);
  count[0] = static_cast<hsize_t>(end - begin);
  const hid_t memory = dtype_ == DType::u8 ? H5T_NATIVE_UINT8 : H5T_NATIVE_FLOAT;
  std::lock_guard lock(mu_);
  const h5::Handle file_space{H5Dget_space(p.set.data.id()), H5Sclose};
  const h5::Handle memory_space{
      H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr), H5Sclose};
  if (!file_space.valid() || !memory_space.valid() ||
      H5Sselect_hyperslab(file_space.id(), H5S_SELECT_SET, start.data(), nullptr, count.data(),
                          nullptr) < 0 ||
      H5Dread(p.set.data.id(), memory, memory_space.id(), file_space.id(), H5P_DEFAULT, dst) < 0)
    throw UsageError(p.set.where + " cannot be read at examples " +
                     std::to_string(begin - p.first) + ".." + std::to_string(end - p.first - 1) +
                     " (truncated or corrupt?)");
}

}  // namespace drun::data
