// RowSource: a data set's x kept in files and read a block of rows at a time
// (data.hdf5 streamed), instead of held in memory. The blocks follow the
// files' own layout (HDF5 chunks), so that a block is one or a few whole
// reads; a Pipeline reads them in a shuffled order through a shuffle buffer
// (data/stream_reader.hpp) on its prefetch thread.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "tensor/tensor.hpp"

namespace drun::data {

// Rows [begin, end) of the data set; every block lies within one file.
struct RowBlock {
  int64_t begin = 0;
  int64_t end = 0;
};

class RowSource {
 public:
  virtual ~RowSource() = default;

  virtual int64_t size() const = 0;
  // One example's shape, e.g. (28, 28, 1).
  virtual Shape example_shape() const = 0;
  // How rows arrive in memory: DType::u8 (bytes, converted per batch) or DType::f32.
  virtual DType dtype() const = 0;
  // The data set cut into consecutive blocks, in file order, covering 0..size().
  virtual const std::vector<RowBlock>& blocks() const = 0;
  // Reads rows [begin, end), which lie within one file, into dst (row_bytes()
  // each). Thread-safe; throws UsageError naming the file and dataset.
  virtual void read(int64_t begin, int64_t end, void* dst) const = 0;

  size_t row_bytes() const {
    return static_cast<size_t>(example_shape().numel()) * dtype_size(dtype());
  }
};

}  // namespace drun::data
