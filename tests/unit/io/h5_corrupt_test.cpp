// Datasets whose layout message lies about where or how large their raw data
// is (what tools/fuzz/fuzz_checkpoint found crashing inside H5Dread): reading
// them is a clear error naming the file and the dataset, never a wild read.
#include <gtest/gtest.h>
#include <hdf5.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "base/options.hpp"
#include "io/h5.hpp"

namespace drun::io::h5 {
namespace {

namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}
void spit(const fs::path& p, const std::string& bytes) {
  std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
}

// Replaces the one occurrence of `from` in the file's bytes by `to`.
void patch(const fs::path& p, const std::string& from, const std::string& to) {
  std::string bytes = slurp(p);
  const size_t at = bytes.find(from);
  ASSERT_NE(at, std::string::npos) << "pattern not in " << p;
  ASSERT_EQ(bytes.find(from, at + 1), std::string::npos) << "pattern twice in " << p;
  bytes.replace(at, from.size(), to);
  spit(p, bytes);
}

std::string le64(uint64_t v) {
  std::string s(8, '\0');
  for (int i = 0; i < 8; ++i) s[i] = static_cast<char>(v >> (8 * i));
  return s;
}

// A 4 x 4 float dataset "w" written the ordinary way (contiguous), or as a
// compact dataset (its 64 bytes inside the object header).
fs::path write_file(const std::string& name, bool compact) {
  const fs::path p = fs::path(::testing::TempDir()) / name;
  hsize_t dims[2] = {4, 4};
  float data[16];
  for (int i = 0; i < 16; ++i) data[i] = 0.5f + static_cast<float>(i);
  const hid_t file = H5Fcreate(p.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  const hid_t space = H5Screate_simple(2, dims, nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (compact) H5Pset_layout(dcpl, H5D_COMPACT);
  const hid_t set = H5Dcreate2(file, "w", H5T_IEEE_F32LE, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Dwrite(set, H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  H5Dclose(set);
  H5Pclose(dcpl);
  H5Sclose(space);
  H5Fclose(file);
  return p;
}

void expect_refused(const fs::path& p) {
  const File f = File::open(p.string());
  try {
    read_tensor(f, f.id(), "w");
    FAIL() << "read a corrupt dataset of " << p;
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(p.string()), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'w'"), std::string::npos) << e.what();
  }
}

TEST(H5Corrupt, IntactFilesReadBack) {
  for (const bool compact : {false, true}) {
    const fs::path p = write_file(compact ? "intact_compact.h5" : "intact.h5", compact);
    const File f = File::open(p.string());
    const Tensor t = read_tensor(f, f.id(), "w");
    ASSERT_EQ(t.numel(), 16);
    EXPECT_EQ(t.f32()[15], 15.5f);
  }
}

TEST(H5Corrupt, ContiguousDataBeyondTheEndOfTheFileIsRefused) {
  const fs::path p = write_file("contiguous.h5", false);
  uint64_t offset = 0;
  {
    const File f = File::open(p.string());
    const hid_t set = H5Dopen2(f.id(), "w", H5P_DEFAULT);
    offset = H5Dget_offset(set);
    H5Dclose(set);
  }
  // Layout message version 3, class 1 (contiguous), the data's address and
  // size (64 bytes): point the address past the end of the file.
  patch(p, std::string("\x03\x01", 2) + le64(offset) + le64(64),
        std::string("\x03\x01", 2) + le64(fs::file_size(p) + 4096) + le64(64));
  if (HasFatalFailure()) return;
  expect_refused(p);
}

TEST(H5Corrupt, CompactDataShorterThanItsExtentIsRefused) {
  const fs::path p = write_file("compact.h5", true);
  // Layout message version 3, class 0 (compact), size 64, then the 16 floats:
  // claim 8 bytes instead.
  const float first = 0.5f;
  std::string data(reinterpret_cast<const char*>(&first), sizeof first);
  patch(p, std::string("\x03\x00\x40\x00", 4) + data, std::string("\x03\x00\x08\x00", 4) + data);
  if (HasFatalFailure()) return;
  expect_refused(p);
}

}  // namespace
}  // namespace drun::io::h5
