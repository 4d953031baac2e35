// Opening one numeric dataset of an HDF5 file for data.hdf5, with the checks
// every reader of it shares: it exists (else the file's top-level names are
// listed), is a dataset, holds numbers, and is an array of examples.
#pragma once
#include <string>
#include <vector>

#include "io/h5.hpp"

namespace drun::data {

struct Hdf5Set {
  io::h5::Handle data, type, space;
  std::vector<hsize_t> dims;  // dims[0]: examples
  bool integer = false;       // an integer type (else floating point)
  bool bytes = false;         // uint8
  std::string where;          // "data.hdf5: FILE dataset 'NAME'", to prefix messages
};

// Throws UsageError naming the file and the dataset.
Hdf5Set open_hdf5_set(const io::h5::File& file, const std::string& name);

}  // namespace drun::data
