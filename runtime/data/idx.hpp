// Readers for the idx format of MNIST and Fashion-MNIST (LeCun's "idx" files):
// two zero bytes, a type byte, a rank byte, rank big-endian uint32 dimensions,
// then the elements big-endian in row-major order. Files may be gzipped (found
// by magic bytes) or raw. Every problem is a UsageError naming the path.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/tensor.hpp"

namespace drun::data {

// Element type codes of the format.
enum class IdxType : uint8_t {
  u8 = 0x08,
  i8 = 0x09,
  i16 = 0x0B,
  i32 = 0x0C,
  f32 = 0x0D,
  f64 = 0x0E,
};

struct IdxArray {
  IdxType type = IdxType::u8;
  std::vector<int64_t> dims;  // as stored in the file
  Tensor values;              // dims, converted to the DType asked for
};

// Reads any idx file into `as` (f32, or i32 for integer element types only).
IdxArray read_idx(const std::string& path, DType as);

// Images of rank 3 (N, H, W) become float32 (N, H, W, 1); rank 4 (N, H, W, C)
// is kept. Values are the raw ones (0..255 for uint8), not scaled.
Tensor read_idx_images(const std::string& path);

// Labels of rank 1 and an integer type become int32 (N).
Tensor read_idx_labels(const std::string& path);

}  // namespace drun::data
