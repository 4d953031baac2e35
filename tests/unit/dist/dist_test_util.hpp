// Helpers for the dist tests: a temporary file that removes itself, and a
// check that a call throws UsageError whose message says what it should.
#pragma once
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "base/options.hpp"

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

// Runs f, expecting a UsageError whose message contains every one of `parts`.
template <class F>
void expect_usage_error(F&& f, std::initializer_list<std::string> parts) {
  try {
    f();
    ADD_FAILURE() << "no UsageError thrown";
  } catch (const UsageError& e) {
    for (const std::string& p : parts)
      EXPECT_NE(std::string(e.what()).find(p), std::string::npos)
          << "message '" << e.what() << "' lacks '" << p << "'";
  }
}

}  // namespace drun::dist::testing
