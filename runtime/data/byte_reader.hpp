// ByteReader: reads a file that is either gzip-compressed or raw, as one stream
// of bytes. zlib decides by the magic bytes 1f 8b (never by the file name), so
// `train-images-idx3-ubyte` may be compressed and `x.gz` may be raw. Like gzip
// itself, zlib reads concatenated gzip members as one stream and ignores
// non-gzip bytes after the last member; garbage inside the data is the
// format reader's to find.
#pragma once
#include <zlib.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace drun::data {

class ByteReader {
 public:
  // Throws UsageError naming the path when it is missing, a folder or unreadable.
  explicit ByteReader(std::string path);

  // Reads up to n bytes; returns fewer only at the end of the data. A corrupt
  // or cut-off gzip stream is a UsageError naming the path.
  size_t read(void* dst, size_t n);
  // Reads the rest of the stream and returns how many bytes were left.
  uint64_t skip_rest();

  bool compressed() const { return compressed_; }
  // The most bytes the stream can hold: the file's size, or deflate's
  // largest ratio (1032:1) of it when compressed. A header that claims more
  // is corrupt, found before anything that size is allocated.
  uint64_t most_bytes() const;
  const std::string& path() const { return path_; }

 private:
  struct Close {
    void operator()(gzFile f) const { gzclose(f); }
  };
  std::string path_;
  std::unique_ptr<gzFile_s, Close> file_;
  bool compressed_ = false;
};

}  // namespace drun::data
