// Hdf5Rows: the x of data.hdf5 as rows of one or more files (the same dataset
// name in each, examples concatenated in the order the files are given),
// read on demand. Blocks follow the dataset's chunks (whole chunks, at least
// kBlockBytes together) or, for a contiguous dataset, slabs of about
// kBlockBytes. uint8 data arrive as bytes, any other type as float32 (HDF5
// converts while reading).
#pragma once
#include <mutex>
#include <string>
#include <vector>

#include "data/hdf5_set.hpp"
#include "data/row_source.hpp"

namespace drun::data {

class Hdf5Rows final : public RowSource {
 public:
  static constexpr int64_t kBlockBytes = int64_t{1} << 20;

  // Throws UsageError naming the file and dataset for a missing or
  // non-numeric dataset, or examples whose shape differs between files.
  Hdf5Rows(const std::vector<std::string>& paths, const std::string& x);

  int64_t size() const override { return rows_; }
  Shape example_shape() const override { return example_; }
  DType dtype() const override { return dtype_; }
  const std::vector<RowBlock>& blocks() const override { return blocks_; }
  void read(int64_t begin, int64_t end, void* dst) const override;

  // The files' paths and their first rows, for readers of y that must agree.
  size_t files() const { return files_.size(); }
  const io::h5::File& file(size_t i) const { return files_[i].file; }
  int64_t first_row(size_t i) const { return files_[i].first; }

 private:
  struct Part {
    io::h5::File file;
    Hdf5Set set;
    int64_t first = 0;  // its first row in the data set
  };
  std::vector<Part> files_;
  std::vector<RowBlock> blocks_;
  Shape example_;
  DType dtype_ = DType::f32;
  int64_t rows_ = 0;
  mutable std::mutex mu_;  // one read at a time through the shared handles
};

}  // namespace drun::data
