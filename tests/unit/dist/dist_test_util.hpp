// Helpers for the dist tests: a temporary file that removes itself, and a
// check that a call throws UsageError whose message says what it should.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "base/options.hpp"
#include "usage_error.hpp"

namespace drun::dist::testing {

class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ =
        (std::filesystem::temp_directory_path() /
         ("drun_dist_" + std::string(info->name()) + "_" + std::to_string(std::random_device{}())))
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

using drun::testing::expect_usage_error;

}  // namespace drun::dist::testing
