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

// Reads any idx file into `as` (f32, or i32 for integer element types only;
// u8: bytes for a file of unsigned bytes, f32 for other types).
IdxArray read_idx(const std::string& path, DType as);

// Images of rank 3 (N, H, W) become (N, H, W, 1); rank 4 (N, H, W, C) is
// kept. Unsigned bytes stay uint8 (a quarter of float32's memory; the
// pipeline converts per batch), other types become float32. Values are the
// raw ones (0..255 for bytes), not scaled.
Tensor read_idx_images(const std::string& path);

// Labels of rank 1 and an integer type become int32 (N).
Tensor read_idx_labels(const std::string& path);

}  // namespace drun::data
