// Telling JPEG from PNG by their signatures: ImageNet, for one, has PNG and
// CMYK files named .JPEG, so the name alone would mislead.
#include "data/image_decode.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "base/options.hpp"
#include "data/image_codecs.hpp"

namespace drun::data {

namespace {

bool starts_with(std::span<const uint8_t> bytes, std::initializer_list<uint8_t> magic) {
  if (bytes.size() < magic.size()) return false;
  return std::equal(magic.begin(), magic.end(), bytes.begin());
}

}  // namespace

DecodedRegion decode_image(std::span<const uint8_t> bytes, const std::string& path,
                           const PlanDecode& plan) {
  if (starts_with(bytes, {0xFF, 0xD8, 0xFF})) return decode_jpeg(bytes, path, plan);
  if (starts_with(bytes, {0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}))
    return decode_png(bytes, path, plan);
  throw UsageError(path + ": not a JPEG or PNG image" +
                   (bytes.empty() ? std::string(" (empty file)") : std::string()));
}

std::vector<uint8_t> read_file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw UsageError(path + ": cannot open (" + std::strerror(errno) + ")");
  const auto size = static_cast<std::streamoff>(in.tellg());
  std::vector<uint8_t> bytes(static_cast<size_t>(size));
  in.seekg(0);
  if (size > 0 && !in.read(reinterpret_cast<char*>(bytes.data()), size))
    throw UsageError(path + ": read failed");
  return bytes;
}

}  // namespace drun::data
