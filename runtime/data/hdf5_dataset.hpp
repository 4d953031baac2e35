// drun.data.hdf5: x and y from two datasets of one or more HDF5 files, as h5py
// writes them (any rank; uint8, int8..64, uint16..64, float16/32/64), the
// files' examples one after the other. uint8 x stays bytes (converted per
// batch), other x becomes float32; an integer y with one value per example
// holds class ids, any other y float targets. y is always read whole (a few
// bytes per example). x is read whole into memory, or streamed: kept in the
// files and read a block of chunks at a time while training
// (data/hdf5_rows.hpp, data/stream_reader.hpp) -- by default when x would
// take more than kStreamAboveBytes of memory.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "data/dataset.hpp"

namespace drun::data {

struct Hdf5Source {
  enum class Stream { automatic, yes, no };
  std::vector<std::string> paths;  // the files
  std::string x, y;                // dataset paths in each, e.g. "images" or "train/x"
  Stream stream = Stream::automatic;
};

// automatic streams an x larger than this in memory (bytes for uint8 data,
// else 4 per value): a fixed size, not the machine's memory, so that the
// order of the examples (which streaming changes) is the same everywhere.
constexpr int64_t kStreamAboveBytes = int64_t{1} << 30;

Dataset load_hdf5(const Hdf5Source& source);

}  // namespace drun::data
