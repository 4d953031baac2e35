// NumPy's array files as numpy.save and numpy.savez(_compressed) write them
// (format versions 1.0 to 3.0): the magic "\x93NUMPY", a version, a header
// length, a Python dict literal {'descr': '<f4', 'fortran_order': False,
// 'shape': (N, ...)}, then the elements. A .npy file is memory-mapped: a
// uint8 array kept as bytes, or a little-endian float32 one, is used where
// it lies (pages come and go with the page cache, so an array larger than
// memory is fine); other types are converted. An .npz member is inflated into memory (zip
// members may be compressed). Every problem is a UsageError naming the file.
#pragma once
#include <string>

#include "tensor/tensor.hpp"

namespace drun::data {

// What an array becomes: float32 always (floats), or int32 where the file's
// type is an integer or boolean one (class ids), or uint8 where it is uint8
// (pixels, kept as stored: a quarter of float32's memory); float32 otherwise.
enum class NumpyAs { floats, class_ids, pixels };

// The array of a .npy file, or of member `member` (".npy" optional) of an
// .npz file when member is not empty. Types: bool, int8..64, uint8..64,
// float16/32/64, either byte order; C order.
Tensor read_numpy_array(const std::string& path, const std::string& member, NumpyAs as);

}  // namespace drun::data
