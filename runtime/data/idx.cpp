// idx parsing: header checks, chunked big-endian decoding, and the checks that
// the data is exactly as long as the dimensions say.
#include "data/idx.hpp"

#include <algorithm>
#include <array>
#include <cstring>
#include <initializer_list>

#include "base/options.hpp"
#include "data/byte_reader.hpp"

namespace drun::data {
namespace {

// Big-endian decoding by bytes, so it is right on little- and big-endian hosts.
uint32_t be32(const unsigned char* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

int element_bytes(uint8_t code) {
  switch (static_cast<IdxType>(code)) {
    case IdxType::u8:
    case IdxType::i8:
      return 1;
    case IdxType::i16:
      return 2;
    case IdxType::i32:
    case IdxType::f32:
      return 4;
    case IdxType::f64:
      return 8;
  }
  return 0;
}

const char* type_name(IdxType t) {
  switch (t) {
    case IdxType::u8:
      return "unsigned byte";
    case IdxType::i8:
      return "signed byte";
    case IdxType::i16:
      return "short";
    case IdxType::i32:
      return "int";
    case IdxType::f32:
      return "float";
    case IdxType::f64:
      return "double";
  }
  return "?";
}

std::string hex_magic(const unsigned char* m) {
  static const char* digits = "0123456789abcdef";
  std::string s = "0x";
  for (int i = 0; i < 4; ++i) {
    s += digits[m[i] >> 4];
    s += digits[m[i] & 15];
  }
  return s;
}

// Decodes `count` big-endian elements of type `t` into float or int32.
template <class Out>
void decode(IdxType t, const unsigned char* in, int64_t count, Out* out) {
  for (int64_t i = 0; i < count; ++i) {
    switch (t) {
      case IdxType::u8:
        out[i] = static_cast<Out>(in[i]);
        break;
      case IdxType::i8:
        out[i] = static_cast<Out>(static_cast<int8_t>(in[i]));
        break;
      case IdxType::i16: {
        const unsigned char* p = in + 2 * i;
        out[i] = static_cast<Out>(static_cast<int16_t>((p[0] << 8) | p[1]));
        break;
      }
      case IdxType::i32:
        out[i] = static_cast<Out>(static_cast<int32_t>(be32(in + 4 * i)));
        break;
      case IdxType::f32: {
        uint32_t bits = be32(in + 4 * i);
        float f;
        std::memcpy(&f, &bits, 4);
        out[i] = static_cast<Out>(f);
        break;
      }
      case IdxType::f64: {
        const unsigned char* p = in + 8 * i;
        uint64_t bits = (uint64_t{be32(p)} << 32) | be32(p + 4);
        double d;
        std::memcpy(&d, &bits, 8);
        out[i] = static_cast<Out>(d);
        break;
      }
    }
  }
}

// Reads the file; `ranks_ok` (empty = any) is checked before the data is read,
// so a labels file given as images fails at once, with `expect` in the message.
// `as` u8 keeps a file of unsigned bytes as bytes and converts others to f32.
IdxArray read_checked(const std::string& path, DType as, std::initializer_list<int> ranks_ok,
                      const char* expect) {
  ByteReader in(path);
  unsigned char magic[4];
  size_t got = in.read(magic, 4);
  if (got < 4)
    throw UsageError(path + ": not an idx file (only " + std::to_string(got) +
                     " bytes, the header alone is 4)");
  int width = element_bytes(magic[2]);
  if (magic[0] != 0 || magic[1] != 0 || width == 0 || magic[3] == 0)
    throw UsageError(path + ": not an idx file (bad magic " + hex_magic(magic) +
                     "; expected 0x000008NN for unsigned bytes, e.g. 0x00000803 for images)");
  IdxArray arr;
  arr.type = static_cast<IdxType>(magic[2]);
  int rank = magic[3];
  if (rank > Shape::kMaxRank - 1)
    throw UsageError(path + ": idx rank " + std::to_string(rank) + " is more than drun holds (" +
                     std::to_string(Shape::kMaxRank - 1) + ")");
  bool rank_ok = ranks_ok.size() == 0;
  for (int r : ranks_ok) rank_ok = rank_ok || r == rank;
  if (!rank_ok)
    throw UsageError(path + ": expected " + expect + ", found an idx file of rank " +
                     std::to_string(rank) + " (magic " + hex_magic(magic) + ")");
  if (as == DType::i32 && (arr.type == IdxType::f32 || arr.type == IdxType::f64))
    throw UsageError(path + ": holds " + type_name(arr.type) + " elements, expected integers");

  std::array<unsigned char, 4 * Shape::kMaxRank> header{};
  got = in.read(header.data(), 4 * static_cast<size_t>(rank));
  if (got < 4 * static_cast<size_t>(rank))
    throw UsageError(path + ": truncated in the header (rank " + std::to_string(rank) + " needs " +
                     std::to_string(4 * rank) + " bytes of dimensions)");
  // 2^40 elements is far beyond any data set held in memory; it stops overflow.
  constexpr int64_t kMaxElements = int64_t{1} << 40;
  int64_t count = 1;
  for (int i = 0; i < rank; ++i) {
    arr.dims.push_back(be32(header.data() + 4 * i));
    // Checked before multiplying: 2^40 times a 32-bit dimension overflows
    // int64 (found by tools/fuzz/fuzz_idx).
    const int64_t d = arr.dims.back();
    if (d != 0 && count > kMaxElements / d)
      throw UsageError(path + ": dimensions are too large to be real (corrupt header?)");
    count *= d;
  }

  if (as == DType::u8 && arr.type != IdxType::u8) as = DType::f32;
  const uint64_t want = static_cast<uint64_t>(count) * static_cast<uint64_t>(width);
  if (want > in.most_bytes())
    throw UsageError(path + ": truncated: dimensions " + Shape(arr.dims).str() + " of " +
                     type_name(arr.type) + " need " + std::to_string(want) +
                     " data bytes, more than the file can hold (corrupt header?)");
  arr.values = Tensor(Shape(arr.dims), as);
  // Decoded in chunks so the raw bytes never need a second full-size buffer.
  constexpr int64_t kChunk = 1 << 16;
  std::vector<unsigned char> buf(static_cast<size_t>(kChunk * width));
  for (int64_t done = 0; done < count;) {
    int64_t n = std::min(kChunk, count - done);
    size_t bytes = static_cast<size_t>(n * width);
    got = in.read(buf.data(), bytes);
    if (got < bytes) {
      uint64_t have = static_cast<uint64_t>(done * width) + got;
      throw UsageError(path + ": truncated: dimensions " + Shape(arr.dims).str() + " of " +
                       type_name(arr.type) + " need " + std::to_string(want) +
                       " data bytes, the file has " + std::to_string(have));
    }
    if (as == DType::f32)
      decode(arr.type, buf.data(), n, arr.values.f32() + done);
    else if (as == DType::u8)
      std::memcpy(arr.values.u8() + done, buf.data(), static_cast<size_t>(n));
    else
      decode(arr.type, buf.data(), n, arr.values.i32() + done);
    done += n;
  }
  // Reading to the end also makes zlib check the gzip CRC of everything above.
  if (uint64_t extra = in.skip_rest())
    throw UsageError(path + ": " + std::to_string(extra) +
                     " bytes of trailing garbage after the data (dimensions " +
                     Shape(arr.dims).str() + " need " + std::to_string(want) + " bytes)");
  return arr;
}

}  // namespace

IdxArray read_idx(const std::string& path, DType as) {
  return read_checked(path, as, {}, "");
}

Tensor read_idx_images(const std::string& path) {
  IdxArray arr = read_checked(path, DType::u8, {3, 4}, "images of rank 3 (N, H, W)");
  if (arr.dims.size() == 4) return arr.values;
  return arr.values.reshaped({arr.dims[0], arr.dims[1], arr.dims[2], 1});
}

Tensor read_idx_labels(const std::string& path) {
  return read_checked(path, DType::i32, {1}, "labels of rank 1 (N)").values;
}

}  // namespace drun::data
