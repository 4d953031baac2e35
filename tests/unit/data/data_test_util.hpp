// Helpers for the data tests: a temporary folder that cleans up after itself,
// and writers for small idx and text files, raw or gzipped.
#pragma once
#include <gtest/gtest.h>
#include <zlib.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/options.hpp"

namespace drun::data::testing {

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() /
            ("drun_data_" + std::string(info->test_suite_name()) + "_" + info->name() + "_" +
             std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

using Bytes = std::vector<unsigned char>;

inline void put_be32(Bytes& b, uint32_t v) {
  for (int s = 24; s >= 0; s -= 8) b.push_back(static_cast<unsigned char>(v >> s));
}

// An idx header: 0, 0, type, rank, then the dims.
inline Bytes idx_header(unsigned char type, const std::vector<uint32_t>& dims) {
  Bytes b = {0, 0, type, static_cast<unsigned char>(dims.size())};
  for (uint32_t d : dims) put_be32(b, d);
  return b;
}

// An idx file of unsigned bytes with the given dims and data.
inline Bytes idx_u8(const std::vector<uint32_t>& dims, const Bytes& data) {
  Bytes b = idx_header(0x08, dims);
  b.insert(b.end(), data.begin(), data.end());
  return b;
}

inline void write_raw(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  if (!out) throw std::runtime_error("cannot write " + path);
}

inline void write_gz(const std::string& path, const Bytes& b) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (!f) throw std::runtime_error("cannot write " + path);
  if (!b.empty()) gzwrite(f, b.data(), static_cast<unsigned>(b.size()));
  gzclose(f);
}

inline Bytes read_raw(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// EXPECT_TRUE(contains(message, "part")) prints the whole message when it fails.
inline ::testing::AssertionResult contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The message of the UsageError that f() throws; "" (and a test failure) if none.
template <class F>
std::string usage_error(F&& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UsageError";
  return "";
}

}  // namespace drun::data::testing
