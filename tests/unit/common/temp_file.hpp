// A temporary file with the given text, and a temporary directory's path,
// each removed with the object.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace drun::testing {

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        (std::filesystem::temp_directory_path() /
         ("drun_test_" + std::string(info->name()) + "_" + std::to_string(std::random_device{}())))
            .string();
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::filesystem::remove(path_); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// A path under the temporary directory, not created (a fit makes its
// model_dir), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        (std::filesystem::temp_directory_path() /
         ("drun_dir_" + std::string(info->name()) + "_" + std::to_string(std::random_device{}())))
            .string();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace drun::testing
