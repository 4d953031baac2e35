// What every fuzz target shares (docs/testing.md): the input as a file the
// reader under test opens by name, and the rule that a UsageError (the
// runtime's "bad input, clearly said") is the right answer to bad input,
// while any other exception, crash, leak or sanitizer report is a finding.
#pragma once
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "base/options.hpp"

namespace drun::fuzz {

// A directory of this process's own in memory (/dev/shm where there is one),
// removed at exit: the readers take paths, and a disk would slow every run.
inline const std::filesystem::path& scratch_dir() {
  static const std::filesystem::path dir = [] {
    const std::filesystem::path base = std::filesystem::is_directory("/dev/shm")
                                           ? "/dev/shm"
                                           : std::filesystem::temp_directory_path();
    auto d = base / ("drun-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(scratch_dir(), ec);
    });
    return d;
  }();
  return dir;
}

// Writes `size` bytes to scratch_dir()/name and returns its path.
inline std::string as_file(const std::string& name, const uint8_t* data, size_t size) {
  const std::string path = (scratch_dir() / name).string();
  std::ofstream(path, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return path;
}

// Runs f; a UsageError is the expected refusal of bad input.
template <class F>
void expect_clean(F&& f) {
  try {
    f();
  } catch (const UsageError&) {
  }
}

}  // namespace drun::fuzz
