// drun.data.hdf5: x and y from two datasets of an HDF5 file, as h5py writes
// them (any rank; uint8, int8..64, uint16..64, float16/32/64). uint8 x stays
// bytes (converted per batch), other x becomes float32; an integer y with
// one value per example holds class ids, any other y float targets. The
// arrays are read whole into memory (HDF5 converts the types while reading).
#pragma once
#include <string>

#include "data/dataset.hpp"

namespace drun::data {

struct Hdf5Source {
  std::string path;  // the file
  std::string x, y;  // dataset paths in it, e.g. "images" or "train/x"
};

Dataset load_hdf5(const Hdf5Source& source);

}  // namespace drun::data
