// Gzip-or-raw file reading over zlib's gz* API, with errors a user can act on.
#include "data/byte_reader.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>

#include "base/options.hpp"

namespace drun::data {

ByteReader::ByteReader(std::string path) : path_(std::move(path)) {
  std::error_code ec;
  auto status = std::filesystem::status(path_, ec);
  if (!std::filesystem::exists(status)) throw UsageError(path_ + ": no such file");
  if (std::filesystem::is_directory(status))
    throw UsageError(path_ + ": is a folder, expected a file");
  errno = 0;
  file_.reset(gzopen(path_.c_str(), "rb"));
  if (!file_)
    throw UsageError(
        path_ + ": cannot open: " + (errno ? std::strerror(errno) : std::string("out of memory")));
  // Large reads dominate (tens of MB of pixels); a bigger buffer halves the calls.
  gzbuffer(file_.get(), 1 << 20);
  // Right after gzopen, gzdirect() reads the first bytes to look for the magic.
  compressed_ = gzdirect(file_.get()) == 0;
}

uint64_t ByteReader::most_bytes() const {
  std::error_code ec;
  const uint64_t size = std::filesystem::file_size(path_, ec);
  if (ec) return UINT64_MAX;  // not a regular file (a pipe): unknown
  return compressed_ ? size * 1032 : size;
}

size_t ByteReader::read(void* dst, size_t n) {
  auto* out = static_cast<unsigned char*>(dst);
  size_t done = 0;
  while (done < n) {
    // gzread takes an unsigned count and returns an int: read in chunks below INT_MAX.
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
    int got = gzread(file_.get(), out + done, chunk);
    int errnum = Z_OK;
    const char* msg = gzerror(file_.get(), &errnum);
    if (got < 0 || (errnum != Z_OK && errnum != Z_BUF_ERROR))
      throw UsageError(path_ + ": corrupt gzip stream (" + (msg ? msg : "unknown error") + ")");
    if (errnum == Z_BUF_ERROR)
      throw UsageError(path_ + ": gzip stream is cut off (compressed data ends unexpectedly)");
    if (got == 0) break;
    done += static_cast<size_t>(got);
  }
  return done;
}

uint64_t ByteReader::skip_rest() {
  unsigned char buf[1 << 14];
  uint64_t total = 0;
  for (size_t got; (got = read(buf, sizeof buf)) > 0;) total += got;
  return total;
}

}  // namespace drun::data
