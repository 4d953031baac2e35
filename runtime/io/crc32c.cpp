// Table-driven CRC-32C, one byte per step: event files are small, so speed
// does not justify slicing-by-8 or the SSE4.2 instruction.
#include "io/crc32c.hpp"

#include <array>

namespace drun::io {

namespace {

constexpr std::array<uint32_t, 256> make_table() {
  std::array<uint32_t, 256> table{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    table[i] = c;
  }
  return table;
}

// Built at compile time, so it is constant data rather than global state.
constexpr std::array<uint32_t, 256> kTable = make_table();

}  // namespace

uint32_t crc32c(const void* data, size_t size) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint32_t crc = 0xFFFFFFFFu;
  for (size_t i = 0; i < size; ++i) crc = kTable[(crc ^ p[i]) & 0xFF] ^ (crc >> 8);
  return crc ^ 0xFFFFFFFFu;
}

}  // namespace drun::io
